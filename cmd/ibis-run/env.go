package main

import (
	"crypto/rand"
	"slices"
	"strconv"
	"strings"

	"github.com/ibisgo/ibis/ipl"
)

// envRank is the launch index of a process. Unlike the other variables it is not read by ipl:
// the registry assigns Ibis identities. It is there for scripts and log file names.
const envRank = "IBIS_RANK"

// poolEnv holds what every process of the pool is told.
type poolEnv struct {
	registry  string
	pool      string
	size      int
	impl      string            // "" leaves an inherited IBIS_IMPL alone
	heartbeat string            // "" leaves an inherited IBIS_HEARTBEAT alone
	death     string            // "" leaves an inherited IBIS_DEATH_TIMEOUT alone
	extra     map[string]string // further variables to set (-secret, -tls)
	drop      []string          // inherited variables to leave out
}

// childEnv returns the environment function for launch.WithEnv: base (ibis-run's own
// environment) without the variables ibis-run sets, plus those variables. The variables a
// process inherited are replaced, never duplicated, so that every reader sees the same value.
func childEnv(base []string, p poolEnv) func(index int) []string {
	set := map[string]string{
		ipl.EnvRegistry: p.registry,
		ipl.EnvPool:     p.pool,
		ipl.EnvPoolSize: strconv.Itoa(p.size),
	}
	if p.impl != "" {
		set[ipl.EnvImpl] = p.impl
	}
	if p.heartbeat != "" {
		set[ipl.EnvHeartbeat] = p.heartbeat
	}
	if p.death != "" {
		set[ipl.EnvDeathTimeout] = p.death
	}
	for k, v := range p.extra {
		set[k] = v
	}
	common := make([]string, 0, len(base)+len(set)+1)
	for _, kv := range base {
		key, _, _ := strings.Cut(kv, "=")
		if _, ours := set[key]; ours || key == envRank || slices.Contains(p.drop, key) {
			continue
		}
		common = append(common, kv)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		common = append(common, k+"="+set[k])
	}
	common = slices.Clip(common)
	return func(index int) []string {
		return append(common, envRank+"="+strconv.Itoa(index))
	}
}

// randomPoolName returns a fresh pool name, so that two runs sharing an external registry do
// not end up in one pool by accident.
func randomPoolName() string {
	return "ibis-run-" + strings.ToLower(rand.Text()[:16])
}
