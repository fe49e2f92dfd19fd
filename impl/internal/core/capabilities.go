package core

import "github.com/ibisgo/ibis/ipl"

// PortCapabilities are the port capabilities every implementation built on core offers:
// the core implements all of them, whatever moves the bytes.
func PortCapabilities() []string {
	return []string{
		ipl.ConnectionOneToOne, ipl.ConnectionOneToMany, ipl.ConnectionManyToOne, ipl.ConnectionManyToMany,
		ipl.ConnectionUpcalls, ipl.ConnectionDowncalls, ipl.ConnectionTimeout,
		ipl.ReceiveExplicit, ipl.ReceiveTimeout, ipl.ReceivePoll, ipl.ReceiveAutoUpcalls, ipl.ReceivePollUpcalls,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.CommunicationNumbered,
		ipl.SerializationByte, ipl.SerializationData, ipl.SerializationObject,
	}
}

// RegistryCapabilities are the Ibis capabilities the central registry provides to an
// instance that joins it; a pool that can grow adds ipl.Malleable.
func RegistryCapabilities() []string {
	return []string{
		ipl.ClosedWorld, ipl.ElectionsStrict, ipl.ElectionsUnreliable, ipl.MembershipTotallyOrdered,
		ipl.MembershipUnreliable, ipl.Signals, ipl.Termination,
	}
}
