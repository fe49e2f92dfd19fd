package core

import (
	"testing"
	"time"
)

func TestToken(t *testing.T) {
	tk := newToken()
	if !tk.tryTake() || tk.tryTake() {
		t.Fatalf("a free token must be taken once")
	}
	abort := make(chan struct{})
	close(abort)
	if tk.take(nil, abort) {
		t.Fatalf("take got a held token")
	}
	if tk.takeWithin(time.Millisecond) {
		t.Fatalf("takeWithin got a held token")
	}
	got := make(chan bool)
	go func() { got <- tk.take(nil, nil) }()
	tk.release()
	if !<-got {
		t.Fatalf("a waiting take did not get the released token")
	}
	tk.release()
	if !tk.takeWithin(time.Hour) {
		t.Fatalf("takeWithin missed a free token")
	}
}
