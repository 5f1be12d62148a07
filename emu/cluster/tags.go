package cluster

import (
	"onic/emu/link"
	"onic/emu/sim"
)

// hostTags are the tags a host's root complex gives its non-posted
// requests toward its O-NICs. A Tag must be unique among a requester's
// outstanding non-posted requests (PCIe Base §2.2.6.2), and a requester
// may use 10-bit tags only toward a Completer that advertises 10-Bit Tag
// Completer Supported (§2.2.6.2, §7.5.3.15). The O-NIC does not: AMD's
// UltraScale+ block, which its card is built on, carries an 8-bit tag in
// its CQ descriptor (PG213, "Extended Tag Field": 256 tags), so a host
// has 256 tags toward it and a request waits while all are out.
type hostTags struct {
	used [256]bool
	out  int
	next uint8
	// wait[head:] are the requests waiting for a tag, oldest first.
	wait []tagWait
	head int
}

// tagWait is a request waiting for a tag: its message and where it goes.
type tagWait struct {
	m     *msg
	l     *link.Link
	side  int
	ready sim.Time
}

// take gives m a free tag, recording it in its request's record, and
// reports whether there was one (none while others wait: they go first).
func (c *Cluster) takeTag(h *hostNode, m *msg) bool {
	p := &h.tags
	if p.out == len(p.used) || p.head < len(p.wait) {
		return false
	}
	for p.used[p.next] {
		p.next++
	}
	tag := p.next
	p.used[tag], p.out = true, p.out+1
	p.next++
	m.t.Tag = uint16(tag)
	rec := &c.recs[m.rec]
	rec.tagHost, rec.tag = int32(h.idx)+1, tag
	return true
}

// sendTagged sends non-posted request m of host h over l from side at
// ready once it has a tag.
func (c *Cluster) sendTagged(h *hostNode, m *msg, l *link.Link, side int, ready sim.Time) {
	if c.takeTag(h, m) {
		sendAt(l, side, m, ready)
		return
	}
	h.tags.wait = append(h.tags.wait, tagWait{m: m, l: l, side: side, ready: ready})
}

// releaseTag frees the tag of settled request rec, if it has one, and
// sends the oldest request waiting for one.
func (c *Cluster) releaseTag(rec *record) {
	if rec.tagHost == 0 {
		return
	}
	h := c.hosts[rec.tagHost-1]
	p := &h.tags
	p.used[rec.tag], p.out = false, p.out-1
	rec.tagHost = 0 // (before the next request takes the record's tag)
	if p.head == len(p.wait) {
		return
	}
	w := p.wait[p.head]
	p.wait[p.head] = tagWait{}
	if p.head++; p.head == len(p.wait) {
		p.wait, p.head = p.wait[:0], 0 // (its array kept for the next wait)
	}
	// The oldest waiting request takes the tag just freed: takeTag
	// would refuse it while others still wait.
	p.used[rec.tag], p.out = true, p.out+1
	w.m.t.Tag = uint16(rec.tag)
	r := &c.recs[w.m.rec]
	r.tagHost, r.tag = int32(h.idx)+1, rec.tag
	sendAt(w.l, w.side, w.m, max(w.ready, c.s.Now()))
}
