package nio

// hooks lets a test observe what an instance's connections do. Production instances
// have none: each call site then costs one nil check, and nothing is counted.
type hooks struct {
	direct func(rest bool) // a sender wrote a packet itself; rest: the socket left some to the event loop
	copied func(n int)     // n bytes were copied into a packet for the queue
	paused func()          // the event loop stopped reading an inbound connection (descriptor.go)
	full   func()          // a flush found the socket full and waits for it (descriptor.go)
}

// testHooks is handed to every instance opened while it is set. Only tests set it,
// before they open the instance they observe (withHooks in hooks_test.go).
var testHooks *hooks

func (h *hooks) onDirect(rest bool) {
	if h != nil && h.direct != nil {
		h.direct(rest)
	}
}

func (h *hooks) onCopied(n int) {
	if h != nil && h.copied != nil {
		h.copied(n)
	}
}

func (h *hooks) onPaused() {
	if h != nil && h.paused != nil {
		h.paused()
	}
}

func (h *hooks) onFull() {
	if h != nil && h.full != nil {
		h.full()
	}
}
