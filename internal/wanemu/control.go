package wanemu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"go.uber.org/zap"
)

// ErrControl reports that the emulator's control socket did not answer or refused.
var ErrControl = errors.New("wanemu: control request failed")

// maxRequest bounds a control request's size; controlTimeout bounds one exchange.
const (
	maxRequest     = 4 << 10
	controlTimeout = 10 * time.Second
)

// Request is a control request: Op "set" changes Site's link (1 is the first site) to
// Delay and Loss; "down" and "up" take it down and up; "stats" asks for the counters.
type Request struct {
	Op    string        `json:"op"`
	Site  int           `json:"site,omitempty"`
	Delay time.Duration `json:"delay,omitempty"`
	Loss  float64       `json:"loss,omitempty"`
}

// Reply answers a Request: Error is empty where it was done.
type Reply struct {
	Error string `json:"error,omitempty"`
	Stats Stats  `json:"stats"`
}

// Serve answers control requests on the unix socket path until ctx ends. A request is one
// JSON line; connections are served one at a time, each bounded in size and time.
func (e *Emulator) Serve(ctx context.Context, path string) error {
	_ = os.Remove(path)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("wanemu: control socket: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	defer ln.Close()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("wanemu: control socket: %w", err)
		}
		e.answer(conn)
	}
}

// answer serves one control connection.
func (e *Emulator) answer(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(controlTimeout))
	var req Request
	var rep Reply
	line, err := bufio.NewReader(io.LimitReader(conn, maxRequest)).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err != nil {
		rep.Error = fmt.Sprintf("bad request: %v", err)
	} else if err := e.do(req); err != nil {
		rep.Error = err.Error()
	}
	rep.Stats = e.Stats()
	if err := json.NewEncoder(conn).Encode(rep); err != nil {
		e.log.Warn("wanemu: answering a control request", zap.Error(err))
	}
}

// do carries out a well-formed request.
func (e *Emulator) do(req Request) error {
	switch req.Op {
	case "set":
		return e.SetLink(req.Site, req.Delay, req.Loss)
	case "down", "up":
		return e.SetDown(req.Site, req.Op == "down")
	case "stats":
		return nil
	}
	return fmt.Errorf("%w: unknown op %q (set, down, up, stats)", ErrInvalid, req.Op)
}

// Control sends req to the emulator listening on the unix socket path and returns its reply.
func Control(ctx context.Context, path string, req Request) (Reply, error) {
	var rep Reply
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrControl, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return rep, fmt.Errorf("%w: sending %s: %w", ErrControl, req.Op, err)
	}
	if err := json.NewDecoder(io.LimitReader(conn, 1<<20)).Decode(&rep); err != nil {
		return rep, fmt.Errorf("%w: reply to %s: %w", ErrControl, req.Op, err)
	}
	if rep.Error != "" {
		return rep, fmt.Errorf("%w: %s: %s", ErrControl, req.Op, rep.Error)
	}
	return rep, nil
}
