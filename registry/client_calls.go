package registry

import (
	"context"
	"fmt"
	"math"
)

// call sends a request on the client's connection and waits for its
// reply. While the registry is lost it fails at once with an error
// wrapping ErrRegistryLost; a loss while the call waits fails it the same
// way.
func (c *Client) call(ctx context.Context, req *message) (*message, error) {
	s, err := c.current()
	if err != nil {
		return nil, err
	}
	return c.callOn(ctx, s, req)
}

// callOn sends a request on session s and waits for its reply. An error
// reply becomes an error wrapping the matching sentinel. If ctx ends while
// a waiting request (ElectionResult, Lookup) is parked at the server, the
// server is told to forget it. If the session ends first, the call fails
// with the session's error.
func (c *Client) callOn(ctx context.Context, s *session, req *message) (*message, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *message, 1)
	s.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(s.pending, id)
		c.mu.Unlock()
	}()

	req.ID = id
	frame, err := encodeFrame(req)
	if err != nil {
		return nil, err
	}
	if limit := c.maxFrame.Load(); limit > 0 && int64(len(frame)-frameHeaderSize) > limit {
		return nil, fmt.Errorf("%w: %s request of %d bytes exceeds the server's maximum frame size of %d bytes",
			ErrTooLarge, req.Kind, len(frame)-frameHeaderSize, limit)
	}
	if req.Kind == kindResume {
		s.resumeID.Store(id)
	}
	select {
	case s.out <- frame:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, s.err
	}
	select {
	case rep := <-ch:
		if rep.Code != codeNone {
			return nil, &remoteError{sentinel: rep.Code.sentinel(), code: rep.Code, msg: "registry: " + rep.Error}
		}
		return rep, nil
	case <-ctx.Done():
		if req.Kind == kindElectionResult || req.Kind == kindLookup {
			s.cancel(id)
		}
		return nil, ctx.Err()
	case <-s.done:
		return nil, s.err
	}
}

// current returns the session in use, or, when there is none, the error
// that says why (the client ended, or the registry is lost).
func (c *Client) current() (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ended:
		return nil, c.err
	case c.sess == nil && c.lost != nil:
		return nil, c.lost
	case c.sess == nil:
		return nil, fmt.Errorf("%w: not connected", ErrRegistryLost)
	}
	return c.sess, nil
}

// checkName validates a name argument: not empty, not too long.
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	}
	return checkLength(what, s)
}

// checkLength validates a string argument that may be empty.
func checkLength(what, s string) error {
	if len(s) > MaxStringLength {
		return fmt.Errorf("%w: %s of %d bytes exceeds the maximum of %d bytes", ErrInvalid, what, len(s), MaxStringLength)
	}
	return nil
}

// memberReply extracts the member of a reply that must carry one.
func memberReply(rep *message) (Identifier, error) {
	if rep.Member == nil {
		return Identifier{}, fmt.Errorf("%w: reply without a member", ErrProtocol)
	}
	return *rep.Member, nil
}

// Elect makes this member a candidate in the named election. Elections are
// strict: the first candidate to reach the server wins, and every
// candidate, now or later, gets the same winner, until the winner leaves or
// dies; then the next Elect wins anew. Everyone gets an Elected event.
func (c *Client) Elect(ctx context.Context, election string) (Identifier, error) {
	if err := checkName("election name", election); err != nil {
		return Identifier{}, fmt.Errorf("elect %q: %w", election, err)
	}
	rep, err := c.call(ctx, &message{Kind: kindElect, Name: election})
	if err == nil {
		var id Identifier
		if id, err = memberReply(rep); err == nil {
			if id.ID == c.id.ID {
				c.mu.Lock()
				c.mem.won[election] = struct{}{}
				c.mu.Unlock()
			}
			return id, nil
		}
	}
	return Identifier{}, fmt.Errorf("elect %q: %w", election, err)
}

// ElectionResult returns the winner of the named election without being a
// candidate, waiting until there is one (or ctx ends).
func (c *Client) ElectionResult(ctx context.Context, election string) (Identifier, error) {
	if err := checkName("election name", election); err != nil {
		return Identifier{}, fmt.Errorf("election result %q: %w", election, err)
	}
	rep, err := c.call(ctx, &message{Kind: kindElectionResult, Name: election})
	if err == nil {
		var id Identifier
		if id, err = memberReply(rep); err == nil {
			return id, nil
		}
	}
	return Identifier{}, fmt.Errorf("election result %q: %w", election, err)
}

// Signal sends the signal text to the given members of the pool, or to
// every member (this one included) when to is empty. The targets get a
// Signal event with this member as Member and the text as Name, in the
// pool's total order. A target that is not a current member fails the
// whole call with ErrNotMember and nobody is signalled.
func (c *Client) Signal(ctx context.Context, signal string, to ...Identifier) error {
	if err := checkName("signal text", signal); err != nil {
		return fmt.Errorf("signal %q: %w", signal, err)
	}
	ids := make([]string, len(to))
	for i, t := range to {
		if t.Pool != c.id.Pool {
			return fmt.Errorf("signal %q: %w: target %s is not in pool %q", signal, ErrNotMember, t, c.id.Pool)
		}
		ids[i] = t.ID
	}
	if len(ids) > maxTargets {
		return fmt.Errorf("signal %q: %w: %d targets, at most %d allowed", signal, ErrInvalid, len(ids), maxTargets)
	}
	if _, err := c.call(ctx, &message{Kind: kindSignal, Name: signal, Targets: ids}); err != nil {
		return fmt.Errorf("signal %q: %w", signal, err)
	}
	return nil
}

// Terminate ends the run of the pool: every member gets a Terminated event
// (with this member as Member) and WaitUntilTerminated returns everywhere.
// The pool takes no new members afterwards. Terminating twice is harmless.
func (c *Client) Terminate(ctx context.Context) error {
	if _, err := c.call(ctx, &message{Kind: kindTerminate}); err != nil {
		return fmt.Errorf("terminate pool %q: %w", c.id.Pool, err)
	}
	return nil
}

// WaitUntilTerminated blocks until some member has terminated the pool.
// It fails with ErrRegistryLost if the registry is lost before (or while
// it waits).
func (c *Client) WaitUntilTerminated(ctx context.Context) error {
	if err := c.waitFor(ctx, c.termCh); err != nil {
		return fmt.Errorf("wait until pool %q terminated: %w", c.id.Pool, err)
	}
	return nil
}

// WaitUntilPoolClosed blocks until the closed-world pool has all its
// members. In an open-world pool it fails at once with ErrNotClosedWorld.
// It fails with ErrRegistryLost if the registry is lost before (or while
// it waits).
func (c *Client) WaitUntilPoolClosed(ctx context.Context) error {
	if c.poolSize == 0 {
		return fmt.Errorf("wait until pool %q closed: %w", c.id.Pool, ErrNotClosedWorld)
	}
	if err := c.waitFor(ctx, c.poolClosed); err != nil {
		return fmt.Errorf("wait until pool %q closed: %w", c.id.Pool, err)
	}
	return nil
}

// waitFor waits until ch is closed by an event, ctx ends, or the session in
// use ends (the registry was lost or the client closed).
func (c *Client) waitFor(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	default:
	}
	s, err := c.current()
	if err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return s.err
	}
}

// Sequence returns the next number of the named sequence of the pool: 0,
// 1, 2, ... across all members, each number handed out once.
func (c *Client) Sequence(ctx context.Context, name string) (int64, error) {
	if err := checkName("sequence name", name); err != nil {
		return 0, fmt.Errorf("sequence %q: %w", name, err)
	}
	rep, err := c.call(ctx, &message{Kind: kindSequence, Name: name})
	if err != nil {
		return 0, fmt.Errorf("sequence %q: %w", name, err)
	}
	if rep.Value >= 0 && rep.Value < math.MaxInt64 {
		c.mu.Lock()
		c.mem.seqs[name] = max(c.mem.seqs[name], rep.Value+1)
		c.mu.Unlock()
	}
	return rep.Value, nil
}

// Bind publishes a global name for a receive port of this member: Lookup
// of name then returns this member and port. The binding ends with Unbind
// or when this member leaves or dies. Binding a bound name fails with
// ErrAlreadyBound.
func (c *Client) Bind(ctx context.Context, name, port string) error {
	if err := checkName("global name", name); err != nil {
		return fmt.Errorf("bind %q: %w", name, err)
	}
	if err := checkLength("port name", port); err != nil {
		return fmt.Errorf("bind %q: %w", name, err)
	}
	if _, err := c.call(ctx, &message{Kind: kindBind, Name: name, Port: port}); err != nil {
		return fmt.Errorf("bind %q: %w", name, err)
	}
	c.mu.Lock()
	c.mem.bound[name] = port
	c.mu.Unlock()
	return nil
}

// Lookup returns the member and port bound to a global name, waiting until
// the name is bound (or ctx ends).
func (c *Client) Lookup(ctx context.Context, name string) (Identifier, string, error) {
	if err := checkName("global name", name); err != nil {
		return Identifier{}, "", fmt.Errorf("lookup %q: %w", name, err)
	}
	rep, err := c.call(ctx, &message{Kind: kindLookup, Name: name})
	if err == nil {
		var id Identifier
		if id, err = memberReply(rep); err == nil {
			return id, rep.Port, nil
		}
	}
	return Identifier{}, "", fmt.Errorf("lookup %q: %w", name, err)
}

// Unbind removes a global name bound by this member; a name that is not
// bound, or bound by another member, fails with ErrNotBound.
func (c *Client) Unbind(ctx context.Context, name string) error {
	if err := checkName("global name", name); err != nil {
		return fmt.Errorf("unbind %q: %w", name, err)
	}
	// Forgotten here whatever the answer: a binding whose Unbind failed
	// because the registry was lost must not come back when this member
	// rejoins a restarted server.
	c.mu.Lock()
	delete(c.mem.bound, name)
	c.mu.Unlock()
	if _, err := c.call(ctx, &message{Kind: kindUnbind, Name: name}); err != nil {
		return fmt.Errorf("unbind %q: %w", name, err)
	}
	return nil
}
