package registry

import "fmt"

// ProtocolVersion is the version of the wire protocol spoken by this
// package. A join request carries it; the server refuses a client that
// speaks another version with an error wrapping ErrVersion.
const ProtocolVersion = 1

// MaxStringLength bounds every string on the wire (pool names, addresses,
// tags, election, signal, sequence and port names): 64 KiB. Longer
// arguments are refused with ErrInvalid before anything is sent.
const MaxStringLength = 64 << 10

const (
	// maxKeyLength bounds message keys; ours are at most three bytes.
	maxKeyLength = 64
	// maxTargets bounds the targets of one signal.
	maxTargets = 1 << 16
	// maxSkipDepth bounds the nesting of unknown values skipped for forward
	// compatibility, so hostile input cannot recurse deeply.
	maxSkipDepth = 4
	// maxPoolSize bounds a closed-world pool size.
	maxPoolSize = 1 << 24
)

// msgKind says what a message is. Requests go from client to server,
// replies, events and pings from server to client.
type msgKind uint8

const (
	kindJoin           msgKind = 1
	kindLeave          msgKind = 2
	kindHeartbeat      msgKind = 3
	kindElect          msgKind = 4
	kindElectionResult msgKind = 5
	kindSignal         msgKind = 6
	kindTerminate      msgKind = 7
	kindSequence       msgKind = 8
	kindBind           msgKind = 9
	kindLookup         msgKind = 10
	kindUnbind         msgKind = 11
	kindCancel         msgKind = 12

	kindReply msgKind = 64
	kindEvent msgKind = 65
	kindPing  msgKind = 66
)

var kindNames = map[msgKind]string{
	kindJoin:           "join",
	kindLeave:          "leave",
	kindHeartbeat:      "heartbeat",
	kindElect:          "elect",
	kindElectionResult: "election-result",
	kindSignal:         "signal",
	kindTerminate:      "terminate",
	kindSequence:       "sequence",
	kindBind:           "bind",
	kindLookup:         "lookup",
	kindUnbind:         "unbind",
	kindCancel:         "cancel",
	kindReply:          "reply",
	kindEvent:          "event",
	kindPing:           "ping",
}

func (k msgKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

func (k msgKind) known() bool {
	_, ok := kindNames[k]
	return ok
}

// errCode classifies an error reply so the client can wrap the matching
// sentinel error.
type errCode uint8

const (
	codeNone         errCode = 0
	codeProtocol     errCode = 1
	codeVersion      errCode = 2
	codePoolClosed   errCode = 3
	codeNotMember    errCode = 4
	codePoolSize     errCode = 5
	codeAlreadyBound errCode = 6
	codeNotBound     errCode = 7
	codeInvalid      errCode = 8
	codeTooMany      errCode = 9
	codeClosed       errCode = 10
)

// sentinel returns the sentinel error for an error code.
func (c errCode) sentinel() error {
	switch c {
	case codeVersion:
		return ErrVersion
	case codePoolClosed:
		return ErrPoolClosed
	case codeNotMember:
		return ErrNotMember
	case codePoolSize:
		return ErrPoolSize
	case codeAlreadyBound:
		return ErrAlreadyBound
	case codeNotBound:
		return ErrNotBound
	case codeInvalid:
		return ErrInvalid
	case codeTooMany:
		return ErrTooManyRequests
	case codeClosed:
		return ErrClosed
	default:
		return ErrProtocol
	}
}

// message is the body of every frame. Which fields are meaningful depends on
// Kind (see doc.go); zero fields are not sent.
type message struct {
	Kind      msgKind     // "k"
	ID        uint64      // "i": request id; a reply carries its request's id
	Version   uint64      // "v": protocol version (join)
	Pool      string      // "p": pool name (join)
	PoolSize  int64       // "n": closed-world size (join, join reply)
	Address   string      // "a": member address (join)
	Tag       string      // "t": member tag (join)
	Name      string      // "s": election, signal, sequence or global name
	Port      string      // "o": port name (bind, lookup reply)
	Targets   []string    // "to": member IDs a signal goes to (empty: all)
	Member    *Identifier // "m": identity (join reply), winner, name owner
	Event     *Event      // "e": the event of an event message
	Value     int64       // "x": sequence number (sequence reply)
	Heartbeat int64       // "h": heartbeat interval in nanoseconds (join reply)
	MaxFrame  int64       // "f": server's maximum frame size (join reply)
	Code      errCode     // "c": error class (error reply)
	Error     string      // "err": error explanation (error reply)
}

// Keys of the message map.
const (
	keyKind      = "k"
	keyID        = "i"
	keyVersion   = "v"
	keyPool      = "p"
	keyPoolSize  = "n"
	keyAddress   = "a"
	keyTag       = "t"
	keyName      = "s"
	keyPort      = "o"
	keyTargets   = "to"
	keyMember    = "m"
	keyEvent     = "e"
	keyValue     = "x"
	keyHeartbeat = "h"
	keyMaxFrame  = "f"
	keyCode      = "c"
	keyError     = "err"
)
