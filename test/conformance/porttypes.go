package conformance

import "github.com/ibisgo/ibis/ipl"

// Port types the suite uses; every member declares all of them.
var (
	// OneToOne is the plain explicit-receive object port.
	OneToOne = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationObject, ipl.ReceiveExplicit,
		ipl.ReceiveTimeout, ipl.ReceivePoll, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	// ManyToOne gathers numbered messages from several senders.
	ManyToOne = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.CommunicationNumbered,
		ipl.ConnectionDowncalls, ipl.ConnectionUpcalls)
	// OneToMany multicasts.
	OneToMany = ipl.MustPortType(ipl.ConnectionOneToMany, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls, ipl.ConnectionDowncalls)
	// Upcalls delivers to a message handler and reports connections.
	Upcalls = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationObject, ipl.ReceiveAutoUpcalls,
		ipl.ConnectionUpcalls, ipl.ConnectionDowncalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	// Mixed takes messages as upcalls or explicitly, switching at run time.
	Mixed = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.ReceiveAutoUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	// Direct is one-to-one with explicit receipt only: Receive reads the connection itself.
	Direct = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	// Bytes carries raw bytes only.
	Bytes = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationByte, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)

	// AllPortTypes lists them for ipl.WithPortTypes.
	AllPortTypes = []ipl.PortType{OneToOne, ManyToOne, OneToMany, Upcalls, Bytes, Mixed, Direct}
)
