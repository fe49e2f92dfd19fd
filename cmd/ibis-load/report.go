package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ibisgo/ibis/ipl"
)

// result is the receiver's report of a run.
type result struct {
	Impl            string           `json:"impl"`
	NioReceive      string           `json:"nio_receive,omitempty"`
	Senders         int              `json:"senders"`
	Ports           int              `json:"ports_per_sender"`
	Messages        int64            `json:"messages_per_port"`
	Values          int              `json:"values_per_message"`
	OneByOne        bool             `json:"one_by_one"`
	ConsumeDelay    string           `json:"consume_delay"`
	ConsumeEvery    int              `json:"consume_every"`
	ConsumeSpin     bool             `json:"consume_spin"`
	Expected        int64            `json:"expected"`
	Received        int64            `json:"received"`
	Lost            int64            `json:"lost"`
	OutOfOrder      int64            `json:"out_of_order"`
	Duplicates      int64            `json:"duplicates"`
	Corrupt         int64            `json:"corrupt"`
	Seconds         float64          `json:"seconds"`
	ConsumeSeconds  float64          `json:"consume_seconds"`
	MsgsPerSec      float64          `json:"msgs_per_s"`
	MBPerSec        float64          `json:"mb_per_s"`
	Bytes           int64            `json:"bytes"`
	ReceiverPeakRSS int64            `json:"receiver_peak_rss"`
	SenderPeakRSS   map[string]int64 `json:"sender_peak_rss"`
	OK              bool             `json:"ok"`
}

// result builds the report from the consumer's account.
func (c *consumer) result(ib ipl.Ibis, s *settings) *result {
	t := c.t
	r := &result{
		Impl: ib.Implementation(), Senders: len(t.senders), Ports: s.ports, Messages: s.messages,
		Values: s.values, OneByOne: s.oneByOne, ConsumeDelay: s.consumeDelay.String(), ConsumeEvery: s.consumeEvery,
		ConsumeSpin: s.consumeSpin,
		Expected:    t.expected(), Received: t.received, Lost: t.lost(), OutOfOrder: t.reordered,
		Duplicates: t.duplicates, Corrupt: t.corrupt, ConsumeSeconds: c.slept.Seconds(), Bytes: c.bytes,
		ReceiverPeakRSS: peakRSS(), SenderPeakRSS: t.senderPeaks(), OK: t.ok(),
	}
	if r.Impl == "nio" {
		r.NioReceive = s.nioReceive()
		if r.NioReceive == "" {
			r.NioReceive = "default"
		}
	}
	if !c.first.IsZero() && c.last.After(c.first) {
		r.Seconds = c.last.Sub(c.first).Seconds()
		r.MsgsPerSec = float64(c.data) / r.Seconds
		r.MBPerSec = float64(c.bytes) / r.Seconds / 1e6
	}
	return r
}

// print writes the human line and, when asked, the JSON line.
func (r *result) print(w io.Writer, asJSON bool) {
	impl := r.Impl
	if r.NioReceive != "" {
		impl += " nio.receive=" + r.NioReceive
	}
	layout := "array"
	if r.OneByOne {
		layout = "one by one"
	}
	pause := "sleep"
	if r.ConsumeSpin {
		pause = "spin"
	}
	verdict := "OK"
	if !r.OK {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "ibis-load %s: %s: %d senders x %d ports x %d messages x %d values (%s), consume delay %s (%s) every %d: "+
		"received %d of %d, lost %d, out of order %d, duplicates %d, corrupt %d; "+
		"%.2f s (%.2f s consume delay), %.0f msgs/s, %.1f MB/s; receiver peak RSS %s, senders' peak RSS %s\n",
		verdict, impl, r.Senders, r.Ports, r.Messages, r.Values, layout, r.ConsumeDelay, pause, r.ConsumeEvery,
		r.Received, r.Expected, r.Lost, r.OutOfOrder, r.Duplicates, r.Corrupt,
		r.Seconds, r.ConsumeSeconds, r.MsgsPerSec, r.MBPerSec, mib(r.ReceiverPeakRSS), peaks(r.SenderPeakRSS))
	if asJSON {
		b, err := json.Marshal(r)
		if err != nil { // cannot happen: the fields are plain values
			panic(err)
		}
		fmt.Fprintf(w, "%s\n", b)
	}
}

// peaks summarises the senders' peak RSS: the smallest and the largest.
func peaks(p map[string]int64) string {
	if len(p) == 0 {
		return "unknown"
	}
	v := slices.Sorted(maps.Values(p))
	if v[0] == v[len(v)-1] {
		return mib(v[0])
	}
	return strings.Join([]string{mib(v[0]), mib(v[len(v)-1])}, " to ")
}

// mib prints a byte count in MiB ("?" when unknown).
func mib(b int64) string {
	if b < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
