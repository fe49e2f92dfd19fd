package nio

import (
	"fmt"
	"strings"

	"github.com/ibisgo/ibis/ipl"
)

// Flavour says who does a port's I/O.
type Flavour int

const (
	// Blocking: the goroutine of the program (or of the port's upcall dispatcher) reads
	// or writes the socket itself. A blocking receive port reads a single connection.
	Blocking Flavour = iota + 1
	// NonBlocking: the instance's gnet event loops read and write; a send queues
	// reference-counted buffers, a receive takes a connection with a whole message.
	NonBlocking
	// Thread: one dedicated event-loop goroutine of the instance does all the reading
	// and writing of the ports of this flavour.
	Thread
)

var flavourNames = map[Flavour]string{Blocking: "blocking", NonBlocking: "nonblocking", Thread: "thread"}

// String returns the flavour's name as capabilities, properties and the environment
// spell it ("blocking", "nonblocking", "thread"), so that errors and logs name it the
// way a user would write it.
func (f Flavour) String() string {
	if s, ok := flavourNames[f]; ok {
		return s
	}
	return fmt.Sprintf("Flavour(%d)", int(f))
}

// ParseFlavour reads a flavour name as the properties, flags and environment give it.
func ParseFlavour(s string) (Flavour, error) {
	for f, name := range flavourNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("nio: unknown flavour %q (want blocking, nonblocking or thread)", s)
}

// Port capabilities that force a flavour. They belong in the port type, so both ends of
// a connection declare them.
const (
	SendPortBlocking       = "sendport.blocking"
	SendPortNonBlocking    = "sendport.nonblocking"
	SendPortThread         = "sendport.thread"
	ReceivePortBlocking    = "receiveport.blocking"
	ReceivePortNonBlocking = "receiveport.nonblocking"
	ReceivePortThread      = "receiveport.thread"
)

var (
	sendCaps    = map[string]Flavour{SendPortBlocking: Blocking, SendPortNonBlocking: NonBlocking, SendPortThread: Thread}
	receiveCaps = map[string]Flavour{ReceivePortBlocking: Blocking, ReceivePortNonBlocking: NonBlocking, ReceivePortThread: Thread}
)

// Where a forced flavour for every port can come from, below the port type.
const (
	// PropertySend and PropertyReceive are the ipl properties (ipl.WithProperty, or the
	// -property flag of ipl.Flags) that force a flavour for every port that can have it.
	PropertySend    = "nio.send"
	PropertyReceive = "nio.receive"
	// EnvSend and EnvReceive do the same from the environment.
	EnvSend    = "IBIS_NIO_SEND"
	EnvReceive = "IBIS_NIO_RECEIVE"
)

func init() {
	for c := range sendCaps {
		ipl.RegisterCapability(c, Name)
	}
	for c := range receiveCaps {
		ipl.RegisterCapability(c, Name)
	}
}

// chooser picks the flavour of each port: a capability in the port type wins; then the
// instance's forced choice (property, else environment); else the port type decides.
type chooser struct {
	send, receive Flavour // forced for the instance, 0 when not
}

func newChooser(cfg *ipl.Config) (chooser, error) {
	var c chooser
	var err error
	if c.send, err = forced(cfg, PropertySend, EnvSend); err != nil {
		return c, err
	}
	c.receive, err = forced(cfg, PropertyReceive, EnvReceive)
	return c, err
}

func forced(cfg *ipl.Config, prop, env string) (Flavour, error) {
	v, from := cfg.Property(prop), "property "+prop+" (or $"+env+")"
	if v == "" {
		return 0, nil
	}
	f, err := ParseFlavour(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", from, err)
	}
	return f, nil
}

// explicit returns the flavour a port type names, if any.
func explicit(pt ipl.PortType, caps map[string]Flavour, side string) (Flavour, error) {
	var found []string
	var f Flavour
	for c, fl := range caps {
		if pt.Has(c) {
			found = append(found, c)
			f = fl
		}
	}
	if len(found) > 1 {
		return 0, fmt.Errorf("%w: port type %s names %d %s flavours (%s); give one", ipl.ErrInvalidPortType, pt, len(found), side, strings.Join(found, ", "))
	}
	return f, nil
}

// sendFlavour: one-to-many ports queue (a multicast shares one buffer), the others
// write on the caller's goroutine.
func (c chooser) sendFlavour(pt ipl.PortType) (Flavour, error) {
	if f, err := explicit(pt, sendCaps, "send"); f != 0 || err != nil {
		return f, err
	}
	if c.send != 0 {
		return c.send, nil
	}
	if pt.OneToMany() {
		return NonBlocking, nil
	}
	return Blocking, nil
}

// receiveFlavour: many-to-one ports are served by the event loop, the others read
// their single connection on the receiver's goroutine. A forced blocking flavour does
// not apply to many-to-one ports (it cannot serve them); a blocking capability in a
// many-to-one port type is an error.
func (c chooser) receiveFlavour(pt ipl.PortType) (Flavour, error) {
	f, err := explicit(pt, receiveCaps, "receive")
	if err != nil {
		return 0, err
	}
	if f == Blocking && pt.ManyToOne() {
		return 0, fmt.Errorf("%w: %s reads a single connection, but port type %s is many-to-one; use %s or %s",
			ipl.ErrUnsupported, ReceivePortBlocking, pt, ReceivePortNonBlocking, ReceivePortThread)
	}
	if f != 0 {
		return f, nil
	}
	if c.receive != 0 && (c.receive != Blocking || !pt.ManyToOne()) {
		return c.receive, nil
	}
	if pt.ManyToOne() {
		return NonBlocking, nil
	}
	return Blocking, nil
}
