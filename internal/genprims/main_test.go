package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesUpToDate fails when a checked-in file differs from what
// the table and templates produce now (go generate was not run).
func TestGeneratedFilesUpToDate(t *testing.T) {
	root, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for pkg, dir := range pkgDirs {
		files, err := generate(pkg)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range files {
			path := filepath.Join(root, dir, name)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go generate ./%s/", path, dir)
			}
		}
	}
}

func TestGeneratedHeader(t *testing.T) {
	for pkg := range outputs {
		files, err := generate(pkg)
		if err != nil {
			t.Fatal(err)
		}
		for name, src := range files {
			first, _, _ := strings.Cut(string(src), "\n")
			if !strings.HasPrefix(first, "// Code generated ") || !strings.HasSuffix(first, " DO NOT EDIT.") {
				t.Errorf("%s starts with %q, not the generated-code header", name, first)
			}
		}
	}
}

func TestCheckIPL(t *testing.T) {
	root, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	msgFile := filepath.Join(root, "ipl", "message.go")
	if err := checkIPL(msgFile); err != nil {
		t.Fatalf("ipl's interfaces and the table disagree: %v", err)
	}
	src, err := os.ReadFile(msgFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range []struct{ old, new string }{
		{"\tWriteInt16(v int16) error\n", ""},                                        // one missing
		{"\tReadFloat32() (float32, error)\n", "\tReadFloat32() (float64, error)\n"}, // wrong type
		{"\tWriteUint16(v uint16) error\n\tWriteInt32(v int32) error\n",
			"\tWriteInt32(v int32) error\n\tWriteUint16(v uint16) error\n"}, // out of order
	} {
		if !bytes.Contains(src, []byte(edit.old)) {
			t.Fatalf("ipl/message.go no longer contains %q", edit.old)
		}
		bad := filepath.Join(t.TempDir(), "message.go")
		if err := os.WriteFile(bad, bytes.Replace(src, []byte(edit.old), []byte(edit.new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := checkIPL(bad); err == nil {
			t.Errorf("checkIPL accepted ipl/message.go with %q replaced by %q", edit.old, edit.new)
		}
	}
}
