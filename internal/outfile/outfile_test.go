package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.png")
	if err := os.Symlink(filepath.Join(dir, "none", "x.png"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string // want: "" for no error, else a part of it
	}{
		{filepath.Join(dir, "new.png"), ""},
		{file, ""},
		{filepath.Join(dir, "no", "x.png"), "is not there"},
		{filepath.Join(file, "x.png"), "is not a folder"},
		{dir, "it is a folder"},
		{os.DevNull, ""},                                 // replaced in place: its folder /dev need not be writable
		{filepath.Join(dir, "dangling"), "is not there"}, // a link into a folder that is not there
	} {
		err := Check("-image", tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.path, err)
		case tc.want != "" && (!errors.Is(err, ErrUnwritable) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "-image")):
			t.Errorf("%s: %v, want ErrUnwritable saying %q", tc.path, err, tc.want)
		}
	}
	if os.Geteuid() == 0 {
		return // root may write anywhere
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := Check("-out", filepath.Join(ro, "x")); !errors.Is(err, ErrUnwritable) {
		t.Errorf("a new file in a read-only folder: %v, want ErrUnwritable", err)
	}
	if err := Check("-out", os.DevNull); err != nil {
		t.Errorf("%s, writable in a folder this process may not write: %v", os.DevNull, err)
	}
	kept := filepath.Join(ro, "plot.png") // a file prepared before: writable, its folder not
	if err := os.Chmod(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(ro, 0o755) }) // for TempDir's removal
	if err := CheckWithSiblings("-plot", kept); !errors.Is(err, ErrUnwritable) {
		t.Errorf("a file whose siblings cannot be made: %v, want ErrUnwritable", err)
	}
}
