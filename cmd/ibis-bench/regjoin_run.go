package main

// One run of registry-join: start the store, the front ends and the member processes,
// let all members join at once, collect what they saw, and end every process.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// childGrace is how long a started process has to finish after its stdin closed
// (a front end closes its server and writes its profile) before it is killed.
const childGrace = 10 * time.Second

// childSlack is how much longer than the run a started process's own limit is, so
// that the run's limit is the one that ends a run which takes too long, and says so;
// the process's own limit only ends one that the run could not end.
const childSlack = time.Minute

// regjoinResult is what one run measured.
type regjoinResult struct {
	allSeen, medianSeen time.Duration
	joinMedian, joinMax time.Duration
	// Peak RSS in bytes, one per process (-1: unknown).
	frontRSS, etcdRSS, memberRSS []int64
	// CPU time (user and system) used from the start of the joins until the
	// last member reported, one per process.
	frontCPU, etcdCPU, memberCPU []time.Duration
	// frontWrites counts each front end's write system calls in that time.
	frontWrites []int64
	// perFront counts the members that joined at each front end.
	perFront []int
}

// regjoinOnce runs the experiment once, with processes of its own that it ends before
// it returns, also on failure and when ctx ends.
func regjoinOnce(ctx context.Context, e *env, f regjoinFlags, run int) (res regjoinResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	var (
		etcd    *etcdCluster
		fronts  []*child
		members []*child
	)
	defer func() {
		// Front ends first, so that they do not spend their last moments (and
		// their profiles) on the members' broken connections.
		endAll(fronts)
		endAll(members)
		if err != nil {
			// What the front ends logged (warnings and worse) tells why.
			for _, ch := range fronts {
				if t := strings.TrimSpace(ch.c.Stderr()); t != "" {
					err = fmt.Errorf("%w\n%s logged first:\n%s", err, ch.name, head(t, 15))
				}
			}
		}
		if etcd != nil {
			if serr := etcd.stop(); err == nil && serr != nil {
				err = serr
			}
		}
	}()
	endpoints := f.etcd
	if f.store == "etcd" {
		bin, err := findEtcd(f.etcdBin)
		if err != nil {
			return res, err
		}
		if etcd, err = startEtcd(ctx, bin, f.nodes); err != nil {
			return res, err
		}
		endpoints = etcd.endpoints()
	}
	base := regjoinRole{Etcd: endpoints, Pool: fmt.Sprintf("regjoin-%d-%d", os.Getpid(), run),
		Members: f.members, Timeout: f.timeout + childSlack}
	profile := func(kind string, i int) string {
		if f.profile == "" {
			return ""
		}
		return filepath.Join(f.profile, fmt.Sprintf("run%d-%s%d.pprof", run, kind, i))
	}
	args := append([]string{e.command}, e.args...)
	addrs := make([]string, f.fronts)
	for i := range f.fronts {
		r := base
		r.Role, r.Index, r.Profile = roleFront, i, profile("front", i)
		ch, err := startChild(ctx, fmt.Sprintf("front end %d", i), args, r)
		if err != nil {
			return res, err
		}
		fronts = append(fronts, ch)
	}
	for i, ch := range fronts {
		if addrs[i], err = ch.waitLine(ctx, "listening "); err != nil {
			return res, err
		}
	}
	for i := range f.procs {
		r := base
		r.Role, r.Index, r.Profile = roleMembers, i, profile("members", i)
		r.Count, r.Addrs = f.members/f.procs, strings.Join(addrs, ",")
		if i < f.members%f.procs {
			r.Count++
		}
		ch, err := startChild(ctx, fmt.Sprintf("member process %d", i), args, r)
		if err != nil {
			return res, err
		}
		members = append(members, ch)
	}
	for _, ch := range members {
		if _, err := ch.waitLine(ctx, "ready"); err != nil {
			return res, err
		}
	}
	procs := runProcs{}
	for _, ch := range fronts {
		procs.fronts = append(procs.fronts, ch.pid())
	}
	for _, ch := range members {
		procs.members = append(procs.members, ch.pid())
	}
	if etcd != nil {
		procs.etcd = etcd.pids()
	}
	before := procs.usage()
	start := time.Now()
	for _, ch := range members {
		if err := ch.send("go"); err != nil {
			return res, err
		}
	}
	// Results are taken as they come: one with a failed member ends the run
	// at once (the other processes' members wait for its Joined events in
	// vain).
	type reported struct {
		mr  membersResult
		err error
	}
	reports := make(chan reported, len(members))
	for _, ch := range members {
		go func() {
			line, err := ch.waitLine(ctx, "result ")
			var mr membersResult
			if err == nil {
				if err = json.Unmarshal([]byte(line), &mr); err != nil {
					err = fmt.Errorf("result of %s: %w", ch.name, err)
				}
			}
			reports <- reported{mr, err}
		}()
	}
	var results []membersResult
	for range members {
		r := <-reports
		if r.err != nil {
			return res, r.err
		}
		if len(r.mr.Errors) > 0 {
			_, err := summarize(start, []membersResult{r.mr}, addrs)
			return res, err
		}
		results = append(results, r.mr)
	}
	after := procs.usage()
	res, err = summarize(start, results, addrs)
	if err != nil {
		return res, err
	}
	procs.measured(&res, before, after)
	return res, nil
}

// summarize checks what the member processes saw (every member joined and saw every
// Joined event, all in the same order) and computes the run's figures.
func summarize(start time.Time, results []membersResult, addrs []string) (regjoinResult, error) {
	var res regjoinResult
	var errs []string
	var seen, joins []time.Duration
	var order uint64
	ordered, sameOrder := false, true
	perFront := map[string]int{}
	for _, mr := range results {
		errs = append(errs, mr.Errors...)
		for i, at := range mr.SeenUnixNS {
			joins = append(joins, time.Duration(mr.JoinNS[i]))
			if at == 0 {
				continue
			}
			seen = append(seen, time.Duration(at-start.UnixNano()))
			if !ordered {
				order, ordered = mr.Order[i], true
			}
			sameOrder = sameOrder && mr.Order[i] == order
		}
		for a, n := range mr.Fronts {
			perFront[a] += n
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("%d member(s) failed: %s", len(errs), firstErrors(errs, 3))
	}
	if !sameOrder {
		return res, fmt.Errorf("the members saw the Joined events in different orders")
	}
	slices.Sort(seen)
	slices.Sort(joins)
	res.allSeen, res.medianSeen = seen[len(seen)-1], seen[(len(seen)-1)/2]
	res.joinMedian, res.joinMax = joins[(len(joins)-1)/2], joins[len(joins)-1]
	for _, a := range addrs {
		res.perFront = append(res.perFront, perFront[a])
	}
	return res, nil
}

// endAll ends the children at once and waits until all are gone.
func endAll(chs []*child) {
	var wg sync.WaitGroup
	for _, ch := range chs {
		wg.Go(func() { ch.end(childGrace) })
	}
	wg.Wait()
}

// firstErrors lists up to n of errs, different ones first: most members that fail
// fail alike, because of the one that failed first.
func firstErrors(errs []string, n int) string {
	var out []string
	kinds := map[string]bool{}
	for _, e := range errs {
		kind, _, _ := strings.Cut(e, ":")
		if len(out) < n && !kinds[kind] {
			kinds[kind] = true
			out = append(out, e)
		}
	}
	return strings.Join(out, "; ")
}
