package gridfaults_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

const (
	envHub       = "GRIDFAULTS_HUB"       // the hub's host:port the stranger floods
	envStrangers = "GRIDFAULTS_STRANGERS" // connections the stranger opens
	envPool      = "GRIDFAULTS_POOL"      // the pool the stranger names with a wrong secret

	strangerDial = 5 * time.Second  // bounds one dial of the stranger
	strangerRead = 30 * time.Second // bounds the wait for the hub to close a garbage sender
	strangerJobs = 64               // the stranger's connections in their set-up at once
)

// runStranger floods the hub with connections from someone who does not know the pool's
// secret, in thirds: raw TCP that says nothing and stays open, 4 KiB of random bytes, and
// the pool check with a wrong secret. Once all are made it prints "holding N" and waits for
// "stop" on standard input (or its end), then closes them and prints "result dialed=D
// dialfail=F passed=P refused=R garbage-closed=G silent=S": passed counts wrong secrets
// the hub let through, which must be none; silent the silent connections the hub still
// held open at the end.
func runStranger(ctx context.Context) error {
	addr, n := os.Getenv(envHub), envInt(envStrangers, 3000)
	wrong := poolauth.New([]byte("not-the-secret"))
	var (
		dialed, dialFail, passed, refused, garbageClosed atomic.Int64
		mu                                               sync.Mutex
		held                                             []net.Conn
		wg                                               sync.WaitGroup
	)
	jobs := make(chan int)
	for range strangerJobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: strangerDial}
			for i := range jobs {
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					dialFail.Add(1)
					continue
				}
				dialed.Add(1)
				switch i % 3 {
				case 0: // silent
					mu.Lock()
					held = append(held, c)
					mu.Unlock()
				case 1: // garbage
					junk := make([]byte, 4096)
					_, _ = rand.Read(junk)
					_ = c.SetDeadline(time.Now().Add(strangerRead))
					_, _ = c.Write(junk)
					if _, err := io.Copy(io.Discard, c); err == nil || !isTimeout(err) {
						garbageClosed.Add(1) // the hub ended it: EOF or a reset
					}
					_ = c.Close()
				case 2: // a wrong secret
					_ = c.SetDeadline(time.Now().Add(strangerRead))
					if err := poolauth.Dial(c, os.Getenv(envPool), wrong); err == nil {
						passed.Add(1)
					} else {
						refused.Add(1)
					}
					_ = c.Close()
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("holding %d\n", len(held))
	for l := range stdinLines() {
		if l == "stop" {
			break
		}
	}
	silent := 0
	for _, c := range held {
		if open(c) {
			silent++
		}
		_ = c.Close()
	}
	fmt.Printf("result dialed=%d dialfail=%d passed=%d refused=%d garbage-closed=%d silent=%d\n",
		dialed.Load(), dialFail.Load(), passed.Load(), refused.Load(), garbageClosed.Load(), silent)
	return nil
}

// open says whether the hub still holds c open: what it sent (its pool check's
// challenge) is read, then nothing more comes within a moment, where a connection the
// hub closed reads its end.
func open(c net.Conn) bool {
	buf := make([]byte, 512)
	for {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := c.Read(buf); err != nil {
			return isTimeout(err)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && errors.As(err, &ne) && ne.Timeout()
}
