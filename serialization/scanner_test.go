package serialization

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// scanMark is an event of a Scanner at a position of the stream.
type scanMark struct {
	pos int
	ev  ScanEvent
}

// scanAll feeds data to a Scanner in the pieces cuts gives (each byte of cuts is the
// length of the next piece, 0 meaning an empty one; the rest comes whole) and returns
// the events with their positions and the Scanner.
func scanAll(t testing.TB, data, cuts []byte, opts ...ReaderOption) ([]scanMark, *Scanner) {
	s := NewScanner(opts...)
	var marks []scanMark
	pos := 0
	feed := func(p []byte) {
		for first := true; first || len(p) > 0; first = false {
			n, ev := s.Feed(p)
			if n < 0 || n > len(p) || (n == 0 && len(p) > 0) {
				t.Fatalf("Feed of %d bytes consumed %d", len(p), n)
			}
			pos += n
			p = p[n:]
			if ev != 0 {
				marks = append(marks, scanMark{pos, ev})
			}
		}
	}
	for _, c := range cuts {
		k := min(int(c), len(data))
		feed(data[:k])
		data = data[k:]
	}
	feed(data)
	return marks, &s
}

// readerVerdict reads data as whole messages (Next and Finish) with a Reader and
// returns where each message ended and the error that stopped it.
func readerVerdict(data []byte, opts ...ReaderOption) (ends []int, err error) {
	r := NewReader(KindData, bytes.NewReader(data), opts...)
	pos := 0
	for {
		if err = r.Next(); err != nil {
			return ends, err
		}
		if err = r.Finish(); err != nil {
			return ends, err
		}
		pos += int(r.Count())
		ends = append(ends, pos)
	}
}

// checkScan checks what a Scanner makes of data against a Reader with the same
// options, and that cutting the stream into pieces changes nothing.
func checkScan(t *testing.T, data, cuts []byte, opts ...ReaderOption) {
	whole, s := scanAll(t, data, nil, opts...)
	cut, s2 := scanAll(t, data, cuts, opts...)
	if fmt.Sprint(whole) != fmt.Sprint(cut) {
		t.Fatalf("events differ with cuts %v:\nwhole %v\ncut   %v", cuts, whole, cut)
	}
	if fmt.Sprint(s.Err()) != fmt.Sprint(s2.Err()) || s.Mid() != s2.Mid() {
		t.Fatalf("verdicts differ with cuts %v: %v (mid %v) against %v (mid %v)", cuts, s.Err(), s.Mid(), s2.Err(), s2.Mid())
	}
	// Each message starts once, at or before its end; a stop comes last.
	var ends []int
	started := false
	for i, m := range whole {
		if m.ev&ScanStop != 0 && (i != len(whole)-1 || m.ev != ScanStop || s.Err() == nil) {
			t.Fatalf("stop %v is not alone and last in %v (err %v)", m, whole, s.Err())
		}
		if m.ev&ScanStart != 0 {
			if started {
				t.Fatalf("a message started twice: %v", whole)
			}
			started = true
		}
		if m.ev&ScanEnd != 0 {
			if !started {
				t.Fatalf("a message ended without a start: %v", whole)
			}
			started = false
			ends = append(ends, m.pos)
		}
	}
	rEnds, rErr := readerVerdict(data, opts...)
	// The Reader also checks padding, which the Scanner does not read: it may stop
	// at a message the Scanner let pass.
	padding := rErr != nil && strings.Contains(rErr.Error(), "padding is not zero")
	if len(rEnds) > len(ends) || fmt.Sprint(rEnds) != fmt.Sprint(ends[:len(rEnds)]) ||
		(!padding && len(rEnds) != len(ends)) {
		t.Fatalf("message ends: scanner %v, reader %v (reader stopped by %v)", ends, rEnds, rErr)
	}
	switch {
	case padding:
	case rErr == io.EOF:
		if s.Err() != nil || s.Mid() {
			t.Fatalf("the reader ended cleanly, the scanner says %v (mid %v)", s.Err(), s.Mid())
		}
	case strings.Contains(rErr.Error(), "truncated"):
		if s.Err() != nil || !s.Mid() {
			t.Fatalf("the reader found a truncated message (%v), the scanner says %v (mid %v)", rErr, s.Err(), s.Mid())
		}
	default:
		if s.Err() == nil || s.Err().Error() != rErr.Error() {
			t.Fatalf("the reader stopped with %v, the scanner with %v", rErr, s.Err())
		}
		if errors.Is(rErr, ErrClosedByPeer) != errors.Is(s.Err(), ErrClosedByPeer) {
			t.Fatalf("sentinels differ: reader %v, scanner %v", rErr, s.Err())
		}
	}
}

// FuzzScanner feeds random streams to a Scanner in random pieces: it must never
// panic, cutting must change neither its events nor its verdict, and it must agree
// with a Reader on message boundaries and on the error at a header.
func FuzzScanner(f *testing.F) {
	for _, s := range seedStreams(f) {
		f.Add(s, []byte{1, 31, 32, 33, 0, 7})
	}
	f.Add([]byte{}, []byte{})
	f.Add(append(packet(0, [numSections]uint32{}), packet(FlagClose, [numSections]uint32{})...), []byte{40})
	f.Add(append(packet(FlagEnd|FlagBulk, [numSections]uint32{secI8: 3}, 1, 2, 3, 0, 0, 0, 0, 0),
		packet(FlagClose, [numSections]uint32{})...), []byte{32, 1, 1})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		checkScan(t, data, cuts, fuzzReaderOpts...)
	})
}

func TestScannerAgreesWithReader(t *testing.T) {
	valid, mod := corruptible()
	big := packet(FlagEnd, [numSections]uint32{secI8: 5000})
	streams := map[string][]byte{
		"bad magic":           mod(0, 0x42),
		"bad order":           mod(1, 2),
		"unknown flag":        mod(2, 0x09),
		"reserved byte":       mod(5, 1),
		"bulk of two types":   packet(FlagBulk|FlagEnd, [numSections]uint32{secI8: 8, secI16: 4}, make([]byte, 16)...),
		"close with body":     packet(FlagClose, [numSections]uint32{secI8: 1}, make([]byte, 8)...),
		"close in a message":  append(packet(0, [numSections]uint32{}), packet(FlagClose, [numSections]uint32{})...),
		"goodbye":             append(bytes.Clone(valid), packet(FlagClose, [numSections]uint32{})...),
		"packet too large":    append(bytes.Clone(valid), big...),
		"message too large":   bytes.Repeat(packet(0, [numSections]uint32{secI8: 4000}, make([]byte, 4000)...), 300),
		"truncated":           append(bytes.Clone(valid), valid[:40]...),
		"bulk start":          packet(FlagBulk|FlagEnd, [numSections]uint32{secI64: 3}, make([]byte, 24)...),
		"empty message":       packet(FlagEnd, [numSections]uint32{}),
		"three messages":      bytes.Repeat(valid, 3),
		"two-packet messages": bytes.Repeat(append(packet(0, [numSections]uint32{secI8: 1}, 1, 0, 0, 0, 0, 0, 0, 0), valid...), 2),
	}
	for name, data := range streams {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(data))))
			for range 20 {
				cuts := make([]byte, rng.IntN(12))
				for i := range cuts {
					cuts[i] = byte(rng.IntN(48))
				}
				checkScan(t, data, cuts, fuzzReaderOpts...)
			}
		})
	}
}

func TestScannerEvents(t *testing.T) {
	small := packet(FlagEnd, [numSections]uint32{secI32: 1}, 1, 0, 0, 0, 0, 0, 0, 0)
	bulk := packet(FlagBulk|FlagEnd, [numSections]uint32{secI64: 3}, make([]byte, 24)...)
	data := append(append(bytes.Clone(small), bulk...), packet(FlagClose, [numSections]uint32{})...)
	marks, s := scanAll(t, data, []byte{5})
	want := []scanMark{
		{40, ScanStart | ScanEnd}, // a small packet starts its message once whole
		{72, ScanStart},           // a bulk one at its header
		{96, ScanEnd},
		{128, ScanStop},
	}
	if fmt.Sprint(marks) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", marks, want)
	}
	if s.Err() != ErrClosedByPeer || s.Mid() {
		t.Fatalf("after a goodbye: err %v, mid %v", s.Err(), s.Mid())
	}
	if n, ev := s.Feed(small); n != len(small) || ev != 0 {
		t.Fatalf("a stopped scanner consumed %d and reported %v", n, ev)
	}
	var zero Scanner // the default limits
	if _, ev := zero.Feed(small); ev != ScanStart|ScanEnd {
		t.Fatalf("zero Scanner: %v", ev)
	}
}
