package ipl

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Driver is an implementation of the IPL, registered under a short name with Register.
type Driver interface {
	// Capabilities lists every port and Ibis capability the implementation offers.
	Capabilities() []string
	// Open starts an instance with a complete, validated configuration.
	Open(ctx context.Context, cfg *Config) (Ibis, error)
}

type driverEntry struct {
	name     string
	priority int
	drv      Driver
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]driverEntry{}
)

// Register makes an implementation available under name. When New chooses by
// capability, lower priority values are tried first (tcp uses 0). Registering a name
// twice replaces the earlier driver, so tests can substitute one.
func Register(name string, priority int, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers[name] = driverEntry{name: name, priority: priority, drv: d}
}

// Implementations lists the registered implementation names in preference order.
func Implementations() []string {
	var names []string
	for _, e := range sortedDrivers() {
		names = append(names, e.name)
	}
	return names
}

func sortedDrivers() []driverEntry {
	driversMu.RLock()
	defer driversMu.RUnlock()
	list := make([]driverEntry, 0, len(drivers))
	for _, e := range drivers {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].priority != list[j].priority {
			return list[i].priority < list[j].priority
		}
		return list[i].name < list[j].name
	})
	return list
}

// required is every capability a configuration asks for.
func required(cfg *Config) []string {
	var req []string
	add := func(c string) {
		if !slices.Contains(req, c) {
			req = append(req, c)
		}
	}
	for _, c := range cfg.Capabilities {
		add(c)
	}
	for _, pt := range cfg.PortTypes {
		for _, c := range pt.caps {
			add(c)
		}
	}
	slices.Sort(req)
	return req
}

func missing(offered, req []string) []string {
	var miss []string
	for _, c := range req {
		if !slices.Contains(offered, c) {
			miss = append(miss, c)
		}
	}
	return miss
}

// choose picks the driver named by cfg, or the first whose capabilities cover req.
func choose(cfg *Config) (driverEntry, error) {
	req := required(cfg)
	list := sortedDrivers()
	if len(list) == 0 {
		return driverEntry{}, fmt.Errorf("%w: none is linked in; add a blank import such as _ \"github.com/ibisgo/ibis/impl/tcp\"", ErrNoImplementation)
	}
	if cfg.Implementation != "" {
		for _, e := range list {
			if e.name == cfg.Implementation {
				if miss := missing(e.drv.Capabilities(), req); len(miss) > 0 {
					return driverEntry{}, fmt.Errorf("%w: implementation %q lacks %s", ErrNoImplementation, e.name, strings.Join(miss, ", "))
				}
				return e, nil
			}
		}
		return driverEntry{}, fmt.Errorf("%w: %q is not linked in (have %s)", ErrNoImplementation, cfg.Implementation, strings.Join(Implementations(), ", "))
	}
	var why []string
	for _, e := range list {
		miss := missing(e.drv.Capabilities(), req)
		if len(miss) == 0 {
			return e, nil
		}
		why = append(why, fmt.Sprintf("%s lacks %s", e.name, strings.Join(miss, ", ")))
	}
	return driverEntry{}, fmt.Errorf("%w offers everything asked: %s", ErrNoImplementation, strings.Join(why, "; "))
}
