package main

import (
	"fmt"
	"math"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/ipl"
)

func snapValues(s memSnap) map[string]any {
	return map[string]any{"goroutines": s.Goroutines, "rss_bytes": s.RSS, "hwm_bytes": s.HWM,
		"heap_inuse_bytes": s.HeapInuse, "stack_inuse_bytes": s.StackInuse}
}

// perValues is a memPer for JSON; NaN (unknown) becomes nil.
func perValues(p memPer) map[string]any {
	num := func(x float64) any {
		if math.IsNaN(x) {
			return nil
		}
		return x
	}
	return map[string]any{"goroutines": p.Goroutines, "rss_kib": num(p.RSS), "hwm_kib": num(p.HWM),
		"heap_inuse_kib": p.Heap, "stack_kib": p.Stack}
}

func m2oReport(about string, pt ipl.PortType, r *m2oResult) *report.Report {
	lo, med, hi := quantiles(r.perConn)
	speed := &report.Table{
		Title:   "manytoone: messages per second at the one receive port; " + about,
		Columns: []string{"connections", "sender processes", "payload (B)", "messages/s while all send", "payload MB/s", "µs per message", "per connection min / median / max", "overall messages/s incl. drain", "receiver CPU per message"},
		Notes: []string{
			fmt.Sprintf("port type %s (no receiveport.*/sendport.* capability: the forced flavours apply)", pt),
			"each connection is a send port of its own; a sender process has one Ibis instance and a goroutine per send port sending as fast as it can; the receiver is one goroutine doing an explicit Receive, reading a kind byte, the connection's int32 index and the []byte payload (ReadArray)",
			fmt.Sprintf("messages/s while all send: counted at the receiver in a window of %v after a warm-up of a fifth of -duration, while every sender sends (the senders share the machine's cores with the receiver); per connection: the messages of each connection in that window", r.window.Round(time.Millisecond)),
			fmt.Sprintf("overall incl. drain: all %d data messages (as many as the senders sent) over the time from the start of the traffic to the last end message; it includes draining what the socket buffers held after the senders stopped", r.received),
			drainNote(r),
			"receiver CPU per message: the receiver process's CPU time (user and system, every goroutine and event loop of it) over the window divided by the messages in it; less sensitive to the senders' share of the cores than messages/s",
			fmt.Sprintf("opening the %d connections (and a hello on each) took %v; RLIMIT_NOFILE in the receiver: %d", r.conns, r.connectTime.Round(time.Millisecond), r.fdLimit),
		},
	}
	speed.AddRow(r.conns, r.procs, r.size, r.rate, r.rate*float64(r.size)/1e6, seconds(1/r.rate), fmt.Sprintf("%d / %d / %d", lo, med, hi), r.overall, r.cpuPerMessage)

	mem := &report.Table{
		Title:   "manytoone: the receiver process, goroutines and memory",
		Columns: []string{"state", "goroutines", "VmRSS (KiB)", "peak VmHWM (KiB)", "Go heap in use (KiB)", "Go stacks (KiB)"},
		Notes: []string{
			"measured inside the receiver process after runtime.GC and debug.FreeOSMemory; VmRSS and VmHWM (the peak so far) from /proc/self/status, heap and stacks from runtime.MemStats (HeapInuse, StackInuse)",
			"per connection: (state - baseline) / connections, the baseline being the receiving instance with its port and no sender, in the same process; the peak is counted from the baseline's VmRSS",
			"under load: taken at the first message after the measuring window, while the senders still send",
			"kernel socket buffers are not in VmRSS",
		},
	}
	row := func(name string, s memSnap) {
		mem.AddRow(name, s.Goroutines, kib(s.RSS), kib(s.HWM), kib(s.HeapInuse), kib(s.StackInuse))
	}
	per := func(name string, s memSnap) memPer {
		p := perConn(s, r.base, r.conns)
		mem.AddRow(name, p.Goroutines, p.RSS, p.HWM, p.Heap, p.Stack)
		return p
	}
	row("process before the receiving instance", r.before)
	row("baseline: receiving instance and port, no sender", r.base)
	row(fmt.Sprintf("%d connections open, idle (one hello each)", r.conns), r.connected)
	row(fmt.Sprintf("%d connections open, under load", r.conns), r.load)
	row(fmt.Sprintf("%d connections open, after the traffic", r.conns), r.traffic)
	idle := per("per connection, idle", r.connected)
	load := per("per connection, under load", r.load)
	after := per("per connection, after the traffic", r.traffic)

	rep := report.New("manytoone")
	rep.Tables = append(rep.Tables, speed, mem)
	rep.Set("connections", r.conns)
	rep.Set("sender_processes", r.procs)
	rep.Set("payload_bytes", r.size)
	rep.Set("messages_per_second", r.rate)
	rep.Set("overall_messages_per_second", r.overall)
	rep.Set("receiver_cpu_seconds_per_message", r.cpuPerMessage.Seconds())
	rep.Set("messages_in_window", r.counted)
	rep.Set("window_seconds", r.window.Seconds())
	rep.Set("messages_received", r.received)
	rep.Set("per_connection_in_window", map[string]any{"min": lo, "median": med, "max": hi})
	rep.Set("connect_seconds", r.connectTime.Seconds())
	rep.Set("fd_limit", r.fdLimit)
	rep.Set("snapshots", map[string]any{"before": snapValues(r.before), "baseline": snapValues(r.base),
		"connected": snapValues(r.connected), "under_load": snapValues(r.load), "after_traffic": snapValues(r.traffic)})
	rep.Set("per_connection", map[string]any{"idle": perValues(idle), "under_load": perValues(load), "after_traffic": perValues(after)})
	return rep
}

// drainNote says why the two rates differ: the window held only part of the messages, and
// once the senders stop the receiver has the cores to itself and drains what the socket
// buffers (and nio's inboxes) hold much faster than it received while competing with them.
func drainNote(r *m2oResult) string {
	share := 0.0
	if r.received > 0 {
		share = 100 * float64(r.counted) / float64(r.received)
	}
	return fmt.Sprintf("the two rates differ by %.1fx: the window held %d of the %d messages (%.0f%%); the rest came in the warm-up and in the drain after the senders stopped, when the receiver no longer shares the cores with them. Compare receivers by messages/s while all send, or by CPU per message",
		r.overall/r.rate, r.counted, r.received, share)
}
