package mpj

// Wildcards for receives and probes, as MPI_ANY_SOURCE and MPI_ANY_TAG.
const (
	// AnySource matches a message from any rank of the communicator.
	AnySource = -1
	// AnyTag matches a message with any tag.
	AnyTag = -1
	// MaxTag is the largest tag a program may use (tags are 0..MaxTag); MPI guarantees
	// at least 32767, mpj offers the int32 range.
	MaxTag = 1<<31 - 1
)

// Status describes a received or probed message: who sent it, with which tag, and what
// it holds. A receive with AnySource or AnyTag learns the actual source and tag here;
// a Probe learns the element count and type to allocate a buffer before receiving.
type Status struct {
	// Source is the sender's rank in the communicator.
	Source int
	// Tag is the message's tag.
	Tag int
	// Count is the number of elements the message holds (MPI_Get_count).
	Count int
	// Datatype is the element type of the message: a primitive type also for a 2-D
	// slice (whose rows travel as one sequence), Object for a slice of objects.
	Datatype Datatype
	// Elem is the Go element type of a message of objects ("main.Body"; empty for
	// primitive types), which the receive buffer's must be.
	Elem string
}
