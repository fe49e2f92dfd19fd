package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibisgo/ibis/ipl"
)

// A variant is one implementation, with its nio flavours, that the latency
// experiment measures: "tcp", "nio" or "nio:SEND/RECEIVE" such as
// "nio:blocking/blocking".
type variant struct {
	Name          string // as given on the command line
	Impl          string
	Send, Receive string // nio flavours; "" leaves the choice to the implementation
}

// props are the implementation properties of the variant's instances.
func (v variant) props() map[string]string {
	p := map[string]string{}
	if v.Send != "" {
		p[propNioSend] = v.Send
	}
	if v.Receive != "" {
		p[propNioReceive] = v.Receive
	}
	return p
}

// options are the ipl options that make an instance of the variant.
func (v variant) options() []ipl.Option {
	opts := []ipl.Option{ipl.WithImplementation(v.Impl)}
	for k, val := range v.props() {
		opts = append(opts, ipl.WithProperty(k, val))
	}
	return opts
}

// parseVariants parses -variants: a comma-separated list of IMPL or
// IMPL:SEND/RECEIVE, flavours for nio only, each variant once.
func parseVariants(s string) ([]variant, error) {
	var out []variant
	for _, item := range parseList(s) {
		v := variant{Name: item, Impl: item}
		if impl, fl, ok := strings.Cut(item, ":"); ok {
			send, recv, ok := strings.Cut(fl, "/")
			if !ok || !slices.Contains(nioFlavours, send) || !slices.Contains(nioFlavours, recv) {
				return nil, fmt.Errorf("%w: -variants: %q: want IMPL:SEND/RECEIVE with flavours %s", errUsage, item, strings.Join(nioFlavours, ", "))
			}
			if impl != "nio" {
				return nil, fmt.Errorf("%w: -variants: %q: flavours apply to nio only", errUsage, item)
			}
			v.Impl, v.Send, v.Receive = impl, send, recv
		}
		if !slices.Contains(ipl.Implementations(), v.Impl) {
			return nil, fmt.Errorf("%w: -variants: %q is not linked in (have %s)", ipl.ErrNoImplementation, v.Impl, strings.Join(ipl.Implementations(), ", "))
		}
		if slices.ContainsFunc(out, func(o variant) bool { return o.Name == v.Name }) {
			return nil, fmt.Errorf("%w: -variants: %q given twice", errUsage, item)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: -variants is empty", errUsage)
	}
	return out, nil
}
