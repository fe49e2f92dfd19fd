package poolauth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func nonces(t *testing.T) (Nonce, Nonce) {
	t.Helper()
	a, err := NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func TestMutualProof(t *testing.T) {
	s := New([]byte("s3cret"))
	ns, nc := nonces(t)
	if err := s.CheckClient("pool", ns, nc, s.ClientProof("pool", ns, nc)); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckServer("pool", ns, nc, s.ServerProof("pool", ns, nc)); err != nil {
		t.Fatal(err)
	}
}

func TestProofRefusals(t *testing.T) {
	s, other := New([]byte("s3cret")), New([]byte("guess"))
	ns, nc := nonces(t)
	ns2, _ := nonces(t)
	p := s.ClientProof("pool", ns, nc)
	for name, err := range map[string]error{
		"wrong secret":        s.CheckClient("pool", ns, nc, other.ClientProof("pool", ns, nc)),
		"replayed (new Ns)":   s.CheckClient("pool", ns2, nc, p),
		"other pool":          s.CheckClient("pool2", ns, nc, p),
		"reflected server":    s.CheckClient("pool", ns, nc, s.ServerProof("pool", ns, nc)),
		"reflected client":    s.CheckServer("pool", ns, nc, p),
		"pool name ambiguity": s.CheckClient("poo", ns, nc, s.ClientProof("pool", ns, nc)),
	} {
		if !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("%s: %v, want ErrUnauthenticated", name, err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load("", path)
	if err != nil || !s.Equal(New([]byte("from-file"))) {
		t.Fatalf("file: %v %v", s, err)
	}
	if s, err := Load("", ""); err != nil || s.IsSet() {
		t.Fatalf("none: %v %v", s, err)
	}
	if _, err := Load("x", path); err == nil {
		t.Error("both value and file accepted")
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	if _, err := Load("", empty); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: %v", err)
	}
	big := filepath.Join(dir, "big")
	_ = os.WriteFile(big, make([]byte, MaxSecretSize+1), 0o600)
	if _, err := Load("", big); err == nil {
		t.Error("oversized file accepted")
	}
	if _, err := Load("", filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file accepted")
	}
	if strings.Contains(New([]byte("s3cret")).String(), "s3cret") {
		t.Error("String shows the secret")
	}
}
