package ipl

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Flags registers the common Ibis flags (-impl, -registry, -pool, -pool-size, -host,
// and -property key=value, which may be repeated, for implementation properties such as
// nio.send) on fs and returns a function that turns the parsed values into Options. Flags left
// unset add no option, so the environment still applies; flags set win over it.
//
//	opts := ipl.Flags(flag.CommandLine)
//	flag.Parse()
//	ibis, err := ipl.New(ctx, append(opts(), ipl.WithPortTypes(pt))...)
func Flags(fs *flag.FlagSet) func() []Option {
	impl := fs.String("impl", "", "Ibis implementation (tcp, ...); default: $"+EnvImpl+" or the first that fits")
	reg := fs.String("registry", "", "registry server host:port (or a comma-separated list of front ends); default: $"+EnvRegistry+" or an embedded one")
	pool := fs.String("pool", "", "pool name; default: $"+EnvPool)
	var size poolSizeFlag
	fs.Var(&size, "pool-size", "closed-world pool size; default: $"+EnvPoolSize)
	host := fs.String("host", "", "host/IP to listen on and publish; default: $"+EnvHost+", else every interface")
	props := map[string]string{}
	fs.Func("property", "an implementation property `key=value` (repeatable), e.g. nio.send=thread", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want key=value, got %q", s)
		}
		props[strings.TrimSpace(k)] = v
		return nil
	})
	return func() []Option {
		var o []Option
		for k, v := range props {
			o = append(o, WithProperty(k, v))
		}
		if *impl != "" {
			o = append(o, WithImplementation(*impl))
		}
		if *reg != "" {
			o = append(o, WithRegistry(*reg))
		}
		if *pool != "" {
			o = append(o, WithPool(*pool))
		}
		if size > 0 {
			o = append(o, WithPoolSize(int(size)))
		}
		if *host != "" {
			o = append(o, WithListenHost(*host))
		}
		return o
	}
}

// poolSizeFlag is -pool-size: a count, refused when negative as $IBIS_POOL_SIZE is.
type poolSizeFlag int

func (p *poolSizeFlag) String() string { return strconv.Itoa(int(*p)) }

func (p *poolSizeFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return errors.New("want a non-negative integer")
	}
	*p = poolSizeFlag(v)
	return nil
}
