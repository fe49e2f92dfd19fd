package registry

import (
	"context"
	"fmt"
)

// call sends a request and waits for its reply. An error reply becomes an
// error wrapping the matching sentinel. If ctx ends while a waiting request
// (ElectionResult, Lookup) is parked at the server, the server is told to
// forget it.
func (c *Client) call(ctx context.Context, req *message) (*message, error) {
	select {
	case <-c.done:
		return nil, c.err
	default:
	}
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()

	req.ID = id
	frame, err := encodeFrame(req)
	if err != nil {
		return nil, err
	}
	if c.maxFrame > 0 && len(frame)-frameHeaderSize > c.maxFrame {
		return nil, fmt.Errorf("%w: %s request of %d bytes exceeds the server's maximum frame size of %d bytes",
			ErrTooLarge, req.Kind, len(frame)-frameHeaderSize, c.maxFrame)
	}
	select {
	case c.out <- frame:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, c.err
	}
	select {
	case rep := <-ch:
		if rep.Code != codeNone {
			return nil, &remoteError{sentinel: rep.Code.sentinel(), msg: "registry: " + rep.Error}
		}
		return rep, nil
	case <-ctx.Done():
		if req.Kind == kindElectionResult || req.Kind == kindLookup {
			c.cancel(id)
		}
		return nil, ctx.Err()
	case <-c.done:
		return nil, c.err
	}
}

// cancel tells the server to forget waiting request id (best effort). It
// never blocks: the frame goes on a queue of its own that the writer
// drains, after the requests queued before it (see writeBatch), so the
// cancel cannot overtake its request. The server must get it: it would
// otherwise keep the request parked, counting towards this member's
// limits, until the member leaves.
func (c *Client) cancel(id uint64) {
	frame, err := encodeFrame(&message{Kind: kindCancel, ID: id})
	if err != nil {
		return
	}
	c.cancels.push(frame)
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
func (c *Client) WaitUntilTerminated(ctx context.Context) error {
	select {
	case <-c.termCh:
		return nil
	default:
	}
	select {
	case <-c.termCh:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait until pool %q terminated: %w", c.id.Pool, ctx.Err())
	case <-c.done:
		return fmt.Errorf("wait until pool %q terminated: %w", c.id.Pool, c.err)
	}
}

// WaitUntilPoolClosed blocks until the closed-world pool has all its
// members. In an open-world pool it fails at once with ErrNotClosedWorld.
func (c *Client) WaitUntilPoolClosed(ctx context.Context) error {
	if c.poolSize == 0 {
		return fmt.Errorf("wait until pool %q closed: %w", c.id.Pool, ErrNotClosedWorld)
	}
	select {
	case <-c.poolClosed:
		return nil
	default:
	}
	select {
	case <-c.poolClosed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait until pool %q closed: %w", c.id.Pool, ctx.Err())
	case <-c.done:
		return fmt.Errorf("wait until pool %q closed: %w", c.id.Pool, c.err)
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
	if _, err := c.call(ctx, &message{Kind: kindUnbind, Name: name}); err != nil {
		return fmt.Errorf("unbind %q: %w", name, err)
	}
	return nil
}
