package dc

import (
	"fmt"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// Algorithm is a work-stealing algorithm: how an idle process picks its victims.
type Algorithm int

const (
	// RS is random stealing: an idle process asks a random other process for a job,
	// waits for the answer, and on "none" asks another.
	RS Algorithm = iota
	// CRS is cluster-aware random stealing (Satin): random synchronous steals inside the
	// process's own site and, at the same time, at most one asynchronous steal from a
	// random process of another site, so that wide-area latency is hidden behind local work.
	CRS
	// TRS is transitive random stealing (Jcluster): a thief asks the process it last stole
	// from first; a victim with nothing to give forwards the request to the process it last
	// stole from, instead of answering "none".
	TRS
)

// String returns the flag spelling: "rs", "crs" or "trs".
func (a Algorithm) String() string {
	switch a {
	case RS:
		return "rs"
	case CRS:
		return "crs"
	case TRS:
		return "trs"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm reads a flag's spelling of an algorithm (rs, crs, trs; any case).
func ParseAlgorithm(s string) (Algorithm, error) {
	switch strings.ToLower(s) {
	case "rs":
		return RS, nil
	case "crs":
		return CRS, nil
	case "trs":
		return TRS, nil
	}
	return 0, fmt.Errorf("%w: steal algorithm %q (want rs, crs or trs)", ipl.ErrInvalidArgument, s)
}

// Set implements flag.Value, for -steal.
func (a *Algorithm) Set(s string) error {
	v, err := ParseAlgorithm(s)
	if err == nil {
		*a = v
	}
	return err
}

// Option configures a Runtime.
type Option func(*options)

type options struct {
	algo         Algorithm
	log          *zap.Logger
	stealTimeout time.Duration
	sendTimeout  time.Duration
	seed         int64
	wanDelay     time.Duration
}

// WithAlgorithm chooses the steal algorithm (default RS).
func WithAlgorithm(a Algorithm) Option { return func(o *options) { o.algo = a } }

// WithLogger gives the runtime a logger (default: none).
func WithLogger(l *zap.Logger) Option { return func(o *options) { o.log = l } }

// WithStealTimeout bounds sending a steal request and waiting for its answer (default
// 10 s): a request lost with a process that died, or to one without dc's port, counts as
// refused after it.
func WithStealTimeout(d time.Duration) Option { return func(o *options) { o.stealTimeout = d } }

// WithSendTimeout bounds connecting to a peer and sending it one message (default 60 s).
func WithSendTimeout(d time.Duration) Option { return func(o *options) { o.sendTimeout = d } }

// WithSeed seeds the choice of victims (default: from the clock and the process), for
// runs that should choose alike.
func WithSeed(s int64) Option { return func(o *options) { o.seed = s } }

// WithWideAreaDelay emulates a wide area between sites: every message to a process of
// another site leaves d after it was sent (in order per destination), as over a link of
// latency d. It stands in for kernel-level emulation (tc netem) on machines without it;
// see scripts/dc-sites.sh. Data of the Ibis itself (connection set-up, the registry) is
// not delayed.
func WithWideAreaDelay(d time.Duration) Option { return func(o *options) { o.wanDelay = d } }

// EnvWideAreaDelay names the environment variable the applications read for
// WithWideAreaDelay (a Go duration, such as 10ms).
const EnvWideAreaDelay = "IBIS_DC_WAN_DELAY"

// EnvSite names the environment variable that holds a process's site, for CRS and the
// wide-area statistics; IbisOptions puts it in the Ibis's tag.
const EnvSite = "IBIS_SITE"

// IbisOptions returns what an Ibis for dc must be created with (add them to the
// program's own options for ipl.New): dc's port type, and the process's site as its tag
// (from IBIS_SITE; processes without one share the site ""). A process's site is its
// identifier's tag: every process learns every other's from the registry.
func IbisOptions() []ipl.Option {
	opts := []ipl.Option{ipl.WithPortTypes(PortType), ipl.WithCapabilities(ipl.ElectionsStrict, ipl.MembershipTotallyOrdered, ipl.Termination)}
	if s, ok := os.LookupEnv(EnvSite); ok {
		opts = append(opts, ipl.WithTag(s))
	}
	return opts
}

// PortType is the port type dc's messages travel on: each process has one many-to-one
// receive port, drained by a dispatcher goroutine, and a send port to each peer it talks
// to, connected when first needed.
var PortType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationObject, ipl.SerializationData,
	ipl.ReceiveExplicit, ipl.CommunicationReliable, ipl.CommunicationFIFO)

// portName is the name of every process's dc receive port.
const portName = "dc"
