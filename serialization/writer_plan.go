package serialization

import "fmt"

// tooLarge is the error of a write the message limit refuses.
func (w *Writer) tooLarge(what string, size int64) error {
	by := ""
	if w.limitBy != "" {
		by = " (" + w.limitBy + ")"
	}
	return fmt.Errorf("%w: writing %s would make the message at least %d bytes, over the limit of %d bytes%s",
		ErrTooLarge, what, size, w.cfg.maxMessage, by)
}

// plan is a projection of the message size: it follows exactly the rules
// by which the Writer fills and seals packets, so a composite write can be
// checked against the message limit before any of it is written.
type plan struct {
	w      *Writer
	sealed int64
	body   int64
}

func (w *Writer) plan() plan { return plan{w: w, sealed: w.sealed, body: int64(w.body)} }

// small adds n bytes of esz-byte elements copied into small packets.
func (p *plan) small(n, esz int64) {
	if n <= 0 {
		return
	}
	mp := int64(p.w.cfg.maxPacket)
	room := mp - p.body
	room -= room % esz
	if n <= room {
		p.body += n
		return
	}
	p.sealed += HeaderSize + pad8(p.body+room)
	n -= room
	full := (n - 1) / mp // packets filled completely; mp is a multiple of esz
	p.sealed += full * (HeaderSize + mp)
	p.body = n - full*mp
}

// arr adds n bytes of slice data, as emitArr would write them.
func (p *plan) arr(n, esz int64) {
	if n <= 0 {
		return
	}
	if !p.w.useBulk(n) {
		p.small(n, esz)
		return
	}
	if p.body > 0 {
		p.sealed += HeaderSize + pad8(p.body)
		p.body = 0
	}
	chunk := p.w.bulkChunk(int(esz))
	full, rest := n/chunk, n%chunk
	p.sealed += full * (HeaderSize + pad8(chunk))
	if rest > 0 {
		p.sealed += HeaderSize + pad8(rest)
	}
}

// final is the size the message would have if it were finished now.
func (p *plan) final() int64 { return p.sealed + HeaderSize + pad8(p.body) }

// check refuses a plan over the message limit.
func (w *Writer) check(p plan, what string) error {
	if f := p.final(); f > w.cfg.maxMessage {
		return w.tooLarge(what, f)
	}
	return nil
}
