package phases

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Time goes to the phase that runs; a stopped Clock adds nothing; Print gives min, mean,
// max and share per phase and refuses short rows.
func TestClockAndPrint(t *testing.T) {
	c := New("a", "b")
	c.Enter(1) // not started: nothing counted
	c.Start(0)
	time.Sleep(2 * time.Millisecond)
	if was := c.Enter(1); was != 0 {
		t.Fatalf("Enter returned %d, want 0", was)
	}
	time.Sleep(2 * time.Millisecond)
	c.Stop()
	c.Enter(0)
	s := c.Seconds()
	if s[0] < 0.002 || s[1] < 0.002 {
		t.Fatalf("phases %v: each ran at least 2 ms", s)
	}
	var nilClock *Clock
	nilClock.Start(0)
	nilClock.Enter(1)
	nilClock.Stop()

	var b bytes.Buffer
	if err := Print(&b, "x", []string{"a", "b"}, [][]float64{{1, 2}, {3, 4}}, 4); err != nil {
		t.Fatal(err)
	}
	want := "x-phase name=a min=1.000000 mean=2.000000 max=3.000000 share=0.5000\n" +
		"x-phase name=b min=2.000000 mean=3.000000 max=4.000000 share=0.7500\n"
	if b.String() != want {
		t.Fatalf("Print:\n%s\nwant:\n%s", b.String(), want)
	}
	if err := Print(&b, "x", []string{"a", "b"}, [][]float64{{1}}, 4); err == nil || !strings.Contains(err.Error(), "rank 0") {
		t.Fatalf("a short row: %v, want an error naming rank 0", err)
	}
	if err := Print(&b, "x", []string{"a"}, nil, 4); err == nil {
		t.Fatal("no ranks: no error")
	}
}
