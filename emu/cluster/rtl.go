package cluster

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"onic/emu/link"
	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/kernels"
	"onic/pcie/manager"
	"onic/tlp"
)

// Hardware is O-NICs of the cluster that run as hardware rather than as
// the Go model: the generated card's RTL, cycle-simulated
// (designs/cardsim.Set implements it). The cluster drives them: it hands
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
	// Counter is one of a card's counters by its name in the register
	// map (port_a_crc_errors, port_b_egress_stalls, ...).
	Counter(card int, name string) (uint64, error)
	// Capture makes the cards keep what their ports receive, for
	// Received (the cluster's port taps).
	Capture(on bool)
	Received(card, port int) []tlp.TLP
	// A circuit between a card's port and a Go-model O-NIC's: the card's
	// port is joined to a link layer written in Go (LightPartner), which
	// takes the model's TLPs (PartnerSend) and hands over the card's
	// (PartnerGot).
	LightPartner(card, port, delayCycles int) error
	PartnerSend(card, port int, t tlp.TLP) bool
	PartnerQueued(card, port int) int
	PartnerGot(card, port int) []tlp.TLP
	// Fault acts out scenario fault f (the i-th) on a card's port as a
	// receiver: withholding its flow-control credits from its partner
	// (kinds stall and slow), or damaging the frames that reach it (kind
	// errors).
	Fault(card, port, i int, f scenario.FaultConfig) error
	// SetMSIX gives a card its function's MSI-X Enable and Function Mask
	// bits, as the PCIe block shows them (cfg_interrupt_msix_enable and
	// _mask), after the host's software wrote its configuration space.
	SetMSIX(card int, enable, mask bool) error
	// Cycle runs every card one cycle, the one whose rising edge is at
	// simulated time now (negative: before time 0).
	Cycle(now time.Duration) error
	Quiet() uint64
	// Dropped calls drop for each TLP with a payload that card dropped
	// since the last call, in order: a port's (port 0 or 1), whole before
	// its link, in its hold buffer (hold, named hold-buffer-full as the
	// model's) or at its down gate (port-down); or its manager's (port
	// -1), a host TLP it failed for reason. word is the first 64 bits of
	// its payload, least significant byte first: a write the emulator
	// gave bytes carries its number there (giveBytes), which names the
	// write.
	Dropped(card int, drop func(port int, hold bool, reason manager.Reason, word uint64))
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
	c       *Cluster
	x       Hardware
	period  sim.Time
	running bool  // a batch is scheduled
	err     error // the first error the hardware gave; the run stops
	// reads are the host requests each card owes completions for, by
	// requester and tag: the request's record and the bytes still owed.
	reads []map[uint32]*hwRead
	// posted are host writes handed to a card, not yet seen landing in a
	// host's memory, by length and payload hash, oldest first.
	posted map[uint64][]int32
	// numbered are the writes of posted that carry their number
	// (giveBytes), by number: how a card's drop names the write
	// (Hardware.Dropped).
	numbered map[uint64]numberedWrite
	// inOrder are, for each flow whose writes all take one path (its
	// window's port: egressPort), the numbers of its writes not yet landed,
	// oldest first: a write that lands ends those before it, which were
	// lost on the way (PCIe §2.4.1: posted writes do not pass each other).
	inOrder map[int32][]uint64
	// ports are each flow's egressPort, by flow.
	ports []int
	// lostNamed are, by card and port, how many of the port's lost
	// TLPs (<port>_lost) a write has been named link-down for.
	lostNamed map[[2]int]uint64
	onDrop    func(port int, hold bool, reason manager.Reason, word uint64) // c.hwDropped
	cycles    uint64
	// regWrites are host writes to the cards' register BARs.
	regWrites uint64
	seq       uint64 // writes without bytes given bytes (hwReceive)
	// halves are the writes waiting for their partners at cards'
	// two-input kernels, by card and slot and input (rtlkernel.go).
	halves map[kernelSide]*[2][]kernelHalf
	// refused is the first TLP a card's interface refused, and why.
	refused string
	// train is how long the cards' links take to train once a circuit is
	// lit: measured on the circuits lit at the start, hwTrainCycles when
	// there are none (trainLead).
	train sim.Time
}

// hwTrainCycles is about how long a card's link takes from light to up
// when no circuit lit at the start measured it: the optical link's
// TrainCycles (1,024 by default) and its handshake.
const hwTrainCycles = 1280

// trainLead is how much earlier than the model's circuit a card's circuit
// is lit so that it is up when the model's would be: the MEMS bring-up
// time includes the link's training, which a card does itself (at most
// bring-up: a card whose training takes longer comes up later).
func (h *hw) trainLead(bringUp sim.Time) sim.Time { return min(h.train, bringUp) }

// numberedWrite is a write in hw.posted, by the number its bytes carry:
// its record and its key in posted.
type numberedWrite struct {
	rec int32
	key uint64
}

// hwRead is a host's read a card owes completions for.
type hwRead struct {
	rec  int32
	left int
}

// CheckHardware says whether cfg can run with the O-NICs named (all when
// none are) as hardware (UseHardware), before any is built: when it has
// traffic generators, a card's kernels must be single-input library
// kernels, whose output its Go reference gives from one write's bytes
// (a write is matched to its landing by its bytes), and no port's writes
// may go into a kernel (kernel_in).
func CheckHardware(cfg scenario.Config, names []string) error {
	for _, f := range cfg.Flows {
		switch f.Op {
		case "write", "read", "nvme-read", "task":
		default:
			return fmt.Errorf("--rtl: flows[%s]: op %q; the RTL backend runs write, read, nvme-read and task flows and served sessions", f.Name, f.Op)
		}
	}
	if len(cfg.Flows) == 0 {
		return nil
	}
	for _, o := range cfg.ONICs {
		if len(names) > 0 && !slices.Contains(names, o.Name) {
			continue
		}
		for _, k := range o.Kernels {
			// A write is matched to its landing by its bytes: a kernel's
			// output is computed from them by its Go reference.
			if _, err := kernels.Lookup(k.Name); k.Opaque || err != nil {
				return fmt.Errorf("--rtl %s: slot %d holds kernel %s; with flows, the RTL backend runs library kernels (its writes are matched to their landing by the bytes the kernel's reference makes of them)", o.Name, k.Slot, k.Name)
			}
		}
	}
	return nil
}

// UseHardware makes the O-NICs hardware runs hardware: the cards take
// their hosts' TLPs and their circuits carry the cards' lane words. Call
// it after Build, before anything runs. The cluster must have no
// traffic generators CheckHardware allows: reads are matched by tag,
// writes by their bytes where they land (the emulator's own writes are
// given bytes that say which they are, a doorbell's four the low half;
// through a kernel, the bytes its reference makes of them), and a task
// shell's record and interrupt join the task in flight (rtltask.go).
// A circuit between a card and a Go-model O-NIC joins the card's port to
// a link layer written in Go from the wire format (a Partner), whose TLPs
// cross to the model's port over a link of the model's.
func (c *Cluster) UseHardware(x Hardware) error {
	if c.started {
		return fmt.Errorf("hardware: the cluster has started")
	}
	if err := CheckHardware(c.cfg, x.ONICs()); err != nil {
		return err
	}
	h := &hw{c: c, x: x, period: ps(x.Period()), posted: map[uint64][]int32{}, numbered: map[uint64]numberedWrite{},
		inOrder: map[int32][]uint64{}, lostNamed: map[[2]int]uint64{}}
	h.onDrop = c.hwDropped
	for _, f := range c.flows {
		h.ports = append(h.ports, f.egressPort())
	}
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
	}
	c.hw = h
	for _, o := range c.onics {
		if o.hw >= 0 {
			if err := c.hwSetupTasks(o); err != nil {
				return err
			}
		}
	}
	x.Capture(c.capture != nil)
	// Faults: a card's port withholds its credits on the lanes; a Go-model
	// O-NIC's port would withhold them from a card only through the Go
	// link model, which a card's Partner does not answer to.
	for i, f := range c.cfg.Faults {
		on, pn, _ := strings.Cut(f.Port, ".")
		o := byName[on]
		if o.hw < 0 {
			return fmt.Errorf("--rtl: faults[%d].port %s: a fault on a Go-model O-NIC's port is not acted out when the scenario has cards; make %s a card too", i, f.Port, on)
		}
		if err := x.Fault(o.hw, int(pn[0]-'a'), i, f); err != nil {
			return err
		}
	}
	// Circuits lit at the start are lit for the cards too, and trained
	// before time 0, as the scenario's circuits are (Config.Circuits).
	var lit []*port
	for _, o := range c.onics {
		for _, pt := range o.ports {
			if peer := pt.peer; pt.l != nil && peer != nil && pt.bridge == nil && (pt.o.hw >= 0 || peer.o.hw >= 0) {
				l := pt.l
				pt.l, peer.l = nil, nil
				l.SetDown()
				light := c.hwLight
				if (pt.o.hw >= 0) != (peer.o.hw >= 0) {
					light = c.hwLightMixed
				}
				if err := light([2]*port{pt, peer}); err != nil {
					return err
				}
			}
			if pt.hwLit {
				lit = append(lit, pt)
			}
		}
	}
	h.train = hwTrainCycles * h.period
	for cyc := 0; ; cyc++ {
		up := true
		for _, pt := range lit {
			up = up && x.PortState(pt.o.hw, pt.idx) == 2
		}
		if up {
			if len(lit) > 0 {
				h.train = sim.Time(cyc) * h.period
			}
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

// hwBridge is a mixed circuit: card's port cport on one end, a Go-model
// O-NIC's port on the other. The model's port has a link of the model's
// (l) whose far end is the bridge; what arrives there goes to the card's
// Partner, and what the Partner takes from the card goes back over l.
type hwBridge struct {
	c           *Cluster
	card        *port // the card's port
	model       *port // the model's port
	l           *link.Link
	reads       map[uint32]*hwRead // the model's reads toward the card, by requester and tag
	cardN, port int
}

// hwLightMixed lights a circuit between a card's port and a Go-model
// O-NIC's port.
func (c *Cluster) hwLightMixed(pr [2]*port) error {
	hp, mp := pr[0], pr[1]
	if hp.o.hw < 0 {
		hp, mp = mp, hp
	}
	fibre := hp.o.cfg.FibreM[hp.idx] + mp.o.cfg.FibreM[mp.idx]
	delay := int(sim.Time(fibre*FibreNsPerMetre*float64(sim.Nanosecond)) / c.hw.period)
	if err := c.hw.x.LightPartner(hp.o.hw, hp.idx, max(delay, 1)); err != nil {
		return err
	}
	b := &hwBridge{c: c, card: hp, model: mp, reads: map[uint32]*hwRead{}, cardN: hp.o.hw, port: hp.idx}
	// (The fibre's delay is in the lane words: the model's link has none.)
	l, err := link.New(c.s, link.Config{Plan: mp.o.d.Lanes, ClockMHz: mp.o.d.ClockMHz, MPS: 256, RxWords: link.DefaultRxWords}, onicEnd{mp.o, ingress(mp.idx)}, b)
	if err != nil {
		return err
	}
	l.OnLost(func(side int, p *link.Packet) { c.lose(c.msgs[p.Arg]) })
	b.l = l
	hp.hwLit, hp.peer, hp.bridge = true, mp, b
	mp.l, mp.side, mp.peer, mp.bridge = l, 0, hp, b
	mp.w.armed, mp.w.stalled = false, false
	for _, pt := range pr {
		pt.setState(c.s.Now(), portUp)
	}
	mp.o.mgr.PortDown[mp.idx] = false
	mp.flush()
	c.hwWake()
	return nil
}

// hwDarkMixed ends a mixed circuit: the card's port and its Partner go
// dark, the model's port goes down as for any circuit (its link's TLPs
// are lost), and the model's reads the card owed are forgotten.
func (c *Cluster) hwDarkMixed(b *hwBridge) {
	c.hw.x.Dark(b.cardN, b.port)
	hp, mp := b.card, b.model
	hp.hwLit, hp.peer, hp.bridge = false, nil, nil
	hp.setState(c.s.Now(), portDown)
	mp.l, mp.peer, mp.bridge = nil, nil, nil
	mp.w.stalled = false
	mp.setState(c.s.Now(), portDown)
	mp.o.mgr.PortDown[mp.idx] = true
	mp.o.mgr.PortLinkDown(mp.idx)
	b.l.SetDown()
	for k, rd := range b.reads {
		c.unref(rd.rec)
		delete(b.reads, k)
	}
	c.hwWake()
}

// Receive takes a TLP the model's port sent toward the card: it goes to
// the card's Partner. It returns how long the model's link must hold
// back while the Partner has TLPs waiting for the card's credits.
func (b *hwBridge) Receive(l *link.Link, side int, p *link.Packet) sim.Time {
	c, h := b.c, b.c.hw
	c.tlps++
	m := c.msgs[p.Arg]
	t := &m.t
	seq := c.giveBytes(t)
	switch {
	case t.Kind() == tlp.MWr && m.rec >= 0:
		if !c.intoKernel(c.hwONIC(b.cardN).ports[b.port], m) {
			h.postNumbered(m.rec, t, seq)
		}
	case t.Kind() == tlp.MRd && m.rec >= 0:
		key := readKey(t)
		if old := b.reads[key]; old != nil {
			c.unref(old.rec) // (a tag reused: the read it had is over)
		}
		b.reads[key] = &hwRead{rec: m.rec, left: readBytes(t)}
		c.recs[m.rec].refs++
	}
	h.x.PartnerSend(b.cardN, b.port, *t)
	c.release(m)
	c.hwWake()
	return h.period * sim.Time(h.x.PartnerQueued(b.cardN, b.port))
}

// deliver sends the TLPs the card's Partner took from the card to the
// model's port at ready, each with the record of the request it
// belongs to: a completion the model's read's, a write the host write's
// whose bytes it carries.
func (b *hwBridge) deliver(ready sim.Time) {
	c, h := b.c, b.c.hw
	for _, t := range h.x.PartnerGot(b.cardN, b.port) {
		m := c.newMsg()
		m.t = t
		switch {
		case t.Kind().Class() == tlp.ClassCompletion:
			c.completes(b.reads, m, &t)
		case t.Kind() == tlp.MWr:
			c.matchWrite(m)
		}
		sendAt(b.l, 1, m, ready)
	}
}

// hwWake starts the cards' clock if it is stopped.
func (c *Cluster) hwWake() {
	if c.hw != nil && !c.hw.running && c.hw.err == nil {
		c.hw.running = true
		c.s.After(0, c.hw, 0)
	}
}

// hwReceive hands card o a TLP its host sent it; it returns how long the
// host link must hold back (the card's backlog).
func (c *Cluster) hwReceive(o *onicNode, m *msg) sim.Time {
	h := c.hw
	why := ""
	t := &m.t
	if m.rec >= 0 && c.recs[m.rec].stage == stTaskReg && t.Data == nil {
		c.taskRegValue(o, m)
	}
	seq := c.giveBytes(t)
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
		// (A read's tag is 8 bits, one no other read of its host holds:
		// the O-NIC does not advertise 10-bit tags (hostTags), and the
		// block's CQ descriptor, which refuses more, carries 8 (PG213).)
		if err := h.x.Request(o.hw, t, bar); err != nil {
			why = h.refuse(err)
		} else if t.Kind() == tlp.MRd {
			if old := h.reads[o.hw][readKey(t)]; old != nil {
				c.unref(old.rec) // (its host's completion timeout ended it: the tag is reused)
			}
			h.reads[o.hw][readKey(t)] = &hwRead{rec: m.rec, left: readBytes(t)}
			if m.rec >= 0 {
				c.recs[m.rec].refs++
			}
		} else if t.Kind() == tlp.MWr && bar == o.cfg.Manager.RegisterBAR {
			// A register write's effect is the card's: it is delivered
			// when the block hands it over (one the card's access check
			// refuses is counted in its COUNT_DENIED, not here).
			h.regWrites++
			c.settle(m.rec, Delivered)
		} else if t.Kind() == tlp.MWr && m.rec >= 0 {
			// Settled when its bytes land (hwEmit); held until then —
			// or, through a kernel, when the bytes it makes of them do,
			// every write of them.
			if !c.hwKernelWrite(o, bar, m) {
				h.postNumbered(m.rec, t, seq)
			}
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

// giveBytes gives TLP t bytes if it should carry some and does not: the
// emulator's own traffic carries none, and a card needs them. A write's
// are its number in the run, in every 8 bytes, so that its landing is
// matched to it alone (writeKey); a completion's are zeros, as the
// host's memory reads. It returns the write's number (0: it gave none).
func (c *Cluster) giveBytes(t *tlp.TLP) uint64 {
	if !t.Kind().HasData() || t.Data != nil {
		return 0
	}
	t.Data = make([]byte, int(t.Length)*4)
	if t.Kind() == tlp.MWr {
		c.hw.seq++
		var seq [8]byte
		binary.LittleEndian.PutUint64(seq[:], c.hw.seq)
		for i := 0; i < len(t.Data); i += 8 {
			copy(t.Data[i:], seq[:]) // (a doorbell's 4 bytes: the low half)
		}
		return c.hw.seq
	}
	return 0
}

// matchWrite gives write m, which a card sent on, the record of the
// host write whose bytes it carries, if one is waiting (writeKey).
func (c *Cluster) matchWrite(m *msg) {
	h := c.hw
	k := writeKey(&m.t)
	if q := h.posted[k]; len(q) > 0 {
		if len(m.t.Data) >= 8 {
			if n := binary.LittleEndian.Uint64(m.t.Data); h.numbered[n].rec == q[0] {
				delete(h.numbered, n)
				c.landedInOrder(c.recs[q[0]].flow, n)
			}
		}
		c.attach(m, q[0])
		c.unref(q[0])
		if len(q) == 1 {
			delete(h.posted, k)
		} else {
			h.posted[k] = q[1:]
		}
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

// readBytes is how many bytes read request t asks for (§2.2.9; Length
// 0 is 1024 DWs).
func readBytes(t *tlp.TLP) int {
	dws := t.Length
	if dws == 0 {
		dws = 1024
	}
	n, _ := tlp.ReadByteCount(t.Address, dws, t.FirstBE, t.LastBE)
	return n
}

// readKey is a read's key among those awaiting completions: its
// requester and tag, as completions carry them back.
func readKey(t *tlp.TLP) uint32 { return uint32(t.RequesterID)<<16 | uint32(t.Tag) }

// completes gives completion m (whose TLP is t) the record of the read
// in reads it answers, if any; when m ends that read (its bytes all
// back, or an error status) the read leaves reads and its hold on the
// record is dropped.
func (c *Cluster) completes(reads map[uint32]*hwRead, m *msg, t *tlp.TLP) {
	key := readKey(t)
	rd := reads[key]
	if rd == nil {
		return
	}
	c.attach(m, rd.rec)
	n := int(t.Length)*4 - int(t.LowerAddress&3)
	if rd.left -= n; t.Status != tlp.StatusSC || rd.left <= 0 || t.Length == 0 {
		delete(reads, key)
		c.unref(rd.rec)
	}
}

// writeKey is a write's length and payload hash: how its landing is
// matched to it (the card sends it under its own requester ID, with its
// address translated, but with its bytes).
func writeKey(t *tlp.TLP) uint64 {
	f := fnv.New64a()
	f.Write(t.Data)
	return f.Sum64() ^ uint64(t.Length)<<48
}

// Handle runs the cards a batch of cycles, sending what they emit at the
// cycle it left, and schedules the next batch unless every card is
// quiet.
func (h *hw) Handle(*sim.Sim, uint64) {
	c := h.c
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
			h.x.Dropped(o.hw, h.onDrop)
			for _, t := range h.x.Out(o.hw) {
				c.hwEmit(o, t, at)
			}
			for _, pt := range o.ports {
				if pt.bridge != nil {
					pt.bridge.deliver(at)
				}
				if c.capture != nil {
					for _, t := range h.x.Received(o.hw, pt.idx) {
						var m msg
						m.t = t
						c.recordAt(o.tap(1+pt.idx), true, &m, at)
					}
				}
			}
		}
	}
	if h.x.Quiet() >= hwQuiet {
		h.running = false
		c.hwSettleUnseen()
		return
	}
	c.s.After(hwBatch*h.period, h, 0)
}

// postNumbered is post for write t of record rec, which giveBytes gave
// number seq (0: none), so that a card's drop names it, and so that, if
// its flow's writes keep their order (egressPort), a later one's landing
// does.
func (h *hw) postNumbered(rec int32, t *tlp.TLP, seq uint64) {
	k := writeKey(t)
	h.post(rec, k)
	if seq != 0 && len(t.Data) >= 8 {
		h.numbered[seq] = numberedWrite{rec: rec, key: k}
		r := &h.c.recs[rec]
		if r.stage == stPlain && h.port(r.flow) >= 0 {
			h.inOrder[r.flow] = append(h.inOrder[r.flow], seq)
		}
	}
}

// port is flow fl's egressPort, -1 for a flow that came after the
// hardware (a served client's).
func (h *hw) port(fl int32) int {
	if int(fl) < len(h.ports) {
		return h.ports[fl]
	}
	return -1
}

// egressPort is the port all the flow's writes leave its O-NIC by, when
// they take one path and so land in the order they were sent or not at
// all: plain writes, all within one direct window of its O-NIC that
// sends them out of a port. It is -1 for any other flow.
func (f *flowState) egressPort() int {
	if f.cfg.Op != "write" || f.soft {
		return -1
	}
	bar := f.onic.fn.BARAddress(2)
	for _, w := range f.onic.cfg.Manager.Translation.Windows {
		if w.BAR == 2 && !w.Disabled && !w.Multicast && w.FailoverEgress == "" && (w.Egress == "port-a" || w.Egress == "port-b") &&
			f.base >= bar+w.Offset && f.base-bar-w.Offset+f.cfg.Span <= w.Size {
			return int(w.Egress[5] - 'a')
		}
	}
	return -1
}

// landedInOrder ends, when numbered write seq of flow fl lands, the
// flow's writes sent before it that have not: lost on the way, as nothing
// else reorders them. As many as its card's port counts lost on its link
// since the last were named so (<port>_lost) are link-down, as the model
// names a write lost with its link; the rest rtl-not-delivered.
func (c *Cluster) landedInOrder(fl int32, seq uint64) {
	h := c.hw
	q := h.inOrder[fl]
	f := c.flows[fl]
	n := 0
	for ; n < len(q) && q[n] <= seq; n++ {
		if w, ok := h.numbered[q[n]]; ok && q[n] < seq {
			why := "rtl-not-delivered"
			if card, p := f.onic.hw, h.port(fl); card >= 0 {
				k := [2]int{card, p}
				if lost, _ := h.x.Counter(card, []string{"port_a_lost", "port_b_lost"}[p]); lost > h.lostNamed[k] {
					why = "link-down"
					h.lostNamed[k]++
				}
			}
			c.hwLost(q[n], w, why)
		}
	}
	if n == len(q) {
		delete(h.inOrder, fl)
	} else {
		h.inOrder[fl] = q[n:]
	}
}

// hwDropped ends the host write a card dropped (Hardware.Dropped), if it
// is one the emulator numbered, as the model ends such a drop: a port's
// as hold-buffer-full or port-down, the manager's by its reason (a
// denied write is denied).
func (c *Cluster) hwDropped(port int, hold bool, reason manager.Reason, word uint64) {
	h := c.hw
	w, ok := h.numbered[word]
	if !ok {
		return
	}
	if port < 0 {
		delete(h.numbered, word)
		h.unpost(w)
		c.recs[w.rec].reason = reason
		c.settle(w.rec, classify(reason))
		c.unref(w.rec)
		return
	}
	why := "port-down"
	if hold {
		why = "hold-buffer-full"
	}
	c.hwLost(word, w, why)
}

// hwLost ends numbered write seq (w), which a card dropped or lost, as
// dropped for why.
func (c *Cluster) hwLost(seq uint64, w numberedWrite, why string) {
	delete(c.hw.numbered, seq)
	c.hw.unpost(w)
	c.settleWhy(w.rec, Dropped, why)
	c.unref(w.rec)
}

// unpost takes numbered write w out of posted.
func (h *hw) unpost(w numberedWrite) {
	q := h.posted[w.key]
	if i := slices.Index(q, w.rec); i >= 0 {
		if q = slices.Delete(q, i, i+1); len(q) == 0 {
			delete(h.posted, w.key)
		} else {
			h.posted[w.key] = q
		}
	}
}

// hwSettleUnseen ends the host writes the cards took that never landed,
// once nothing can still deliver them: the cards are quiet (nothing on a
// lane or the host interface for hwQuiet cycles) and every port of a
// card that has a circuit is up, so nothing waits in a hold buffer for
// it. They were dropped — the cards' counters (hold drops, lost, COUNT_*)
// say why — and are named rtl-not-delivered, so that the flows they
// belong to go on, as the model's drops let them. (A write held for a
// port that has no circuit, which a later phase would light, is ended
// too: the model would call it in flight.)
func (c *Cluster) hwSettleUnseen() {
	h := c.hw
	if len(h.posted) == 0 {
		return
	}
	for _, o := range c.onics {
		if o.hw < 0 {
			continue
		}
		for _, pt := range o.ports {
			if pt.circuit != nil && (!pt.hwLit || h.x.PortState(o.hw, pt.idx) != 2) {
				return
			}
		}
	}
	keys := make([]uint64, 0, len(h.posted))
	for k := range h.posted {
		keys = append(keys, k)
	}
	slices.Sort(keys) // (settling starts flows' next transfers: a fixed order)
	for _, k := range keys {
		for _, r := range h.posted[k] {
			c.settleWhy(r, Dropped, "rtl-not-delivered")
			c.unref(r)
		}
		delete(h.posted, k)
	}
	clear(h.numbered)
	clear(h.inOrder)
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
		c.completes(h.reads[o.hw], m, &t)
	case t.Kind() == tlp.MWr:
		if c.matchWrite(m); m.rec < 0 {
			c.taskWrite(o, m)
		}
	}
	sendAt(o.link, 1, m, ready)
}

// cardErrors is what card's counters say of its ports' egress stalls,
// links retrained (<port>_stalls: credit timeouts and REPLAY_NUM
// rollovers) and data link layers, as the report has them for the
// model's O-NICs (nil where all are 0).
func (c *Cluster) cardErrors(card int) (*StallReport, *[2]LinkErrors) {
	var st StallReport
	var le [2]LinkErrors
	for p, pre := range []string{"port_a_", "port_b_"} {
		for _, v := range []struct {
			name string
			to   *uint64
		}{{"egress_stalls", &st.EgressStalls[p]}, {"stalls", &st.Retrains[p]}, {"crc_errors", &le[p].CRCErrors},
			{"naks", &le[p].Naks}, {"replays", &le[p].Replays}} {
			*v.to, _ = c.hw.x.Counter(card, pre+v.name) // (every card has these)
		}
	}
	return errorReports(st, le)
}
