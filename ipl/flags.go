package ipl

import "flag"

// Flags registers the common Ibis flags (-impl, -registry, -pool, -pool-size, -host)
// on fs and returns a function that turns the parsed values into Options. Flags left
// unset add no option, so the environment still applies; flags set win over it.
//
//	opts := ipl.Flags(flag.CommandLine)
//	flag.Parse()
//	ibis, err := ipl.New(ctx, append(opts(), ipl.WithPortTypes(pt))...)
func Flags(fs *flag.FlagSet) func() []Option {
	impl := fs.String("impl", "", "Ibis implementation (tcp, ...); default: $"+EnvImpl+" or the first that fits")
	reg := fs.String("registry", "", "registry server host:port; default: $"+EnvRegistry+" or an embedded one")
	pool := fs.String("pool", "", "pool name; default: $"+EnvPool)
	size := fs.Int("pool-size", 0, "closed-world pool size; default: $"+EnvPoolSize)
	host := fs.String("host", "", "host/IP to listen on; default: $"+EnvHost+" or 127.0.0.1")
	return func() []Option {
		var o []Option
		if *impl != "" {
			o = append(o, WithImplementation(*impl))
		}
		if *reg != "" {
			o = append(o, WithRegistry(*reg))
		}
		if *pool != "" {
			o = append(o, WithPool(*pool))
		}
		if *size > 0 {
			o = append(o, WithPoolSize(*size))
		}
		if *host != "" {
			o = append(o, WithListenHost(*host))
		}
		return o
	}
}
