package poolauth

import (
	"errors"
	"testing"
)

// A server that is no Ibis-Go peer (one that closes at once, an SSH server's banner)
// makes Dial fail with ErrStranger, so that a dialler tries the peer's next address;
// one that speaks TLS, or another version of the check, is a peer configured otherwise:
// ErrProtocol alone.
func TestDialStranger(t *testing.T) {
	for _, tc := range []struct {
		name     string
		says     []byte
		stranger bool
	}{
		{"closes at once", nil, true},
		{"an SSH banner", []byte("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"), true},
		{"TLS", append([]byte{0x16, 0x03, 0x01, 0x00, 0x40}, make([]byte, 64)...), false},
		{"version 9", append(append([]byte("IBAU"), 9), make([]byte, 32)...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, cli := tcpPair(t)
			defer cli.Close()
			go func() {
				_, _ = srv.Write(tc.says)
				_ = srv.Close()
			}()
			err := Dial(cli, "p", Secret{})
			if err == nil || errors.Is(err, ErrStranger) != tc.stranger {
				t.Errorf("Dial: %v; want ErrStranger %v", err, tc.stranger)
			}
		})
	}
}
