package core

import "fmt"

// fitLimit sets the writer's message limit for the connections the next message goes
// to: the port's own (the Ibis's MaxMessageSize) or, where a receiver takes less, the
// least of theirs. A message one receiver would refuse then fails at the write with
// ipl.ErrTooLarge naming that receiver, instead of reaching the receiver and costing
// the connection (and with it every message still in flight on it). The caller holds
// the port's token; msgConns is the new message's view.
func (sp *SendPort) fitLimit() {
	limit := sp.in.cfg.MaxMessageSize
	var least *sendConn
	for _, oc := range sp.msgConns {
		if oc.maxMessage > 0 && oc.maxMessage < limit {
			limit, least = oc.maxMessage, oc
		}
	}
	if limit == sp.msgLimit && least == sp.msgLimitBy {
		return
	}
	sp.msgLimit, sp.msgLimitBy = limit, least
	by := ""
	if least != nil {
		by = fmt.Sprintf("the most receive port %s takes", least.to)
	}
	sp.w.SetMaxMessageSize(limit, by)
}
