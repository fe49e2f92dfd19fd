package main

// The processes the registry-join experiment starts from its own binary: registry
// front ends and processes full of members. Each gets its part as JSON in its
// environment, says on stdout when it is ready (and, a member process, its result),
// takes orders on stdin, and ends when its stdin closes, so that none outlives the
// experiment, even one that was killed.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/internal/selfexec"
)

// envRegjoinRole carries a started process's part (a regjoinRole as JSON).
const envRegjoinRole = "IBIS_BENCH_REGJOIN_ROLE"

// Parts a started process plays.
const (
	roleFront   = "front"
	roleMembers = "members"
)

// regjoinRole is what a started process does.
type regjoinRole struct {
	Role string `json:"role"`
	// Index numbers the process among those of its part, from 0.
	Index int `json:"index"`
	// Etcd are the endpoints of the front ends' etcd store; empty: memory store.
	Etcd []string `json:"etcd,omitempty"`
	// Pool is the pool joined, Members its size N (a front end sizes its limits
	// by it; a member waits for N Joined events).
	Pool    string `json:"pool"`
	Members int    `json:"members"`
	// Count is how many members this process runs; Addrs the front ends they use.
	Count int    `json:"count,omitempty"`
	Addrs string `json:"addrs,omitempty"`
	// Timeout bounds the process's part after its start.
	Timeout time.Duration `json:"timeout"`
	// Profile, when set, is a file for a CPU profile of the process's part.
	Profile string `json:"profile,omitempty"`
}

// startedRole returns the part of a process the experiment started, if it is one.
func startedRole() (regjoinRole, bool, error) {
	v, ok := os.LookupEnv(envRegjoinRole)
	if !ok {
		return regjoinRole{}, false, nil
	}
	var r regjoinRole
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return r, true, fmt.Errorf("%s: %w", envRegjoinRole, err)
	}
	return r, true, nil
}

// child is a started process of the experiment, with its stdout lines collected.
type child struct {
	name string
	c    *selfexec.Child

	mu    sync.Mutex
	lines []string
	more  chan struct{} // poked on every line and at the end of stdout
	eof   bool
}

// startChild starts this binary in the given part; args are the subcommand's own.
func startChild(ctx context.Context, name string, args []string, r regjoinRole) (*child, error) {
	role, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	peer, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c, err := selfexec.Start(ctx, nil, selfexec.WithoutEnv("IBIS_"), selfexec.WithStdinPipe(), selfexec.WithStdoutPipe(),
		selfexec.WithEnv(cluster.EnvPeerArgs+"="+string(peer), envRegjoinRole+"="+string(role)))
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	ch := &child{name: name, c: c, more: make(chan struct{}, 1)}
	go ch.read()
	return ch, nil
}

// read collects the child's stdout lines until it closes.
func (ch *child) read() {
	sc := bufio.NewScanner(ch.c.StdoutPipe())
	sc.Buffer(make([]byte, 64<<10), 256<<20) // a member process's result is one long line
	for sc.Scan() {
		ch.mu.Lock()
		ch.lines = append(ch.lines, sc.Text())
		ch.mu.Unlock()
		ch.poke()
	}
	ch.mu.Lock()
	ch.eof = true
	ch.mu.Unlock()
	ch.poke()
}

func (ch *child) poke() {
	select {
	case ch.more <- struct{}{}:
	default:
	}
}

// waitLine waits for a stdout line that begins with prefix and returns the rest.
func (ch *child) waitLine(ctx context.Context, prefix string) (string, error) {
	for {
		ch.mu.Lock()
		for _, l := range ch.lines {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				ch.mu.Unlock()
				return rest, nil
			}
		}
		eof := ch.eof
		ch.mu.Unlock()
		if eof {
			<-ch.c.Done()
			return "", fmt.Errorf("%s ended (exit status %d) without saying %q%s",
				ch.name, ch.c.ExitCode(), strings.TrimSpace(prefix), ch.stderrTail())
		}
		select {
		case <-ch.more:
		case <-ctx.Done():
			return "", fmt.Errorf("%s did not say %q: %w%s",
				ch.name, strings.TrimSpace(prefix), ctx.Err(), ch.stderrTail())
		}
	}
}

// stderrTail is the end of the child's stderr for an error message, or "".
func (ch *child) stderrTail() string {
	if s := strings.TrimSpace(ch.c.Stderr()); s != "" {
		return "; its stderr ends:\n" + tail(s, 20)
	}
	return ""
}

// send writes one order line to the child's stdin.
func (ch *child) send(line string) error {
	if _, err := io.WriteString(ch.c.StdinPipe(), line+"\n"); err != nil {
		return fmt.Errorf("order to %s: %w", ch.name, err)
	}
	return nil
}

// end closes the child's stdin, which tells it to finish (a front end closes its
// server, a profile is written), waits up to grace for it to exit, and kills it if it
// has not.
func (ch *child) end(grace time.Duration) {
	_ = ch.c.StdinPipe().Close()
	select {
	case <-ch.c.Done():
	case <-time.After(grace):
	}
	ch.c.Close()
}

// pid is the child's process id.
func (ch *child) pid() int { return ch.c.Pid() }

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// head returns the first n lines of s.
func head(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// watchStdin returns a channel that receives each line read from in and is closed at
// its end (the experiment closed it, or died).
func watchStdin(in io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}
