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
	// at and rec are each tag's read: when it was sent and its record;
	// sweeping says a sweep is scheduled (sweepTags, Handle).
	at       [256]sim.Time
	rec      [256]int32
	sweeping bool
	h        *hostNode // whose they are
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

// takeTag gives m a free tag, recording it in its request's record, and
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
	p.next++
	c.holdTag(h, tag, m)
	return true
}

// holdTag gives request m tag, which is free, from now until its record
// settles or the host's completion timeout ends it.
func (c *Cluster) holdTag(h *hostNode, tag uint8, m *msg) {
	p := &h.tags
	p.used[tag], p.out = true, p.out+1
	p.at[tag], p.rec[tag] = c.s.Now(), m.rec
	m.t.Tag = uint16(tag)
	rec := &c.recs[m.rec]
	rec.tagHost, rec.tag = int32(h.idx)+1, tag
	rec.refs++ // (the record is the tag's until freeTag)
	if !p.sweeping {
		p.sweeping = true
		c.s.After(ps(h.cfg.CompletionTimeout)/4, &h.tags, 0)
	}
}

// sweepTags ends host h's reads that have waited their completion
// timeout (PCIe Base §2.8): each is settled as dropped,
// completion-timeout (unless it was known dropped already), its tag is
// free again, and software's load gets all-ones. It runs every quarter of the timeout while reads are out,
// so a read ends between 1 and 1.25 timeouts after it was sent (real
// root complexes' timers are as coarse: the spec gives ranges).
func (c *Cluster) sweepTags(h *hostNode) {
	p := &h.tags
	now, limit := c.s.Now(), ps(h.cfg.CompletionTimeout)
	for tag := range p.used {
		if !p.used[tag] || now-p.at[tag] < limit {
			continue
		}
		r := p.rec[tag]
		if f := c.flows[c.recs[r].flow]; f.soft && h.soft != nil {
			h.soft.timedOut(r)
		}
		c.settleWhy(r, Dropped, "completion-timeout") // (unless it was dropped already)
		c.freeTag(h, uint8(tag))
	}
	if p.sweeping = p.out > 0; p.sweeping {
		c.s.After(limit/4, p, 0)
	}
}

// Handle is the completion timeout's sweep (the tags are a sim.Handler
// of their own, so the cluster's dispatcher does not grow).
func (p *hostTags) Handle(*sim.Sim, uint64) { p.h.c.sweepTags(p.h) }

// sendTagged sends non-posted request m of host h over l from side at
// ready once it has a tag.
func (c *Cluster) sendTagged(h *hostNode, m *msg, l *link.Link, side int, ready sim.Time) {
	if c.takeTag(h, m) {
		sendAt(l, side, m, ready)
		return
	}
	h.tags.wait = append(h.tags.wait, tagWait{m: m, l: l, side: side, ready: ready})
}

// settledTag is told that request r, which may hold a tag, has settled
// with outcome o. A completion ended it (delivered, or an error status),
// or nothing will come back (dropped: lost with a link, or dropped by an
// O-NIC): then its host cannot know, and the tag stays taken until the
// completion timeout ends the read (sweepTags).
func (c *Cluster) settledTag(r int32, o Outcome) {
	rec := &c.recs[r]
	if rec.tagHost == 0 || o == Dropped {
		return
	}
	c.freeTag(c.hosts[rec.tagHost-1], rec.tag)
}

// freeTag frees host h's tag and gives it to the oldest request waiting
// for one, if any.
func (c *Cluster) freeTag(h *hostNode, tag uint8) {
	p := &h.tags
	r := p.rec[tag]
	c.recs[r].tagHost = 0
	p.used[tag], p.out = false, p.out-1
	defer c.unref(r) // (the tag's hold on the record)
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
	c.holdTag(h, tag, w.m)
	sendAt(w.l, w.side, w.m, max(w.ready, c.s.Now()))
}
