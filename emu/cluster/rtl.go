package cluster

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"time"

	"onic/emu/sim"
	"onic/tlp"
)

// Hardware is O-NICs of the cluster that run as hardware rather than as
// the Go model: the generated card's RTL, cycle-simulated
// (hdlgen/cardsim.Set implements it). The cluster drives them: it hands
// each card its host's TLPs, lights and darkens their circuits as the
// MEMS does, and runs their one clock in step with simulated time. Cards
// are numbered in the order of ONICs.
type Hardware interface {
	ONICs() []string
	Period() time.Duration
	SetID(card int, id tlp.ID) error
	Request(card int, t *tlp.TLP, bar int) error
	Complete(card int, t *tlp.TLP) error
	Queued(card int) int
	Out(card int) []tlp.TLP
	Light(a, pa, b, pb, delayCycles int) error
	Dark(card, port int)
	PortState(card, port int) int
	PortTLPs(card, port int) uint64
	// Cycle runs every card one cycle, the one whose rising edge is at
	// simulated time now (negative: before time 0).
	Cycle(now time.Duration) error
	Quiet() uint64
}

// hwBatch is how many cycles one event of the hardware's clock runs: a
// TLP that reaches a card waits at most this long for its next cycle.
const hwBatch = 16

// hwQuiet is how long every card must be quiet before the clock stops
// until the next TLP or circuit change: longer than the link layer's
// replay timer, so nothing is left unacknowledged (cardsim.QuietCycles).
const hwQuiet = 4096

// hwBacklog is how many beats may wait to go into a card before its host
// link is held back (the block's CQ and RC take a beat a cycle).
const hwBacklog = 64

// hw is the cluster's side of its Hardware.
type hw struct {
	x       Hardware
	period  sim.Time
	running bool  // a batch is scheduled
	err     error // the first error the hardware gave; the run stops
	// reads are the host requests each card owes completions for, by
	// requester and tag: the request's record and the bytes still owed.
	reads []map[uint32]*hwRead
	tags  []hwTags
	// posted are host writes handed to a card, not yet seen landing in a
	// host's memory, by length and payload hash, oldest first.
	posted map[uint64][]int32
	cycles uint64
	// regWrites are host writes to the cards' register BARs.
	regWrites uint64
	seq       uint64 // writes without bytes given bytes (hwReceive)
	// refused is the first TLP a card's interface refused, and why.
	refused string
}

// hwRead is a host's read a card owes completions for.
type hwRead struct {
	rec  int32
	left int
	tag  uint16 // the host's own tag for it
}

// hwTags are the 8-bit tags a card's host gives the reads it sends the
// card. The block's CQ descriptor carries 8 bits of a tag (PG213), so a
// root complex may use only those toward it: the host's own tags, up to
// 10 bits, are mapped onto them, and a read waits while all 256 are out.
type hwTags struct {
	used [256]bool
	next uint8
	wait []hwWait // reads waiting for a tag, oldest first
}

// hwWait is a read waiting for a tag, with the BAR it hit.
type hwWait struct {
	m   *msg
	bar int
}

// UseHardware makes the O-NICs hardware runs hardware: the cards take
// their hosts' TLPs and their circuits carry the cards' lane words. Call
// it after Build, before anything runs. The cluster must have no
// traffic generators but write and read flows (a kernel's task or an
// NVMe command is accounted through the model's decisions, which a card
// does not report): reads are matched by tag, writes by their bytes where
// they land (the emulator's own writes are given bytes that say which
// they are).
// Every circuit of a hardware O-NIC, in every phase, must join another
// hardware O-NIC.
func (c *Cluster) UseHardware(x Hardware) error {
	if c.started {
		return fmt.Errorf("hardware: the cluster has started")
	}
	for _, f := range c.cfg.Flows {
		switch f.Op {
		case "write", "read":
		default:
			return fmt.Errorf("--rtl: flows[%s]: op %q; the RTL backend runs write and read flows and served sessions for now", f.Name, f.Op)
		}
	}
	if len(c.cfg.Faults) > 0 {
		return fmt.Errorf("--rtl: the scenario has faults, which the Go model's links act out; the cards' lanes have none yet")
	}
	h := &hw{x: x, period: ps(x.Period()), posted: map[uint64][]int32{}}
	if h.period <= 0 {
		return fmt.Errorf("hardware: clock period %v", x.Period())
	}
	byName := map[string]*onicNode{}
	for _, o := range c.onics {
		byName[o.cfg.Name] = o
	}
	for i, name := range x.ONICs() {
		o := byName[name]
		if o == nil {
			return fmt.Errorf("--rtl %s: the scenario has no such O-NIC", name)
		}
		if o.hw >= 0 {
			return fmt.Errorf("--rtl %s: named twice", name)
		}
		o.hw = i
		if err := x.SetID(i, o.self); err != nil {
			return err
		}
		h.reads = append(h.reads, map[uint32]*hwRead{})
		h.tags = append(h.tags, hwTags{})
	}
	check := func(pairs [][2]*port, where string) error {
		for _, pr := range pairs {
			if (pr[0].o.hw >= 0) != (pr[1].o.hw >= 0) {
				return fmt.Errorf("--rtl: %s joins %s (RTL) and %s (the Go model); a mixed pair is not supported yet: give both O-NICs to --rtl", where, pr[0].name(), pr[1].name())
			}
		}
		return nil
	}
	var first [][2]*port
	for _, o := range c.onics {
		for _, pt := range o.ports {
			if pt.circuit != nil {
				first = append(first, [2]*port{pt, pt.circuit})
			}
		}
	}
	if err := check(first, "a circuit"); err != nil {
		return err
	}
	for i, ph := range c.phases {
		if err := check(ph.pairs, fmt.Sprintf("phase %d", i+1)); err != nil {
			return err
		}
	}
	c.hw = h
	// Circuits lit at the start are lit for the cards too, and trained
	// before time 0, as the scenario's circuits are (Config.Circuits).
	var lit []*port
	for _, o := range c.onics {
		for _, pt := range o.ports {
			if pt.l != nil && pt.o.hw >= 0 && !pt.hwLit && pt.peer != nil {
				pt.l.SetDown()
				if err := c.hwLight([2]*port{pt, pt.peer}); err != nil {
					return err
				}
			}
			if pt.hwLit {
				lit = append(lit, pt)
			}
		}
	}
	for cyc := 0; ; cyc++ {
		up := true
		for _, pt := range lit {
			up = up && x.PortState(pt.o.hw, pt.idx) == 2
		}
		if up {
			break
		}
		if cyc == hwTrainLimit {
			return fmt.Errorf("--rtl: the cards' links did not come up in %d cycles", hwTrainLimit)
		}
		if err := x.Cycle(-1); err != nil {
			return err
		}
		h.cycles++
	}
	return nil
}

// hwTrainLimit is how long the cards' links may take to train before
// time 0 (their TrainCycles is 1,024 by default).
const hwTrainLimit = 1 << 20

// hwLight lights a circuit between two hardware O-NICs' ports: a fibre of
// the circuit's propagation delay in clock cycles.
func (c *Cluster) hwLight(pr [2]*port) error {
	a, b := pr[0], pr[1]
	fibre := a.o.cfg.FibreM[a.idx] + b.o.cfg.FibreM[b.idx]
	delay := int(sim.Time(fibre*FibreNsPerMetre*float64(sim.Nanosecond)) / c.hw.period)
	if err := c.hw.x.Light(a.o.hw, a.idx, b.o.hw, b.idx, max(delay, 1)); err != nil {
		return err
	}
	for j, pt := range pr {
		pt.l, pt.hwLit, pt.peer = nil, true, pr[1-j]
		pt.setState(c.s.Now(), portUp)
	}
	c.hwWake()
	return nil
}

// hwDark ends a hardware circuit at pt (both ends).
func (c *Cluster) hwDark(pt *port) {
	c.hw.x.Dark(pt.o.hw, pt.idx)
	for _, end := range [2]*port{pt, pt.peer} {
		if end == nil {
			continue
		}
		end.hwLit, end.peer = false, nil
		end.setState(c.s.Now(), portDown)
	}
	c.hwWake()
}

// hwWake starts the cards' clock if it is stopped.
func (c *Cluster) hwWake() {
	if c.hw != nil && !c.hw.running && c.hw.err == nil {
		c.hw.running = true
		c.s.After(0, c, evHardware)
	}
}

// hwReceive hands card o a TLP its host sent it; it returns how long the
// host link must hold back (the card's backlog).
func (c *Cluster) hwReceive(o *onicNode, m *msg) sim.Time {
	h := c.hw
	why := ""
	t := &m.t
	if t.Kind().HasData() && t.Data == nil {
		// The emulator's own traffic carries no bytes; a card needs them.
		// A write's are its number in the run, in every 8 bytes, so that
		// its landing is matched to it alone (writeKey); a completion's
		// are zeros, as the host's memory reads.
		t.Data = make([]byte, int(t.Length)*4)
		if t.Kind() == tlp.MWr {
			h.seq++
			for i := 0; i+8 <= len(t.Data); i += 8 {
				binary.LittleEndian.PutUint64(t.Data[i:], h.seq)
			}
		}
	}
	if t.Kind().IsPosted() {
		// A posted request's tag is not used (PCIe §2.2.6.2), and the
		// block's CQ descriptor carries 8 bits of it (PG213).
		t.Tag &= 0xFF
	}
	switch {
	case t.Kind().Class() == tlp.ClassCompletion:
		if h.x.Complete(o.hw, t) != nil {
			why = "rtl-unexpected-completion" // none of the card's reads has its tag (PCIe §2.3.2)
		}
	case t.Kind().Class() == tlp.ClassMemory:
		bar := -1
		for i, b := range o.fn.BARs {
			if b.Size > 0 && t.Address >= o.fn.BARAddress(i) && t.Address-o.fn.BARAddress(i) < b.Size {
				bar = i
			}
		}
		if bar < 0 {
			why = "rtl-no-bar"
			break
		}
		if t.Kind() == tlp.MRd {
			if !c.hwIssueRead(o, m, bar) {
				// No tag is free: it waits, in order, for a completion to
				// free one (hwEmit).
				h.tags[o.hw].wait = append(h.tags[o.hw].wait, hwWait{m, bar})
				c.hwWake()
				return h.period * sim.Time(len(h.tags[o.hw].wait))
			}
			break
		}
		if err := h.x.Request(o.hw, t, bar); err != nil {
			why = h.refuse(err)
		} else if t.Kind() == tlp.MWr && bar == o.cfg.Manager.RegisterBAR {
			// A register write's effect is the card's: it is delivered
			// when the block hands it over (one the card's access check
			// refuses is counted in its COUNT_DENIED, not here).
			h.regWrites++
			c.settle(m.rec, Delivered)
		} else if t.Kind() == tlp.MWr && m.rec >= 0 {
			// Settled when its bytes land (hwEmit); held until then.
			k := writeKey(t)
			h.posted[k] = append(h.posted[k], m.rec)
			c.recs[m.rec].refs++
		}
	default:
		why = "rtl-refused" // not a request the card's CQ takes here
	}
	if why != "" {
		if m.rec >= 0 {
			c.settleWhy(m.rec, Dropped, why)
		} else {
			c.why[why]++
		}
	}
	c.release(m)
	c.hwWake()
	if q := h.x.Queued(o.hw); q > hwBacklog {
		return sim.Time(q-hwBacklog) * h.period
	}
	return 0
}

// hwIssueRead hands card o read m (for BAR bar) under a free 8-bit tag,
// reporting false if none is free. A refusal settles m's request.
func (c *Cluster) hwIssueRead(o *onicNode, m *msg, bar int) bool {
	h, tg, t := c.hw, &c.hw.tags[o.hw], &m.t
	i := 0
	for i < 256 && tg.used[uint8(int(tg.next)+i)] {
		i++
	}
	if i == 256 {
		return false
	}
	tag := uint8(int(tg.next) + i)
	tg.next = tag + 1
	orig := t.Tag
	t.Tag = uint16(tag)
	if err := h.x.Request(o.hw, t, bar); err != nil {
		why := h.refuse(err)
		if m.rec >= 0 {
			c.settleWhy(m.rec, Dropped, why)
		} else {
			c.why[why]++
		}
		return true
	}
	tg.used[tag] = true
	h.reads[o.hw][uint32(t.RequesterID)<<16|uint32(tag)] = &hwRead{rec: m.rec, left: readBytes(t), tag: orig}
	if m.rec >= 0 {
		c.recs[m.rec].refs++
	}
	return true
}

// hwRetryReads issues the reads waiting at card o for a tag, oldest
// first, while tags are free.
func (c *Cluster) hwRetryReads(o *onicNode) {
	tg := &c.hw.tags[o.hw]
	for len(tg.wait) > 0 {
		w := tg.wait[0]
		if !c.hwIssueRead(o, w.m, w.bar) {
			return
		}
		tg.wait = tg.wait[1:]
		c.release(w.m)
	}
}

// refuse notes the first refusal of a card's interface and returns the
// reason the accounting names.
func (h *hw) refuse(err error) string {
	if h.refused == "" {
		h.refused = err.Error()
	}
	return "rtl-refused"
}

// readBytes is how many bytes read request t asks for (its byte
// enables trim the first and last DW).
func readBytes(t *tlp.TLP) int {
	n := int(t.Length) * 4
	if t.Length == 0 {
		n = 4096
	}
	last := t.LastBE
	if t.Length == 1 {
		last = t.FirstBE
	}
	hi := 0
	for i := 3; i > 0; i-- {
		if last>>i&1 == 1 {
			hi = i
			break
		}
	}
	return n - firstByte(t.FirstBE) - (3 - hi)
}

// writeKey is a write's length and payload hash: how its landing is
// matched to it (the card sends it under its own requester ID, with its
// address translated, but with its bytes).
func writeKey(t *tlp.TLP) uint64 {
	f := fnv.New64a()
	f.Write(t.Data)
	return f.Sum64() ^ uint64(t.Length)<<48
}

// hwRun runs the cards a batch of cycles, sending what they emit at the
// cycle it left, and schedules the next batch unless every card is
// quiet.
func (c *Cluster) hwRun() {
	h := c.hw
	now := c.s.Now()
	onics := make([]*onicNode, len(h.reads))
	for _, o := range c.onics {
		if o.hw >= 0 {
			onics[o.hw] = o
		}
	}
	for i := range hwBatch {
		if err := h.x.Cycle(time.Duration((now + sim.Time(i)*h.period) / sim.Nanosecond)); err != nil {
			h.err, h.running = err, false
			c.s.Stop()
			return
		}
		h.cycles++
		at := now + sim.Time(i+1)*h.period
		for _, o := range onics {
			for _, t := range h.x.Out(o.hw) {
				c.hwEmit(o, t, at)
			}
		}
	}
	if h.x.Quiet() >= hwQuiet {
		h.running = false
		return
	}
	c.s.After(hwBatch*h.period, c, evHardware)
}

// hwEmit sends TLP t, which card o sent its host, over o's host link at
// ready: a completion with the record of the host's read it answers, a
// write with the record of the host write whose bytes it carries.
func (c *Cluster) hwEmit(o *onicNode, t tlp.TLP, ready sim.Time) {
	h := c.hw
	m := c.newMsg()
	m.t, m.at, m.from = t, o, 0
	switch {
	case t.Kind().Class() == tlp.ClassCompletion:
		key := uint32(t.RequesterID)<<16 | uint32(t.Tag)
		if rd := h.reads[o.hw][key]; rd != nil {
			c.attach(m, rd.rec)
			m.t.Tag = rd.tag // the host's own
			n := int(t.Length)*4 - int(t.LowerAddress&3)
			if rd.left -= n; t.Status != tlp.StatusSC || rd.left <= 0 || t.Length == 0 {
				delete(h.reads[o.hw], key)
				c.unref(rd.rec)
				h.tags[o.hw].used[uint8(t.Tag)] = false
				defer c.hwRetryReads(o)
			}
		}
	case t.Kind() == tlp.MWr:
		k := writeKey(&t)
		if q := h.posted[k]; len(q) > 0 {
			c.attach(m, q[0])
			c.unref(q[0])
			if len(q) == 1 {
				delete(h.posted, k)
			} else {
				h.posted[k] = q[1:]
			}
		}
	}
	sendAt(o.link, 1, m, ready)
}
