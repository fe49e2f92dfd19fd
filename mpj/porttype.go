package mpj

import "github.com/ibisgo/ibis/ipl"

// PortType is the one port type mpj uses: every process has one many-to-one receive
// port of it, into which every peer's send port (one per peer) is connected. Explicit
// receipt lets mpj's own dispatcher goroutine drain it; connection upcalls tell mpj
// when a peer's connection breaks, so that pending operations fail instead of hanging.
// The Ibis given to Init must have declared it (ipl.WithPortTypes(mpj.PortTypes()...)).
var PortType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData,
	ipl.ReceiveExplicit, ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)

// PortTypes returns the port types an Ibis must declare for Init, for ipl.WithPortTypes.
func PortTypes() []ipl.PortType { return []ipl.PortType{PortType} }

// portName is the name of each process's mpj receive port.
const portName = "mpj"
