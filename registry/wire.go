package registry

import (
	"fmt"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// ProtocolVersion is the version of the wire protocol spoken by this
// package. A join request carries it; the server refuses a client that
// speaks a version outside [MinProtocolVersion, ProtocolVersion] with an
// error wrapping ErrVersion. Version 2 added rejoining a restarted server
// (see "Registry restarts" in the package doc); version 3 begins every
// connection with the pool check, after TLS if configured (see "Trust").
const ProtocolVersion = 3

// MinProtocolVersion is the oldest protocol version a server still serves.
// Clients of versions 1 and 2 do not begin with the pool check, so they
// cannot be served: the server closes their connections and logs them as
// clients of an older version, and a client of this version that meets an
// older server fails with an error wrapping ErrVersion.
const MinProtocolVersion = 3

// MaxPoolName bounds pool names: 1 KiB, the most the pool check carries.
// Join refuses a longer name with ErrInvalid.
const MaxPoolName = poolauth.MaxPoolName

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
	// maxRestoreItems bounds each list of a restore message (members,
	// elections, bindings, sequences), so that decoding one allocates at
	// most a few hundred KiB whatever the frame size; a member with more
	// to restore sends several restore messages.
	maxRestoreItems = 1 << 12
	// maxMemberNumber bounds the member numbers a rejoin may claim, so
	// that they convert to int everywhere.
	maxMemberNumber = 1<<31 - 1
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
	kindRestore        msgKind = 13
	kindResume         msgKind = 14

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
	kindRestore:        "restore",
	kindResume:         "resume",
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
	// codeRecovering: the pool is being rebuilt after a restart of the
	// server (or the server has just started and waits for the pools of
	// its previous run to come back); a join should be tried again soon.
	codeRecovering errCode = 11
	// codeUnavailable: the front end cannot reach its shared store now;
	// another front end (or this one, later) may serve the request. Its
	// error matches ErrUnavailable and ErrRegistryLost.
	codeUnavailable errCode = 12
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
	case codeRecovering:
		return ErrRegistryLost
	case codeUnavailable:
		return ErrUnavailable
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
	Death     int64       // "dt": death timeout in nanoseconds (join reply)
	Code      errCode     // "c": error class (error reply)
	Error     string      // "err": error explanation (error reply)

	// Rejoining a restarted server (protocol version 2).
	Rejoin  *Identifier    // "r": the identity to take again (join)
	Epoch   uint64         // "ep": the server's run (join reply); the lost server's run (rejoin)
	Flags   uint64         // "fl": flag* bits (join reply, resume)
	Members []Identifier   // "rm": members the rejoining member knows (restore)
	Won     []string       // "re": elections it won (restore)
	Bound   []boundName    // "rb": global names it bound (restore)
	Seqs    []sequenceMark // "rq": sequence numbers it drew (restore)
	LastSeq uint64         // "ls": the last event seq it received (resume)
	NextNum uint64         // "nx": one above the highest member number it heard of (resume)
	JoinSeq uint64         // "js": the seq of its own Joined event (resume)

	// JoinToken names one Join call through all its attempts (join), so
	// that a front end over a shared store knows a join it already made
	// when the reply was lost.
	JoinToken uint64 // "jt"
}

// boundName is a global name and its port, as restored after a restart.
type boundName struct {
	Name string
	Port string
}

// sequenceMark is the next number of a sequence as one member knows it:
// one above the largest it drew.
type sequenceMark struct {
	Name string
	Next int64
}

// Bits of message.Flags.
const (
	// flagRestartable (join reply): the server may be restarted, so a
	// client that loses it should try to rejoin; without it the client
	// gives up at once (an embedded server ends with its process).
	flagRestartable = 1 << 0
	// flagSawClosed (resume): the member saw the PoolClosed event.
	flagSawClosed = 1 << 1
	// flagSawTerminated (resume): the member saw the Terminated event; the
	// resume's Member is who terminated the pool.
	flagSawTerminated = 1 << 2
)

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
	keyDeath     = "dt"
	keyCode      = "c"
	keyError     = "err"
	keyRejoin    = "r"
	keyEpoch     = "ep"
	keyFlags     = "fl"
	keyMembers   = "rm"
	keyWon       = "re"
	keyBound     = "rb"
	keySeqs      = "rq"
	keyLastSeq   = "ls"
	keyNextNum   = "nx"
	keyJoinSeq   = "js"
	keyJoinToken = "jt"
)
