package serialization

// Frame describes the packet whose header is hdr, for transports that cut a byte
// stream into messages without parsing it (an event loop deciding whether a whole
// message has arrived): size is the packet's length on the wire, header included, and
// flags its flag byte. ok is false when hdr is too short or is not a packet header
// (bad magic or byte order); the Reader reports what exactly is wrong when it gets to
// it. Frame only looks: it allocates nothing, whatever the counts claim. A transport
// that follows a whole stream as it arrives uses a Scanner instead, which keeps the
// message structure across packets and applies all of the Reader's header checks.
func Frame(hdr []byte) (size int64, flags byte, ok bool) {
	if len(hdr) < HeaderSize || hdr[0] != Magic || hdr[1] > orderBig {
		return 0, 0, false
	}
	o := orderOf(hdr[1])
	var body int64
	for i := range numSections {
		body += int64(o.Uint32(hdr[countsOffset+4*i:])) * int64(secSize[i])
	}
	return HeaderSize + pad8(body), hdr[2], true
}
