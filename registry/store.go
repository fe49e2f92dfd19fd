package registry

import "context"

// A store holds the state of a server's pools by ordering the ops that
// change it (op.go). The memory store (the default) applies each op at
// once in this process; the etcd store (store_etcd.go) writes it to etcd,
// and every front end sharing that etcd applies every op in etcd's order,
// so that several front ends serve the same pools.
type store interface {
	// start begins the store's work; the server has set everything apply
	// needs. It returns at once: a shared store that is not ready yet
	// reports it through ready.
	start()
	// submit orders o and has it applied: at once by the memory store;
	// once written by a shared store, after which every front end applies
	// it. An error means o was not ordered and will not be applied.
	submit(ctx context.Context, o *op) error
	// ready reports whether the store can take ops now, and why not.
	ready() error
	// shared reports whether other front ends may apply the same ops: then
	// only the state that every op carries may decide what apply does.
	shared() bool
	// close stops the store and waits for its goroutines.
	close() error
}

// memoryStore is the default store: the pools live in this server only.
type memoryStore struct{ s *Server }

func (m memoryStore) start() {}

func (m memoryStore) submit(_ context.Context, o *op) error {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	m.s.apply(o)
	return nil
}

func (memoryStore) ready() error { return nil }
func (memoryStore) shared() bool { return false }
func (memoryStore) close() error { return nil }
