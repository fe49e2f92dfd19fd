package vcluster

import (
	"errors"
	"testing"
)

// Attach refuses an id that is not a cluster id (the command takes it from the
// environment), before it reads any file.
func TestAttachBadID(t *testing.T) {
	for _, id := range []string{"", "../x", "ivc-x/../../etc", "ivc-", "cli"} {
		if _, err := Attach(id); !errors.Is(err, ErrInvalid) {
			t.Errorf("Attach(%q): %v, want ErrInvalid", id, err)
		}
	}
}
