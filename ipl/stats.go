package ipl

// PortStats counts what a port has done since it was created, as the Java Ibis's
// management properties do: for monitoring a running program and for telling where its
// messages go, without timing anything. Read it with SendPort.Stats or ReceivePort.Stats.
type PortStats struct {
	// Messages finished at the port (sent whole to at least one receiver; received and
	// finished) and their Bytes, headers included (what Finish returned).
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// Connections made (Connect at a send port; senders accepted at a receive port),
	// ended cleanly (Disconnect, Close, the peer's goodbye) and lost (broken, or the
	// peer died).
	ConnectionsMade   int64 `json:"connections_made"`
	ConnectionsClosed int64 `json:"connections_closed"`
	ConnectionsLost   int64 `json:"connections_lost"`
	// Of the connections made, those that took another route than a direct dial
	// (docs/GRIDS.md): Reversed, opened by the receiving side at the sender's request,
	// because the sender could not dial it; Relayed, through a hub, because neither side
	// could dial the other. Both ends of a connection count it.
	ConnectionsReversed int64 `json:"connections_reversed"`
	ConnectionsRelayed  int64 `json:"connections_relayed"`
}
