package mpj

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/ibisgo/ibis/ipl"
)

// Request is a pending non-blocking operation (Isend, Irecv), as MPI_Request. Its
// buffer belongs to mpj until the request has completed: Wait or Test said so.
type Request struct {
	done   chan struct{}
	status Status
	err    error
	// op is the posted receive of an Irecv, nil for a send.
	op *recvOp
}

func newRequest() *Request { return &Request{done: make(chan struct{})} }

// finish completes the request; it is called exactly once.
func (r *Request) finish(st Status, err error) {
	r.status, r.err = st, err
	close(r.done)
}

// Wait waits until the request has completed and returns its status (for a send, the
// zero Status) and error. If ctx ends first it returns ctx's error and the request
// stays pending: its buffer still belongs to mpj, and Wait or Test may be called again.
func (r *Request) Wait(ctx context.Context) (Status, error) {
	select {
	case <-r.done:
		return r.status, r.err
	default:
	}
	select {
	case <-r.done:
		return r.status, r.err
	case <-ctx.Done():
		return Status{}, ctxErr(ctx, "waiting for a request")
	}
}

// Test reports without blocking whether the request has completed, and if so its
// status and error (MPI_Test).
func (r *Request) Test() (Status, bool, error) {
	select {
	case <-r.done:
		return r.status, true, r.err
	default:
		return Status{}, false, nil
	}
}

// WaitAll waits for every request (MPI_Waitall) and returns their statuses in the
// order given; the error joins the errors of the requests that failed, each naming
// its index. Nil requests are skipped, so a slice with holes can be passed.
func WaitAll(ctx context.Context, reqs ...*Request) ([]Status, error) {
	st := make([]Status, len(reqs))
	var errs []error
	var failed []int
	for i, r := range reqs {
		if r == nil {
			continue
		}
		s, err := r.Wait(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return st, err
			}
			errs, failed = append(errs, err), append(failed, i)
		}
		st[i] = s
	}
	return st, requestErrors(failed, errs)
}

// requestErrors joins the errors of the failed requests, each naming its index; when they
// are all one error (the world failed: a peer was lost), it is given once, naming them all.
func requestErrors(failed []int, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	// The same value: compared only when its type allows (== panics on a struct error
	// holding a slice).
	same := reflect.TypeOf(errs[0]).Comparable()
	for _, err := range errs[1:] {
		same = same && reflect.TypeOf(err) == reflect.TypeOf(errs[0]) && err == errs[0]
	}
	if same {
		if len(failed) == 1 {
			return fmt.Errorf("request %d: %w", failed[0], errs[0])
		}
		return fmt.Errorf("requests %v: %w", failed, errs[0])
	}
	wrapped := make([]error, len(errs))
	for k, err := range errs {
		wrapped[k] = fmt.Errorf("request %d: %w", failed[k], err)
	}
	return errors.Join(wrapped...)
}

// WaitAny waits until one of the requests has completed (MPI_Waitany) and returns its
// index, status and error. When several have completed it returns the lowest index,
// so a loop over WaitAny is fair to none but deterministic. Nil requests are skipped;
// with none left it returns -1 at once.
func WaitAny(ctx context.Context, reqs ...*Request) (int, Status, error) {
	cases := make([]reflect.SelectCase, 0, len(reqs)+1)
	idx := make([]int, 0, len(reqs))
	for i, r := range reqs {
		if r == nil {
			continue
		}
		select {
		case <-r.done:
			return i, r.status, r.err
		default:
		}
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.done)})
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return -1, Status{}, nil
	}
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	chosen, _, _ := reflect.Select(cases)
	if chosen == len(idx) {
		return -1, Status{}, ctxErr(ctx, "waiting for any request")
	}
	for _, i := range idx { // the lowest completed index, as documented
		select {
		case <-reqs[i].done:
			return i, reqs[i].status, reqs[i].err
		default:
		}
	}
	i := idx[chosen]
	return i, reqs[i].status, reqs[i].err
}

// ctxErr wraps the end of ctx so that it matches ipl.ErrTimeout when the deadline
// passed (as ipl's own calls do) and the context's error in any case; a cause other than
// that error (signal.NotifyContext's "interrupt signal received") is named too.
func ctxErr(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("mpj: %s: %w (%w)", what, ipl.ErrTimeout, ctx.Err())
	}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return fmt.Errorf("mpj: %s: %w (%v)", what, ctx.Err(), cause) // "(interrupt signal received)"
	}
	return fmt.Errorf("mpj: %s: %w", what, ctx.Err())
}
