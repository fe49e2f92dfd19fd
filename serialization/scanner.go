package serialization

// Scanner follows the packet and message structure of a stream that arrives in pieces,
// without reading its values: a transport that is pushed bytes by an event loop uses
// it to know, as the bytes come, whether the next message can be started without
// waiting, where messages end, and whether the stream is broken or closed, so that it
// hands a Reader only what the Reader can go through. Every header goes through the
// same checks the Reader applies (framing.next), so a Scanner stops, with the Reader's
// error, exactly where a Reader with the same options would fail at a header. It does
// not check what only a Reader of the values sees (padding, objects, reads that do not
// mirror the writes).
//
// A Scanner copies nothing but a partial header and allocates nothing per packet. Its
// zero value applies the default limits; NewScanner applies a Reader's options. It is
// not safe for concurrent use.
type Scanner struct {
	frm  framing
	hdr  [HeaderSize]byte
	hdrN int   // bytes of the next header seen so far
	skip int64 // body bytes of the current packet still to come
	// The current packet: the first of its message, a bulk one.
	first, bulk bool
	err         error // why the stream cannot go on: sticky
}

// ScanEvent is a set of the things a Scanner met at a position of the stream; Feed
// stops at each position that has any.
type ScanEvent uint8

// The events of a Scanner. Several can happen at one position: the whole first and
// only packet of a message is both its start and its end.
const (
	// ScanStart: a message can now be started without waiting for more bytes. Its
	// first packet is whole or, for a bulk packet, its header is: a Reader streams a
	// bulk body as it is read, so Next does not wait for it. Each message starts once.
	ScanStart ScanEvent = 1 << iota
	// ScanEnd: the last packet of a message is whole; the position is a message
	// boundary.
	ScanEnd
	// ScanStop: the stream cannot go on; Err says why. Bytes after it are ignored.
	ScanStop
)

// NewScanner returns a Scanner that applies the limits opts set for a Reader
// (WithReaderMaxPacketSize, WithReaderMaxMessageSize): given the options of the Reader
// that will read the stream, it stops where that Reader would.
func NewScanner(opts ...ReaderOption) Scanner {
	cfg := newReaderConfig(opts)
	return Scanner{frm: cfg.framing()}
}

// Feed takes in the next bytes of the stream. It consumes p up to and including the
// first position where something happens, and returns how many bytes it consumed and
// what happened there (0 when it consumed all of p and nothing did). The caller feeds
// the rest of p again; how the stream is cut into calls changes nothing. Once stopped,
// Feed consumes everything and reports nothing more.
func (s *Scanner) Feed(p []byte) (n int, ev ScanEvent) {
	if s.err != nil {
		return len(p), 0
	}
	if s.frm.maxMessage == 0 {
		s.frm = zeroScannerFraming()
	}
	for n < len(p) {
		if s.skip > 0 {
			k := min(int64(len(p)-n), s.skip)
			s.skip -= k
			n += int(k)
			if s.skip == 0 {
				return n, s.packetDone()
			}
			continue
		}
		k := copy(s.hdr[s.hdrN:], p[n:])
		s.hdrN += k
		n += k
		if s.hdrN < HeaderSize {
			return n, 0
		}
		s.hdrN = 0
		if ev = s.header(); ev != 0 {
			return n, ev
		}
	}
	return n, 0
}

// header takes in the complete header in s.hdr.
func (s *Scanner) header() ScanEvent {
	first := !s.frm.mid
	var ph packetHeader
	if err := s.frm.next(&s.hdr, &ph); err != nil {
		s.err = err
		return ScanStop
	}
	s.first, s.bulk, s.skip = first, ph.flags&FlagBulk != 0, ph.padded
	var ev ScanEvent
	if s.first && s.bulk {
		ev = ScanStart
	}
	if s.skip == 0 {
		ev |= s.packetDone()
	}
	return ev
}

// packetDone notes that the current packet is whole.
func (s *Scanner) packetDone() ScanEvent {
	var ev ScanEvent
	if s.first && !s.bulk {
		ev = ScanStart
	}
	if !s.frm.mid {
		ev |= ScanEnd
	}
	return ev
}

// Err reports why the stream cannot go on, or nil while it can: ErrClosedByPeer
// itself when the sender closed it between messages (its goodbye: nothing follows),
// otherwise the error a Reader would return at that header (wrapping ErrCorrupt, or
// ErrClosedByPeer for a close inside a message).
func (s *Scanner) Err() error { return s.err }

// Mid reports whether bytes of a message that is not whole have arrived: part of a
// header, a packet whose body is still to come, or a message whose last packet has
// not come. A stopped Scanner reports where it stopped. A transport's stall watchdog
// uses it to tell a sender that stopped halfway through a message from an idle one.
func (s *Scanner) Mid() bool { return s.hdrN > 0 || s.skip > 0 || s.frm.mid }

// zeroScannerFraming is the framing of a zero Scanner: the default limits.
func zeroScannerFraming() framing {
	cfg := newReaderConfig(nil)
	return cfg.framing()
}
