package registry

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Pruning the log. The ops of a pool are keys under a prefix of the pool's
// own (etcdPoolOps, the name in hex); ops that belong to no pool (a front
// end's end) lie under etcdFrontOps. When a pool has ended (its last member
// left or died) or an op found no pool to act on, nothing that remains
// under its prefix can matter any more: replaying it leads to the same
// nothing. The front end that proposed that op deletes the prefix, in one
// etcd transaction that goes ahead only if every key under it was created
// by then; a new pool of the same name, begun meanwhile, keeps it until it
// ends in its turn. A front end reads the log with a Get of the live keys
// (readLog), not by a watch from the log's first revision, so etcd's
// compaction may then free what was deleted (docs/REGISTRY-HA.md).
//
// The deletion waits twice the lease's time to live (pruner.delay): a write
// that was tried again (submit) must not recreate a key that was deleted,
// as a new op. Every write ends within its front end's death timeout, which
// every front end shares, and the lease's time to live is at least that.
// A pool with ops under keys of the layout before prefixes is never pruned
// (pruner.kept).

const (
	etcdPoolOps  = etcdOps + "p/"
	etcdFrontOps = etcdOps + "f/"
	// logPage is how many keys one Get of readLog asks for.
	logPage = 1000
)

// opPool is the pool an op acts on, or "" for one that acts on no pool
// alone (a front end's end).
func opPool(o *op) string {
	switch {
	case o.kind == opFrontGone || o.req == nil:
		return ""
	case o.kind == opJoin:
		return o.req.Pool
	case o.kind == opTakeover && o.req.Rejoin != nil:
		return o.req.Rejoin.Pool
	case o.req.Member != nil:
		return o.req.Member.Pool
	}
	return ""
}

// poolOpsPrefix is the prefix of the keys of pool's ops.
func poolOpsPrefix(pool string) string { return etcdPoolOps + hex.EncodeToString([]byte(pool)) + "/" }

// frontGoneKey is the key of the one op that reports front end gone ended.
func frontGoneKey(gone uint64) string { return fmt.Sprintf("%sgone/%016x", etcdFrontOps, gone) }

// opKey is the key of the n-th op that front end front writes.
func opKey(o *op, front, n uint64) string {
	if pool := opPool(o); pool != "" {
		return fmt.Sprintf("%s%016x/%d", poolOpsPrefix(pool), front, n)
	}
	return fmt.Sprintf("%s%016x/%d", etcdFrontOps, front, n)
}

// opKeyPool is the pool whose op key is key, and whether it is one.
func opKeyPool(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, etcdPoolOps)
	if !ok {
		return "", false
	}
	h, _, ok := strings.Cut(rest, "/")
	if !ok {
		return "", false
	}
	b, err := hex.DecodeString(h)
	return string(b), err == nil
}

// readLog returns the live keys of the log at one revision, in the order
// their ops were first written, and that revision.
func readLog(ctx context.Context, cli *clientv3.Client) ([]*mvccpb.KeyValue, int64, error) {
	var kvs []*mvccpb.KeyValue
	var rev int64
	key, end := etcdOps, clientv3.GetPrefixRangeEnd(etcdOps)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(logPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		cctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
		resp, err := cli.Get(cctx, key, opts...)
		cancel()
		if err != nil {
			return nil, 0, fmt.Errorf("etcd: read the registry's log: %w", err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		kvs = append(kvs, resp.Kvs...)
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	// A key written again (a retried write) keeps its first revision as
	// CreateRevision: the place its op was applied at.
	slices.SortFunc(kvs, func(a, b *mvccpb.KeyValue) int { return cmp.Compare(a.CreateRevision, b.CreateRevision) })
	return kvs, rev, nil
}

// applyLogged applies o, the op of revision rev, and returns the pools it
// ended or found absent: those whose ops may now be pruned.
func (e *etcdStore) applyLogged(o *op, rev int64) (gone []string) {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	if pool := opPool(o); pool != "" {
		names = append(names, pool)
	}
	if o.kind == opFrontGone {
		for name, p := range s.pools {
			if slices.ContainsFunc(p.members, func(m *member) bool { return m.owner.front == o.gone }) {
				names = append(names, name)
			}
		}
	}
	e.reapplying = rev <= e.earlier
	s.apply(o)
	e.reapplying = false
	e.applied = max(e.applied, rev)
	for _, name := range names {
		if s.pools[name] == nil {
			gone = append(gone, name)
		}
	}
	return gone
}

// pruneJob is a deletion to do at due: the ops of pools, every one created
// at revision rev or before.
type pruneJob struct {
	pools []string
	rev   int64
	due   time.Time
}

// pruner deletes the ops of ended pools, each pruneDelay after it ended,
// for one session.
type pruner struct {
	e     *etcdStore
	cli   *clientv3.Client
	delay time.Duration

	mu   sync.Mutex
	jobs []pruneJob // in the order of due
	// kept are pools with ops under keys of the layout before pools had
	// prefixes: those are never deleted, so neither are the pool's others
	// (a log with some of a pool's ops would rebuild another pool).
	kept map[string]bool
	wake chan struct{}
}

func newPruner(e *etcdStore, cli *clientv3.Client) *pruner {
	return &pruner{e: e, cli: cli, delay: 2 * e.ttl, kept: make(map[string]bool), wake: make(chan struct{}, 1)}
}

// keep has the ops of pool never deleted.
func (p *pruner) keep(pool string) {
	p.mu.Lock()
	p.kept[pool] = true
	p.mu.Unlock()
}

// add has the ops of pools, created at rev or before, deleted after the delay.
func (p *pruner) add(pools []string, rev int64) {
	if len(pools) == 0 {
		return
	}
	p.mu.Lock()
	p.jobs = append(p.jobs, pruneJob{pools: pools, rev: rev, due: time.Now().Add(p.delay)})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run does the deletions as they fall due, until ctx ends; what is left
// then is found by the next session (see etcdStore.session).
func (p *pruner) run(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		p.mu.Lock()
		var job *pruneJob
		wait := time.Hour
		if len(p.jobs) > 0 {
			if d := time.Until(p.jobs[0].due); d > 0 {
				wait = d
			} else {
				j := p.jobs[0]
				p.jobs = p.jobs[1:]
				job = &j
			}
		}
		p.mu.Unlock()
		if job != nil {
			for _, pool := range job.pools {
				p.prune(ctx, pool, job.rev)
			}
			continue
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-t.C:
		}
	}
}

// prune deletes the ops of pool if every one was created at rev or before.
func (p *pruner) prune(ctx context.Context, pool string, rev int64) {
	p.mu.Lock()
	kept := p.kept[pool]
	p.mu.Unlock()
	if kept {
		return
	}
	prefix := poolOpsPrefix(pool)
	cctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	defer cancel()
	resp, err := p.cli.Txn(cctx).
		If(clientv3.Compare(clientv3.CreateRevision(prefix), "<", rev+1).WithPrefix()).
		Then(clientv3.OpDelete(prefix, clientv3.WithPrefix())).
		Commit()
	switch {
	case err != nil:
		if ctx.Err() == nil {
			p.e.log.Warn("cannot delete the ops of an ended pool (the next front end to start will)",
				zap.String("pool", pool), zap.Error(err))
		}
	case resp.Succeeded:
		n := resp.Responses[0].GetResponseDeleteRange().GetDeleted()
		p.e.log.Debug("deleted the ops of an ended pool", zap.String("pool", pool), zap.Int64("ops", n))
	default:
		p.e.log.Debug("a pool of the same name began meanwhile: its ops stay until it ends", zap.String("pool", pool))
	}
}
