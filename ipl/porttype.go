package ipl

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// PortType is a validated, immutable set of port capabilities. Only send and receive
// ports of equal types can be connected; the type also tells the implementation which
// machinery a port needs (multicast, upcalls, numbering, serialization).
type PortType struct {
	caps []string // sorted, unique
}

var extraCapabilities sync.Map // name -> implementation that registered it

// RegisterCapability lets an implementation add a port capability of its own (for example
// a flavour choice such as "sendport.nonblocking"), so that port types naming it validate.
// It is meant to be called from an implementation's init function.
func RegisterCapability(name, implementation string) {
	extraCapabilities.Store(name, implementation)
}

func knownPortCapability(name string) bool {
	if portCapabilities[name] {
		return true
	}
	_, ok := extraCapabilities.Load(name)
	return ok
}

// NewPortType validates caps and returns the port type they describe. It fails, naming
// the problem, when a name is unknown, when not exactly one connection kind is given,
// when no serialization is given, or when no way of receiving is given.
func NewPortType(caps ...string) (PortType, error) {
	set := make([]string, 0, len(caps))
	for _, c := range caps {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if IsIbisCapability(c) {
			return PortType{}, fmt.Errorf("%w: %q is an Ibis capability, not a port capability; pass it to New with WithCapabilities", ErrInvalidPortType, c)
		}
		if !knownPortCapability(c) {
			return PortType{}, fmt.Errorf("%w: unknown capability %q", ErrInvalidPortType, c)
		}
		if !slices.Contains(set, c) {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	pt := PortType{caps: set}
	var kinds []string
	for _, k := range connectionKinds {
		if pt.Has(k) {
			kinds = append(kinds, k)
		}
	}
	switch len(kinds) {
	case 0:
		return PortType{}, fmt.Errorf("%w: no connection kind; give exactly one of %s", ErrInvalidPortType, strings.Join(connectionKinds, ", "))
	case 1:
	default:
		return PortType{}, fmt.Errorf("%w: several connection kinds (%s); give exactly one", ErrInvalidPortType, strings.Join(kinds, ", "))
	}
	if !pt.HasAny(serializationKinds...) {
		return PortType{}, fmt.Errorf("%w: no serialization; give at least one of %s", ErrInvalidPortType, strings.Join(serializationKinds, ", "))
	}
	if !pt.HasAny(ReceiveExplicit, ReceiveAutoUpcalls, ReceivePollUpcalls) {
		return PortType{}, fmt.Errorf("%w: no way to receive; give %s, %s or %s", ErrInvalidPortType, ReceiveExplicit, ReceiveAutoUpcalls, ReceivePollUpcalls)
	}
	if pt.HasAny(ReceiveTimeout, ReceivePoll) && !pt.Has(ReceiveExplicit) {
		return PortType{}, fmt.Errorf("%w: %s and %s refine %s, which is missing", ErrInvalidPortType, ReceiveTimeout, ReceivePoll, ReceiveExplicit)
	}
	return pt, nil
}

// MustPortType is NewPortType for port types fixed at compile time; it panics on an
// invalid set, the way regexp.MustCompile does, so a typo fails at program start.
func MustPortType(caps ...string) PortType {
	pt, err := NewPortType(caps...)
	if err != nil {
		panic(err)
	}
	return pt
}

// Has reports whether the port type holds capability c.
func (p PortType) Has(c string) bool {
	_, ok := slices.BinarySearch(p.caps, c)
	return ok
}

// HasAny reports whether the port type holds at least one of caps.
func (p PortType) HasAny(caps ...string) bool {
	for _, c := range caps {
		if p.Has(c) {
			return true
		}
	}
	return false
}

// IsZero reports whether p is the zero PortType (never returned by NewPortType).
func (p PortType) IsZero() bool { return len(p.caps) == 0 }

// Capabilities returns the sorted capability names of the port type.
func (p PortType) Capabilities() []string { return slices.Clone(p.caps) }

// Equal reports whether p and q hold the same capabilities.
func (p PortType) Equal(q PortType) bool { return slices.Equal(p.caps, q.caps) }

// String lists the capabilities, comma separated; equal types give equal strings.
func (p PortType) String() string { return strings.Join(p.caps, ",") }

// Diff returns the capabilities only p has and those only q has, for error messages
// that tell a user exactly why two ports cannot be connected.
func (p PortType) Diff(q PortType) (onlyP, onlyQ []string) {
	for _, c := range p.caps {
		if !q.Has(c) {
			onlyP = append(onlyP, c)
		}
	}
	for _, c := range q.caps {
		if !p.Has(c) {
			onlyQ = append(onlyQ, c)
		}
	}
	return onlyP, onlyQ
}

// ConnectionKind returns the one connection capability of the port type.
func (p PortType) ConnectionKind() string {
	for _, k := range connectionKinds {
		if p.Has(k) {
			return k
		}
	}
	return ""
}

// OneToMany reports whether a send port of this type may connect to several receive ports.
func (p PortType) OneToMany() bool {
	return p.HasAny(ConnectionOneToMany, ConnectionManyToMany)
}

// ManyToOne reports whether a receive port of this type accepts several senders.
func (p PortType) ManyToOne() bool {
	return p.HasAny(ConnectionManyToOne, ConnectionManyToMany)
}

// Serialization returns the richest serialization the type allows:
// serialization.object, serialization.data or serialization.byte.
func (p PortType) Serialization() string {
	for _, s := range []string{SerializationObject, SerializationData, SerializationByte} {
		if p.Has(s) {
			return s
		}
	}
	return ""
}

// ParsePortType parses a comma-separated capability list, as String prints it.
func ParsePortType(s string) (PortType, error) {
	return NewPortType(strings.Split(s, ",")...)
}
