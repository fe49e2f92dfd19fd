package registry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// etcdStore keeps the pools in etcd as a log of ops: each op is a key of
// its own under etcdOps, written once (a retried write of the same key is
// recognised by its version and skipped), and every front end applies
// the ops in etcd's revision order: the live keys when its session
// starts (readLog), then the new ones through one watch. The ops of
// pools that have ended are deleted (store_etcd_prune.go). A front end
// holds a lease with a key under etcdFronts; when it ends, the members
// that front end still owns die.
// A front end that loses etcd (no answer for stepDown, or its lease gone)
// drops everything and starts anew: new lease, new name, the log read
// again; meanwhile it refuses joins (codeUnavailable) and its members
// move to other front ends.
type etcdStore struct {
	s         *Server
	endpoints []string
	log       *zap.Logger
	// ttl is the lease's time to live, stepDown how long etcd may fail to
	// answer before the front end stops serving.
	ttl      time.Duration
	stepDown time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	cli      *clientv3.Client
	front    uint64 // the front end's name in the current session
	notReady error  // nil once the current session has read the log

	n atomic.Uint64 // numbers this front end's op keys

	// Guarded by s.mu. applied is the revision of the last op applied in
	// any session of this store so far, all of them over the store of
	// epoch appliedEpoch, and earlier what it was when the current session
	// began. Every session applies the ops in revision order, starting
	// with every live one, so the ops of the current session up to earlier
	// are those that an earlier one applied already: reapplying is set
	// while one of them is applied (Server.reapplying).
	applied      int64
	appliedEpoch uint64
	earlier      int64
	reapplying   bool
}

const (
	etcdPrefix   = "/ibis/registry/"
	etcdEpochKey = etcdPrefix + "epoch"
	etcdOps      = etcdPrefix + "ops/"
	etcdFronts   = etcdPrefix + "fronts/"
	etcdSync     = etcdPrefix + "sync/"

	// etcdCallTimeout bounds one call to etcd but a write, etcdWriteTimeout
	// one attempt of a write, which is tried again until the request's own
	// deadline: a write caught by the death of etcd's leader would wait
	// for etcd's own request timeout (7 s) before it fails, while its
	// second attempt goes through as soon as a new leader is elected.
	etcdCallTimeout  = 5 * time.Second
	etcdWriteTimeout = 2 * time.Second
	// minLeaseTTL is the shortest lease: etcd raises shorter ones anyway.
	minLeaseTTL = 5 * time.Second
)

var errNotReady = errors.New("the front end is reading the registry's state from etcd")

func newEtcdStore(s *Server, endpoints []string) *etcdStore {
	ctx, cancel := context.WithCancel(context.Background())
	return &etcdStore{
		s:         s,
		endpoints: endpoints,
		log:       s.log.Named("etcd"),
		ttl:       max(s.cfg.deathTimeout, minLeaseTTL),
		stepDown:  max(s.cfg.deathTimeout/6, 3*time.Second),
		ctx:       ctx,
		cancel:    cancel,
		notReady:  errNotReady,
	}
}

func (e *etcdStore) shared() bool { return true }

func (e *etcdStore) ready() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.notReady
}

func (e *etcdStore) start() {
	e.wg.Add(1)
	go e.run()
}

func (e *etcdStore) close() error {
	e.cancel()
	e.wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cli != nil {
		return e.cli.Close()
	}
	return nil
}

func (e *etcdStore) submit(ctx context.Context, o *op) error {
	e.mu.Lock()
	cli, front, err := e.cli, e.front, e.notReady
	e.mu.Unlock()
	if err != nil {
		return err
	}
	val, err := o.encode()
	if err != nil {
		return err
	}
	key := opKey(o, front, e.n.Add(1))
	put := func(ctx context.Context) error {
		_, err := cli.Put(ctx, key, string(val))
		return err
	}
	if o.kind == opFrontGone {
		// Every front end that sees a lease end reports it; the first report
		// is the one op, the others write nothing.
		key = frontGoneKey(o.gone)
		put = func(ctx context.Context) error {
			_, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, string(val))).Commit()
			return err
		}
	}
	backoff := 50 * time.Millisecond
	for {
		cctx, cancel := context.WithTimeout(ctx, etcdWriteTimeout)
		err := put(cctx)
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("write to etcd: %w", err)
		case errors.Is(err, rpctypes.ErrRequestTooLarge):
			return fmt.Errorf("write to etcd: %w", err)
		}
		// The write may or may not have happened; the same key again is
		// applied once either way.
		e.log.Debug("write to etcd failed; trying again", zap.String("key", key), zap.Error(err))
		select {
		case <-ctx.Done():
			return fmt.Errorf("write to etcd: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// run keeps a session with etcd going until the store closes.
func (e *etcdStore) run() {
	defer e.wg.Done()
	backoff := 100 * time.Millisecond
	for {
		served, err := e.session()
		if e.ctx.Err() != nil {
			return
		}
		e.mu.Lock()
		e.notReady = fmt.Errorf("no answer from the registry's etcd store: %w", err)
		e.mu.Unlock()
		e.s.storeLost(err)
		// Not serving already; now what a probe of etcd adds, for Ready and the log
		// (the next session starts only after this).
		if why := e.explain(err); why != err {
			err = why
			e.mu.Lock()
			e.notReady = fmt.Errorf("no answer from the registry's etcd store: %w", err)
			e.mu.Unlock()
		}
		e.log.Warn("cannot use etcd: not serving (members move, joins are refused) until it answers",
			zap.Strings("endpoints", e.endpoints), zap.Error(err))
		if served {
			backoff = 100 * time.Millisecond
		}
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// client returns the etcd client, making it on first use.
func (e *etcdStore) client() (*clientv3.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cli != nil {
		return e.cli, nil
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            e.endpoints,
		DialTimeout:          etcdCallTimeout,
		DialKeepAliveTime:    2 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		Logger:               zap.NewNop(),
		Context:              e.ctx,
		TLS:                  e.s.cfg.etcdTLS,
		Username:             e.s.cfg.etcdUser,
		Password:             e.s.cfg.etcdPassword,
		// Dial a node that was down again within a second of its
		// return, not after gRPC's default back-off of up to two minutes.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		})},
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", strings.Join(e.endpoints, ","), err)
	}
	e.cli = cli
	return cli, nil
}

// session reads the log and applies it as it grows, until etcd is lost
// or the store closes; served says whether it got as far as serving.
func (e *etcdStore) session() (served bool, err error) {
	cli, err := e.client()
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	epoch, err := e.epoch(ctx, cli)
	if err != nil {
		return false, err
	}
	cctx, ccancel := context.WithTimeout(ctx, etcdCallTimeout)
	lease, err := cli.Grant(cctx, int64((e.ttl+time.Second-1)/time.Second))
	ccancel()
	if err != nil {
		return false, fmt.Errorf("etcd lease: %w", err)
	}
	front := rand.Uint64() | 1
	name := strconv.FormatUint(front, 16)
	cctx, ccancel = context.WithTimeout(ctx, etcdCallTimeout)
	_, err = cli.Put(cctx, etcdFronts+name, "", clientv3.WithLease(lease.ID))
	ccancel()
	if err != nil {
		return false, fmt.Errorf("etcd: announce this front end: %w", err)
	}
	e.s.startFront(front, epoch)
	e.s.mu.Lock()
	if e.appliedEpoch != epoch {
		// Another etcd (its data started afresh): its revisions say
		// nothing of what was applied before.
		e.applied, e.appliedEpoch = 0, epoch
	}
	e.earlier = e.applied
	e.s.mu.Unlock()
	e.mu.Lock()
	e.front = front
	e.mu.Unlock()

	// The lease is kept alive from here on, while the log is read too.
	sick := make(chan error, 1)
	var hw sync.WaitGroup
	defer hw.Wait()
	defer cancel()
	hw.Go(func() { e.health(ctx, cli, lease.ID, sick) })

	kvs, rev, err := readLog(ctx, cli)
	if err != nil {
		return false, err
	}
	pr := newPruner(e, cli)
	touched := make(map[string]bool) // the pools of the ops applied before catching up
	for _, kv := range kvs {
		if o, _ := e.applyKV(kv, pr); o != nil {
			if pool := opPool(o); pool != "" {
				touched[pool] = true
			}
		}
	}
	kvs = nil
	select {
	case err := <-sick:
		return false, err
	default:
	}
	hw.Go(func() { pr.run(ctx) })

	watch := cli.Watch(ctx, etcdPrefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	// The marker tells when the watch has caught up with the log.
	cctx, ccancel = context.WithTimeout(ctx, etcdCallTimeout)
	mark, err := cli.Put(cctx, etcdSync+name, "", clientv3.WithLease(lease.ID))
	ccancel()
	if err != nil {
		return false, fmt.Errorf("etcd: write the catch-up marker: %w", err)
	}
	for {
		select {
		case err := <-sick:
			return served, err
		case resp, ok := <-watch:
			if !ok {
				return served, fmt.Errorf("etcd watch ended: %w", ctx.Err())
			}
			if resp.CompactRevision != 0 {
				// The watch fell behind etcd's compaction: what it missed is
				// gone, so the session starts again from the live keys.
				return served, fmt.Errorf("etcd compacted its history past this front end's watch (revision %d): reading the log again",
					resp.CompactRevision)
			}
			if err := resp.Err(); err != nil {
				return served, fmt.Errorf("etcd watch: %w", err)
			}
			for _, ev := range resp.Events {
				caughtUp, err := e.event(ev, front, mark.Header.Revision, pr, touched)
				if err != nil {
					return served, err
				}
				if caughtUp {
					served = true
					e.serve(ctx, cli, front, &hw)
					// Pools whose ops outlived them (their front end ended
					// before it deleted them) are deleted now: every op up to
					// the marker has been applied.
					e.s.mu.Lock()
					var ended []string
					for pool := range touched {
						if e.s.pools[pool] == nil {
							ended = append(ended, pool)
						}
					}
					e.s.mu.Unlock()
					pr.add(ended, mark.Header.Revision)
					touched = nil
				}
			}
		}
	}
}

// epoch reads the store's epoch, creating it if this is the first front
// end ever.
func (e *etcdStore) epoch(ctx context.Context, cli *clientv3.Client) (epoch uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	defer cancel()
	fresh := strconv.FormatUint(rand.Uint64()|1, 16)
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(etcdEpochKey), "=", 0)).
		Then(clientv3.OpPut(etcdEpochKey, fresh)).
		Else(clientv3.OpGet(etcdEpochKey)).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("etcd: read the registry's epoch: %w", err)
	}
	if resp.Succeeded {
		epoch, _ = strconv.ParseUint(fresh, 16, 64)
		return epoch, nil
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) != 1 {
		return 0, fmt.Errorf("etcd: the registry's epoch vanished")
	}
	epoch, err = strconv.ParseUint(string(kvs[0].Value), 16, 64)
	if err != nil || epoch == 0 {
		return 0, fmt.Errorf("etcd: the registry's epoch %q is not a nonzero hex number", kvs[0].Value)
	}
	return epoch, nil
}

// event applies one change of the log. It reports when the watch reaches
// this session's catch-up marker, and fails when this front end's lease
// has ended. Until the catch-up, touched gathers the pools of the ops
// applied (nil after).
func (e *etcdStore) event(ev *clientv3.Event, front uint64, mark int64, pr *pruner, touched map[string]bool) (caughtUp bool, err error) {
	key := string(ev.Kv.Key)
	switch {
	case strings.HasPrefix(key, etcdOps):
		if ev.Type != mvccpb.PUT || ev.Kv.Version != 1 {
			return false, nil // a retried write (applied the first time), or a pool's ops pruned
		}
		o, ended := e.applyKV(ev.Kv, pr)
		if o == nil {
			return false, nil
		}
		if pool := opPool(o); pool != "" && touched != nil {
			touched[pool] = true
		}
		if o.front == front {
			pr.add(ended, ev.Kv.ModRevision)
		}
	case strings.HasPrefix(key, etcdFronts) && ev.Type == mvccpb.DELETE:
		gone, err := strconv.ParseUint(key[len(etcdFronts):], 16, 64)
		if err != nil {
			return false, nil
		}
		if gone == front {
			return false, errors.New("this front end's lease in etcd ended")
		}
		if e.ready() == nil {
			e.proposeGone(front, gone)
		}
	case key == etcdSync+strconv.FormatUint(front, 16) && ev.Type == mvccpb.PUT && ev.Kv.ModRevision == mark:
		return true, nil
	}
	return false, nil
}

// applyKV applies the op in kv and returns it, with the pools it ended or
// found absent (nil for bytes that are no op). A pool's op under a key of
// the layout before pools had prefixes makes the pool one pr never prunes.
func (e *etcdStore) applyKV(kv *mvccpb.KeyValue, pr *pruner) (*op, []string) {
	o, err := decodeOp(kv.Value)
	if err != nil {
		e.log.Error("skipping an op that cannot be read", zap.String("key", string(kv.Key)), zap.Error(err))
		return nil, nil
	}
	key := string(kv.Key)
	if pool := opPool(o); pool != "" && !strings.HasPrefix(key, etcdPoolOps) {
		pr.keep(pool)
	}
	return o, e.applyLogged(o, kv.CreateRevision)
}

// serve opens the front end for joins once it has read the log, and has
// the front ends that ended while none was watching reported, on a
// goroutine of wg's (the watch goes on meanwhile): the members they still
// own die.
func (e *etcdStore) serve(ctx context.Context, cli *clientv3.Client, front uint64, wg *sync.WaitGroup) {
	e.mu.Lock()
	e.notReady = nil
	e.mu.Unlock()
	e.log.Info("serving from etcd", zap.String("front", strconv.FormatUint(front, 16)))
	wg.Go(func() { e.reportGone(ctx, cli, front) })
}

// reportGone reports the front ends that own members here and hold no key
// under etcdFronts.
func (e *etcdStore) reportGone(ctx context.Context, cli *clientv3.Client, front uint64) {
	cctx, cancel := context.WithTimeout(ctx, etcdCallTimeout)
	resp, err := cli.Get(cctx, etcdFronts, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot list the live front ends", zap.Error(err))
		}
		return
	}
	live := make(map[uint64]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if id, err := strconv.ParseUint(string(kv.Key[len(etcdFronts):]), 16, 64); err == nil {
			live[id] = true
		}
	}
	e.s.mu.Lock()
	gone := make(map[uint64]bool)
	for _, p := range e.s.pools {
		for _, m := range p.members {
			if f := m.owner.front; !live[f] && f != front {
				gone[f] = true
			}
		}
	}
	e.s.mu.Unlock()
	for f := range gone {
		e.proposeGone(front, f)
	}
}

// proposeGone reports that front end gone has ended.
func (e *etcdStore) proposeGone(front, gone uint64) {
	o := &op{kind: opFrontGone, front: front, gone: gone, req: &message{Kind: kindLeave}}
	e.wg.Go(func() {
		ctx, cancel := context.WithTimeout(e.ctx, e.ttl)
		defer cancel()
		if err := e.submit(ctx, o); err != nil && e.ctx.Err() == nil {
			e.log.Warn("cannot report an ended front end", zap.String("front", strconv.FormatUint(gone, 16)), zap.Error(err))
		}
	})
}

// health keeps the lease alive, once a second, and reports when etcd has
// not answered for stepDown or the lease has ended.
func (e *etcdStore) health(ctx context.Context, cli *clientv3.Client, lease clientv3.LeaseID, sick chan<- error) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := cli.KeepAliveOnce(cctx, lease)
		cancel()
		switch {
		case err == nil:
			lastOK = time.Now()
		case ctx.Err() != nil:
			return
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			sick <- fmt.Errorf("this front end's lease in etcd ended: %w", err)
			return
		case time.Since(lastOK) >= e.stepDown:
			sick <- fmt.Errorf("no answer from etcd for %v: %w", time.Since(lastOK).Round(time.Millisecond), err)
			return
		}
	}
}
