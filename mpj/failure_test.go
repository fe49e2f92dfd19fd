package mpj_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
	"github.com/ibisgo/ibis/registry"
)

// envScenario makes a child of TestPeerGone play a scenario instead of the suite.
const envScenario = "MPJ_TEST_SCENARIO"

// victimRank is the rank that dies (or closes) in TestPeerGone's pools of three.
const victimRank = 2

// failWithin bounds how long the survivors may take to notice that the victim is
// gone: far below their context's end (goneTimeout), so a survivor that only stopped
// because its context ended fails the test.
const (
	failWithin  = 15 * time.Second
	goneTimeout = 60 * time.Second
)

// TestPeerGone: in a pool of three (tcp and nio), ranks 0 and 1 are in a Bcast from
// rank 2, or in an Allreduce or a Barrier that rank 2 never joins, when rank 2 is killed with
// SIGKILL or calls Close instead of Finalize. Both survivors must fail with an error
// matching ipl.ErrConnectionLost within failWithin, not hang until their context
// ends. After its error a survivor closes its world, as a program's error path does,
// so a survivor waiting only for the other survivor learns of it too.
func TestPeerGone(t *testing.T) {
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) {
			t.Parallel()
			for _, how := range []string{"kill", "close"} {
				for _, op := range []string{"bcast", "allreduce", "barrier"} {
					t.Run(how+"-"+op, func(t *testing.T) { runPeerGone(t, impl, how, op) })
				}
			}
		})
	}
}

func runPeerGone(t *testing.T, impl, how, op string) {
	srv, err := registry.StartEmbedded("127.0.0.1:0", registry.WithHeartbeatInterval(10*time.Second))
	if err != nil {
		t.Fatalf("starting the registry: %v", err)
	}
	defer srv.Close()
	const p = 3
	pool := fmt.Sprintf("mpj-gone-%s-%s-%s-%d", impl, how, op, time.Now().UnixNano())
	procs := make([]*goneProc, p)
	for rank := range p {
		c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(), selfexec.WithStdinPipe(),
			selfexec.WithEnv(envChild+"=1", envScenario+"="+op,
				ipl.EnvRegistry+"="+srv.Addr(), ipl.EnvPool+"="+pool, ipl.EnvPoolSize+"="+strconv.Itoa(p),
				ipl.EnvImpl+"="+impl, "IBIS_RANK="+strconv.Itoa(rank)))
		if err != nil {
			t.Fatalf("starting rank %d: %v", rank, err)
		}
		pr := &goneProc{c: c, lines: make(chan string, 16), done: make(chan struct{})}
		procs[rank] = pr
		go func() {
			sc := bufio.NewScanner(c.StdoutPipe())
			for sc.Scan() {
				pr.mu.Lock()
				pr.stdout.WriteString(sc.Text() + "\n")
				pr.mu.Unlock()
				pr.lines <- sc.Text()
			}
			close(pr.lines)
			pr.err = c.Wait()
			close(pr.done)
		}()
	}
	defer func() {
		for _, pr := range procs {
			_ = pr.c.Kill()
			<-pr.done
			pr.c.Close()
		}
	}()
	// Wait until the survivors say they are about to enter the collective.
	deadline := time.After(goneTimeout)
	for rank := range p {
		if rank == victimRank {
			continue
		}
		if err := expectLine(procs[rank].lines, "entering "+op, deadline); err != nil {
			t.Fatalf("rank %d: %v\n%s", rank, err, procs[rank].output())
		}
	}
	time.Sleep(300 * time.Millisecond) // let them block in it
	gone := time.Now()
	if how == "kill" {
		if err := procs[victimRank].c.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	} else if _, err := io.WriteString(procs[victimRank].c.StdinPipe(), "close\n"); err != nil {
		t.Fatal(err)
	}
	for rank := range p {
		pr := procs[rank]
		select {
		case <-pr.done:
		case <-time.After(failWithin):
			t.Fatalf("rank %d still runs %v after rank %d's %s:\n%s", rank, failWithin, victimRank, how, pr.output())
		}
		switch {
		case rank == victimRank && how == "kill":
		case pr.err != nil:
			t.Errorf("rank %d: %v\n%s", rank, pr.err, pr.output())
		default:
			t.Logf("rank %d ended %v after the %s: %s", rank, time.Since(gone).Round(time.Millisecond), how,
				strings.TrimSpace(pr.output()))
		}
	}
	if how != "kill" {
		return
	}
	// A survivor that saw the connection break says so in one short line naming the ranks
	// (every rank of a job prints it), as an *mpj.PeerLostError with the cause behind it.
	want := fmt.Sprintf("lost peer rank %d (it died or the connection broke: ", victimRank)
	seen := false
	for rank, pr := range procs {
		if rank == victimRank {
			continue
		}
		for _, l := range strings.Split(pr.output(), "\n") {
			if _, msg, ok := strings.Cut(l, "failed after "); ok && strings.Contains(l, want) {
				seen = true
				if len(msg) > 160 || !strings.HasSuffix(l, " (a PeerLostError)") {
					t.Errorf("rank %d: the error is long or lost its cause: %q", rank, l)
				}
			}
		}
	}
	if !seen {
		t.Errorf("no survivor said %q", want)
	}
}

// expectLine waits for a line with the given prefix.
func expectLine(lines <-chan string, prefix string, deadline <-chan time.Time) error {
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return fmt.Errorf("ended before saying %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("did not say %q", prefix)
		}
	}
}

// goneProc is one process of TestPeerGone: the lines it printed, as they come, and how it
// ended.
type goneProc struct {
	c      *selfexec.Child
	mu     sync.Mutex
	stdout strings.Builder // the lines read so far
	lines  chan string
	err    error
	done   chan struct{} // closed when the process is reaped and err set
}

// output is what the process printed so far, stdout then stderr, for a failure message.
func (pr *goneProc) output() string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.stdout.String() + pr.c.Stderr()
}

// runScenario is one process of TestPeerGone. The victim waits after a barrier until
// it is killed, or until its stdin says "close", when it closes its world without
// Finalize. The survivors enter the collective and must get ipl.ErrConnectionLost.
func runScenario(op string) int {
	ctx, cancel := context.WithTimeout(context.Background(), goneTimeout)
	defer cancel()
	w, err := mpj.New(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpj.New:", err)
		return 1
	}
	defer w.Close()
	if err := w.Barrier(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Barrier:", err)
		return 1
	}
	if w.Rank() == victimRank {
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if strings.TrimSpace(line) != "close" {
			fmt.Fprintf(os.Stderr, "victim: stdin said %q\n", line)
			return 1
		}
		if err := w.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "victim: Close:", err)
			return 1
		}
		return 0
	}
	fmt.Printf("entering %s\n", op)
	start := time.Now()
	switch op {
	case "bcast":
		err = w.Bcast(ctx, make([]float64, 1000), victimRank)
	case "allreduce":
		v := []float64{float64(w.Rank())}
		err = w.Allreduce(ctx, v, v, mpj.Sum)
	case "barrier": // rank 0 waits for the victim's arrival, rank 1 for its release
		err = w.Barrier(ctx)
	default:
		err = fmt.Errorf("unknown scenario %q", op)
	}
	took := time.Since(start)
	_ = w.Close()
	if !errors.Is(err, ipl.ErrConnectionLost) {
		fmt.Fprintf(os.Stderr, "rank %d: %s after %v: %v, want an error matching ipl.ErrConnectionLost\n", w.Rank(), op, took, err)
		return 1
	}
	var pl *mpj.PeerLostError
	cause := ""
	if errors.As(err, &pl) && pl.Rank == w.Rank() && pl.Peer == victimRank && pl.Err != nil {
		cause = " (a PeerLostError)"
	}
	fmt.Printf("rank %d: %s failed after %v: %v%s\n", w.Rank(), op, took.Round(time.Millisecond), err, cause)
	return 0
}
