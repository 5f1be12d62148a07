package manager

import "onic/tlp"

// TagBits is the width of the tags an O-NIC gives the non-posted
// requests it issues to its host for peers: 256 outstanding at once (the
// RTL's requester tag table, designs/internal/pcie4).
const TagBits = 8

// Tags is how many such requests may be outstanding.
const Tags = 1 << TagBits

// pending is one outstanding non-posted request the O-NIC issued to its
// host for a peer: what the completion must go back with, and where.
type pending struct {
	busy      bool
	port      Ingress // the optical port the request came in on
	requester tlp.ID  // the requester ID it came with (the peer's proxy ID)
	tag       uint16  // the tag it came with
	left      uint32  // bytes the completions still owe
}

// tagTable is the requester tag table. A request a peer sends the host
// leaves the O-NIC under the O-NIC's own requester ID (PG213: an endpoint
// issues requests as its function; Requester ID Enable is for root ports
// and switches) with a tag of the O-NIC's, so the host's root complex,
// which routes completions by requester ID (PCIe Base 6.0 §2.2.9), sends
// the completion to the O-NIC; the table puts the peer's requester ID and
// tag back and sends it out of the port the request came in on.
//
// Tags are given as the RTL gives them: the first free tag at or after a
// cursor that moves past each tag it gives.
type tagTable struct {
	e      [Tags]pending
	cursor uint16
	inUse  int
}

// alloc takes a tag for request t from port in, or reports that every
// tag is outstanding.
func (tt *tagTable) alloc(t *tlp.TLP, in Ingress) (uint16, bool) {
	if tt.inUse == Tags {
		return 0, false
	}
	for k := range uint16(Tags) {
		i := (tt.cursor + k) % Tags
		if tt.e[i].busy {
			continue
		}
		tt.e[i] = pending{busy: true, port: in, requester: t.RequesterID, tag: t.Tag, left: expectedBytes(t)}
		tt.cursor = (i + 1) % Tags
		tt.inUse++
		return i, true
	}
	return 0, false // not reached: inUse < Tags
}

// expectedBytes is how many bytes of data the completions of non-posted
// request t carry in all: a read's byte count from its byte enables
// (PCIe §2.3.1.1; a zero-length read's completion says 1), an
// AtomicOp's original value (the operand size: half a CAS's payload).
func expectedBytes(t *tlp.TLP) uint32 {
	switch t.Kind() {
	case tlp.MRd, tlp.MRdLk:
		n, _ := tlp.ReadByteCount(t.Address, t.Length, t.FirstBE, t.LastBE)
		return uint32(n)
	case tlp.CAS:
		return uint32(t.Length) * 2
	case tlp.FetchAdd, tlp.Swap:
		return uint32(t.Length) * 4
	}
	return 4 // I/O and configuration requests: one DW
}

// match finds the outstanding request completion c answers and checks
// c against it: its Byte Count must be what the request still awaits,
// and a successful completion with data must carry no more than that
// (PCIe §2.3.2 lets a receiver treat such a mismatch as an Unexpected
// Completion). It returns the entry's index, and whether c finishes the
// request: a completion with an error status ends it (§2.3.1), a
// successful one when its data reaches the end.
func (tt *tagTable) match(c *tlp.TLP) (i uint16, done, ok bool) {
	if c.Tag >= Tags {
		return 0, false, false // T9 and T8 are never set in the O-NIC's tags
	}
	e := &tt.e[c.Tag]
	if !e.busy {
		return 0, false, false
	}
	bc := uint32(c.ByteCount)
	if bc == 0 {
		bc = 4096 // §2.2.9: 0 means 4096
	}
	if c.Status != tlp.StatusSC {
		return c.Tag, true, true
	}
	if bc != e.left {
		return 0, false, false
	}
	if !c.Kind().HasData() {
		return 0, false, false // a successful completion of a read carries data
	}
	n := uint32(c.Length)*4 - uint32(c.LowerAddress&3)
	if c.Length == 0 {
		n = 4096 - uint32(c.LowerAddress&3)
	}
	if n >= bc {
		return c.Tag, true, true
	}
	return c.Tag, false, true
}

// settle accounts completion c against entry i: the bytes it carried,
// and the tag is free again if it finished the request.
func (tt *tagTable) settle(i uint16, c *tlp.TLP, done bool) {
	e := &tt.e[i]
	if done {
		*e = pending{}
		tt.inUse--
		return
	}
	e.left -= uint32(c.Length)*4 - uint32(c.LowerAddress&3)
}

// Outstanding returns how many requests the O-NIC has issued to its host
// for peers that are still waiting for completions.
func (m *Manager) Outstanding() int { return m.tags.inUse }

// matchReturn finds the request completion c, arriving back from the
// port a table of requests sent out of a port keeps, answers: the tag
// must be held and c must carry the proxy requester ID the request left
// with. It reports whether c finishes the request by c's own fields (a
// completion with an error status, or one whose data reaches its Byte
// Count: what the RTL can tell from one header). A successful completion
// without data answers no request the O-NIC sends out of a port.
func (tt *tagTable) matchReturn(c *tlp.TLP) (i uint16, done, ok bool) {
	if c.Tag >= Tags || !tt.e[c.Tag].busy || tt.e[c.Tag].requester != c.RequesterID {
		return 0, false, false
	}
	if c.Status != tlp.StatusSC {
		return c.Tag, true, true
	}
	if !c.Kind().HasData() {
		return 0, false, false
	}
	bc := uint32(c.ByteCount)
	if bc == 0 {
		bc = 4096
	}
	n := uint32(c.Length)*4 - uint32(c.LowerAddress&3)
	if c.Length == 0 {
		n = 4096 - uint32(c.LowerAddress&3)
	}
	return c.Tag, n >= bc, true
}

// Issue gives t, a TLP about to leave by optical port (0 A, 1 B), a tag
// of that port's requester tag table if it is a non-posted request, and
// reports false (t unchanged) if every one of the port's tags is
// outstanding: t must wait for a completion to free one (Outcome.Freed).
// The table keeps the tag t had and its proxy requester ID; a completion
// arriving on that port is matched by tag and requester ID and gets its
// tag back, and one arriving on the other port finds nothing (a peer
// cannot answer a request the O-NIC sent another peer). Posted requests
// and completions pass unchanged.
func (m *Manager) Issue(t *tlp.TLP, port int) bool {
	c := t.Kind().Class()
	if c == tlp.ClassCompletion || !t.Kind().IsNonPosted() {
		return true
	}
	tag, ok := m.out[port&1].alloc(t, FromPortA+Ingress(port&1))
	if !ok {
		return false
	}
	t.Tag = tag
	return true
}

// PortLinkDown forgets the requests outstanding on optical port (0 A,
// 1 B): its link went down, taking their completions with it (the link
// layer starts afresh when it comes back), so their tags are free. The
// RTL clears the port's table while its link is not up.
func (m *Manager) PortLinkDown(port int) {
	m.out[port&1] = tagTable{cursor: m.out[port&1].cursor}
}

// Withdraw frees the tag Issue gave request t for optical port (0 A,
// 1 B) when t is discarded before it left — as a stalled port's egress
// buffer discards what does not fit — so that no completion is waited
// for. Anything else (a posted request, a completion, a tag not in use)
// is left alone.
func (m *Manager) Withdraw(t *tlp.TLP, port int) {
	if !t.Kind().IsNonPosted() || t.Tag >= Tags {
		return
	}
	tt := &m.out[port&1]
	if tt.e[t.Tag].busy {
		tt.e[t.Tag] = pending{}
		tt.inUse--
	}
}

// OutstandingOn returns how many requests sent out of optical port (0 A,
// 1 B) still wait for completions.
func (m *Manager) OutstandingOn(port int) int { return m.out[port&1].inUse }
