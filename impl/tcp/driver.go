package tcp

import (
	"context"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

// Name is the implementation's registered name.
const Name = "tcp"

func init() { ipl.Register(Name, 0, driver{}) }

type driver struct{}

// Capabilities: every port capability of the IPL and every Ibis capability the central
// registry provides.
func (driver) Capabilities() []string {
	return []string{
		ipl.ConnectionOneToOne, ipl.ConnectionOneToMany, ipl.ConnectionManyToOne, ipl.ConnectionManyToMany,
		ipl.ConnectionUpcalls, ipl.ConnectionDowncalls, ipl.ConnectionTimeout,
		ipl.ReceiveExplicit, ipl.ReceiveTimeout, ipl.ReceivePoll, ipl.ReceiveAutoUpcalls, ipl.ReceivePollUpcalls,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.CommunicationNumbered,
		ipl.SerializationByte, ipl.SerializationData, ipl.SerializationObject,
		ipl.ClosedWorld, ipl.ElectionsStrict, ipl.ElectionsUnreliable, ipl.MembershipTotallyOrdered,
		ipl.MembershipUnreliable, ipl.Signals, ipl.Termination, ipl.Malleable,
	}
}

func (driver) Open(ctx context.Context, cfg *ipl.Config) (ipl.Ibis, error) {
	return core.Open(ctx, cfg, Name, newTransport(cfg))
}
