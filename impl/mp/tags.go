//go:build mpi

package mp

// Tag layout on the engine's communicator. A connection is a virtual stream from the
// dialling rank to the accepting rank, numbered by the dialler; its number c gives two
// tags, so that (source rank, tag) names the connection and its direction:
//
//	tagRequest     dialler -> acceptor: 4-byte big-endian c, then core's handshake request
//	fwdTag(c)      dialler -> acceptor: the packets; an empty message ends the stream
//	               (clean close, or a dial given up before its reply came)
//	revTag(c)      acceptor -> dialler: core's handshake reply; then credit messages
//	               (credit.go); an empty message says the acceptor dropped the connection
//
// The engine probes with MPI_ANY_TAG, so the messages from one rank are matched in the
// order they were sent, whatever their tags.
const (
	tagRequest  = 1
	tagConnBase = 2
)

func fwdTag(c uint32) int { return tagConnBase + 2*int(c) }
func revTag(c uint32) int { return tagConnBase + 2*int(c) + 1 }

// parseTag returns the connection and direction of a connection tag.
func parseTag(tag int) (c uint32, rev, ok bool) {
	if tag < tagConnBase {
		return 0, false, false
	}
	t := tag - tagConnBase
	return uint32(t / 2), t%2 == 1, true
}

// maxConnID is the largest connection number whose tags stay within MPI_TAG_UB.
func maxConnID(tagUB int) uint32 {
	return uint32(min((tagUB-tagConnBase-1)/2, 1<<31-1))
}

// connKey names a connection by the dialler's rank and its number.
func connKey(rank int, c uint32) uint64 { return uint64(rank)<<32 | uint64(c) }
