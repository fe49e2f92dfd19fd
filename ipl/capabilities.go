package ipl

// Capability names, spelled as in the Java Ibis so that its users find them. Port
// capabilities describe what a PortType needs; Ibis capabilities describe what the whole
// instance needs from its implementation and registry.
const (
	// ConnectionOneToOne: a send port connects to one receive port, which accepts one sender.
	ConnectionOneToOne = "connection.onetoone"
	// ConnectionOneToMany: a send port may connect to several receive ports (multicast).
	ConnectionOneToMany = "connection.onetomany"
	// ConnectionManyToOne: a receive port accepts several senders.
	ConnectionManyToOne = "connection.manytoone"
	// ConnectionManyToMany: both of the above.
	ConnectionManyToMany = "connection.manytomany"
	// ConnectionUpcalls: ports may report new and lost connections through handlers.
	ConnectionUpcalls = "connection.upcalls"
	// ConnectionDowncalls: ports may be asked for their new and lost connections.
	ConnectionDowncalls = "connection.downcalls"
	// ConnectionTimeout: connection set-up honours a timeout (always true in Ibis-Go).
	ConnectionTimeout = "connection.timeout"

	// ReceiveExplicit: messages are taken with ReceivePort.Receive.
	ReceiveExplicit = "receive.explicit"
	// ReceiveTimeout: explicit receives may time out (in Go every Receive takes a context).
	ReceiveTimeout = "receive.timeout"
	// ReceivePoll: ReceivePort.Poll checks for a message without blocking.
	ReceivePoll = "receive.poll"
	// ReceiveAutoUpcalls: messages are delivered to a handler as they arrive.
	ReceiveAutoUpcalls = "receive.autoupcalls"
	// ReceivePollUpcalls: messages are delivered to a handler from within Poll.
	ReceivePollUpcalls = "receive.pollupcalls"

	// CommunicationReliable: no message is lost while a connection lives.
	CommunicationReliable = "communication.reliable"
	// CommunicationFIFO: messages on one connection arrive in the order they were sent.
	CommunicationFIFO = "communication.fifo"
	// CommunicationNumbered: every message carries its send port's sequence number.
	CommunicationNumbered = "communication.numbered"

	// SerializationByte: messages hold bytes only.
	SerializationByte = "serialization.byte"
	// SerializationData: messages hold primitives, strings and primitive slices.
	SerializationData = "serialization.data"
	// SerializationObject: messages also hold arbitrary Go values.
	SerializationObject = "serialization.object"

	// ClosedWorld: the pool has a fixed size, known at start.
	ClosedWorld = "closed.world"
	// ElectionsStrict: every member sees the same winner of an election.
	ElectionsStrict = "elections.strict"
	// ElectionsUnreliable: elections may disagree under failures.
	ElectionsUnreliable = "elections.unreliable"
	// MembershipTotallyOrdered: every member sees joins, leaves and deaths in one order.
	MembershipTotallyOrdered = "membership.totally.ordered"
	// MembershipUnreliable: membership events may be missed or reordered.
	MembershipUnreliable = "membership.unreliable"
	// Signals: members can send each other signals through the registry.
	Signals = "signals"
	// Termination: a member can end the run for the whole pool.
	Termination = "termination"
	// Malleable: members may join and leave while the run goes on.
	Malleable = "malleable"
)

var connectionKinds = []string{ConnectionOneToOne, ConnectionOneToMany, ConnectionManyToOne, ConnectionManyToMany}

var serializationKinds = []string{SerializationByte, SerializationData, SerializationObject}

var portCapabilities = map[string]bool{
	ConnectionOneToOne: true, ConnectionOneToMany: true, ConnectionManyToOne: true,
	ConnectionManyToMany: true, ConnectionUpcalls: true, ConnectionDowncalls: true,
	ConnectionTimeout: true, ReceiveExplicit: true, ReceiveTimeout: true, ReceivePoll: true,
	ReceiveAutoUpcalls: true, ReceivePollUpcalls: true, CommunicationReliable: true,
	CommunicationFIFO: true, CommunicationNumbered: true, SerializationByte: true,
	SerializationData: true, SerializationObject: true,
}

var ibisCapabilities = map[string]bool{
	ClosedWorld: true, ElectionsStrict: true, ElectionsUnreliable: true,
	MembershipTotallyOrdered: true, MembershipUnreliable: true, Signals: true,
	Termination: true, Malleable: true,
}

// IsPortCapability reports whether name is a capability a PortType may hold.
func IsPortCapability(name string) bool { return portCapabilities[name] }

// IsIbisCapability reports whether name is a capability of a whole Ibis instance.
func IsIbisCapability(name string) bool { return ibisCapabilities[name] }
