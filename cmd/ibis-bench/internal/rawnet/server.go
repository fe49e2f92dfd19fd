package rawnet

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Server accepts raw connections and serves each with its own goroutine (the way a
// blocking-socket server must): every frame that asks for a reply gets one, an echo
// of the payload when the reply length equals it, otherwise zero bytes of that
// length.
type Server struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool
}

// Listen starts a server on addr (such as "127.0.0.1:0").
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rawnet: listen: %w", err)
	}
	s := &Server{ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr returns the address clients dial.
func (s *Server) Addr() string { return s.ln.Addr().String() }

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			_ = serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			_ = c.Close()
		}()
	}
}

// serve answers the frames of one connection until it ends.
func serve(c net.Conn) error {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	var hdr, out [HeaderSize]byte
	var buf, zero []byte
	bufs := net.Buffers{}
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		n, reply, err := parseHeader(hdr[:])
		if err != nil {
			return err
		}
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return err
		}
		if reply == NoReply {
			continue
		}
		body := buf[:n]
		if int(reply) != n {
			if cap(zero) < int(reply) {
				zero = make([]byte, reply)
			}
			body = zero[:reply]
		}
		header(&out, len(body), NoReply)
		bufs = append(bufs[:0], out[:], body)
		if _, err := bufs.WriteTo(c); err != nil {
			return err
		}
	}
}

// Close stops accepting, closes every connection and waits for their goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.done = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}
