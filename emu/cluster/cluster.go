// Package cluster emulates O-NIC clusters at TLP granularity: hosts with
// memory and DMA engines, each joined by a PCIe link to its O-NIC, whose
// PCIe manager (security check, translation, routing) sends TLPs out of an
// optical port, through a MEMS circuit, to another O-NIC and its host.
//
// Every request a host injects is accounted: delivered, completed with an
// error status, denied by the security check, unsupported (a translation
// miss), dropped with a named reason, or still in flight when the run
// ends. The report proves the sum.
package cluster

import (
	"time"

	"onic/desc"
	"onic/emu/link"
	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/firmware"
	"onic/pcie"
	"onic/pcie/acl"
	"onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// Outcome is where an injected request ended.
type Outcome uint8

// Outcomes, in report order.
const (
	InFlight    Outcome = iota // not finished when the run ended
	Delivered                  // a write reached memory; a read's data all came back
	ErrorStatus                // a read completed with an error status for another reason
	Denied                     // the security check refused it
	Unsupported                // no window or LUT entry, or it was disabled
	Dropped                    // dropped for another named reason
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"in flight", "delivered", "completed with error", "denied", "unsupported", "dropped"}

// String returns the outcome's report name.
func (o Outcome) String() string { return outcomeNames[o%numOutcomes] }

// classify maps the manager's reason for failing a request to an outcome.
func classify(r manager.Reason) Outcome {
	switch r {
	case manager.Denied:
		return Denied
	case manager.WindowMiss, manager.MappingDisabled:
		return Unsupported
	case manager.OK:
		return ErrorStatus
	}
	return Dropped
}

// record is one injected request (a write TLP or a read request).
type record struct {
	flow     int32
	transfer int32
	n        int32 // its number among its flow's requests, in issue order
	outcome  Outcome
	reason   manager.Reason // why it is being failed, if it is
	left     int32          // read bytes still to come back
	copies   int32          // multicast copies of a write still to arrive, besides the original
	refs     int32          // messages that belong to it; it is reused once settled and unreferenced
	stage    stage          // what it is for in an NVMe command
	// join is 1 + a request that ends with this one (0: none): a write
	// a two-input kernel combined with this one, whose data reached its
	// destination inside this one's.
	join int32
	// tagHost is 1 + the index of the host whose tag (hostTags) the
	// request holds until it settles; 0: none.
	tagHost int32
	tag     uint8
}

// recFree marks a record slot that is free for reuse.
const recFree = numOutcomes

// msg is a TLP moving through the cluster. Its index in Cluster.msgs is
// the link packet's Arg, so events and links name it without pointers.
type msg struct {
	pkt  link.Packet
	t    tlp.TLP
	rec  int32 // the request it belongs to
	from manager.Ingress
	at   *onicNode
	host *hostNode
	// dropWhy is why a manager dropped it, until its decision is out;
	// ready is when a decision deferred to the pipeline's taking it
	// (decide) goes out.
	dropWhy manager.Reason
	ready   sim.Time
}

// The cluster's parts own their events: each is the sim.Handler of what
// it schedules, with an argument only it reads — a host its memory's
// reads (the message), a flow its feeding, an NVMe drive its media's
// pages (the command), the MEMS switch its phases and circuits, an O-NIC
// its firmware loads and reflashes, a port its watchdog, the hardware
// backend its batches of cycles. A new kind of device is a new Handler,
// not a case in a dispatcher.
var (
	_ sim.Handler = (*hostNode)(nil)
	_ sim.Handler = (*flowState)(nil)
	_ sim.Handler = (*nvmeDrive)(nil)
	_ sim.Handler = (*memsSwitch)(nil)
	_ sim.Handler = (*onicNode)(nil)
	_ sim.Handler = (*port)(nil)
	_ sim.Handler = (*hw)(nil)
)

// phase is a later MEMS circuit set.
type phase struct {
	at    sim.Time
	pairs [][2]*port
	stall sim.Time // how long its changed circuits stayed dark, at most (0: it changed none)
}

// Cluster is a running emulation.
type Cluster struct {
	s     *sim.Sim
	cfg   scenario.Config
	hosts []*hostNode
	onics []*onicNode
	flows []*flowState
	// allowDowngrade is the operator's leave for loads to lower a security
	// version (AllowDowngrade).
	allowDowngrade bool
	// softOnly: hosts are their software (SoftwareOnly).
	softOnly bool
	phases   []phase
	dark     [][2]*port // circuits being lit, by memsLit index
	stall    sim.Time   // time circuits spent dark or training
	reconf   int        // reconfigurations
	recs     []record   // requests, reused once settled: see newRec
	freeRecs []int32
	injected uint64 // requests injected
	msgs     []*msg
	free     []int
	counts   [numOutcomes]uint64
	why      map[string]uint64 // failure reasons
	tlps     uint64            // TLP arrivals at link ends
	capture  *capture          // nil unless Capture was called
	spans    []span            // circuits dark or training, for the trace
	bucket   sim.Time          // a TraceBuckets-th of the run: the trace's counters' interval
	deploys  []deployment      // firmware loads, by onicDeploy index
	started  bool              // Start has run
	// offset is the simulated time the transfer level skipped
	// (fidelity.go): the scenario's clock is the engine's plus offset.
	offset sim.Time
	fid    *fidelity // the transfer level's state; nil at packet level
	// switches are the MEMS switches (one per cluster) and trunks the
	// inter-cluster fibres between them (switches.go).
	switches []mems
	trunks   map[[2]int]trunk
	// landed hears of every write that reaches a host (OnLanded), and
	// settled of every request's outcome (OnSettled).
	landed  func(Landing)
	settled func(Settled)
	// hw runs the hardware O-NICs (UseHardware), if any.
	hw *hw
	// progress, if set, hears how far Run is.
	progress func(done, total time.Duration)
}

// span is a circuit's reconfiguration and bring-up, for the trace.
type span struct {
	name       string
	start, end sim.Time
}

func (c *Cluster) newMsg() *msg {
	var i int
	if n := len(c.free); n > 0 {
		i, c.free = c.free[n-1], c.free[:n-1]
	} else {
		c.msgs = append(c.msgs, new(msg))
		i = len(c.msgs) - 1
	}
	m := c.msgs[i]
	*m = msg{rec: -1}
	m.pkt.Arg = uint64(i)
	return m
}

func (c *Cluster) release(m *msg) {
	c.unref(m.rec)
	c.free = append(c.free, int(m.pkt.Arg))
}

// unref drops a reference to request r (none if r < 0), freeing its slot
// once it is settled and unreferenced.
func (c *Cluster) unref(r int32) {
	if r < 0 {
		return
	}
	rec := &c.recs[r]
	if rec.refs--; rec.refs == 0 && rec.outcome != InFlight {
		rec.outcome = recFree
		c.freeRecs = append(c.freeRecs, r)
	}
}

// newRec starts accounting a new request, reusing a settled record's slot.
func (c *Cluster) newRec(r record) int32 {
	c.injected++
	return reuse(&c.recs, &c.freeRecs, r)
}

// reuse puts v into a freed slot of list (the last index in free) or,
// with none free, at its end, and returns its index: pools whose entries
// are named by index and reused, so that they stop growing.
func reuse[T any](list *[]T, free *[]int32, v T) int32 {
	if n := len(*free); n > 0 {
		i := (*free)[n-1]
		*free = (*free)[:n-1]
		(*list)[i] = v
		return i
	}
	*list = append(*list, v)
	return int32(len(*list) - 1)
}

// attach makes m part of request r.
func (c *Cluster) attach(m *msg, r int32) {
	m.rec = r
	if r >= 0 {
		c.recs[r].refs++
	}
}

// settle records the final outcome of request r (once).
func (c *Cluster) settle(r int32, o Outcome) { c.settleWhy(r, o, "") }

// settleWhy is settle with a reason that is not the manager's.
func (c *Cluster) settleWhy(r int32, o Outcome, why string) {
	if r < 0 {
		return
	}
	rec := &c.recs[r]
	if rec.outcome != InFlight {
		return
	}
	rec.outcome = o
	c.counts[o]++
	if o != Delivered {
		if why == "" {
			why = rec.reason.String()
		}
		c.why[why]++
	}
	if c.settled != nil {
		c.tellSettled(rec, why)
	}
	j, reason := rec.join-1, rec.reason
	rec.join = 0
	// (settledTag may free the record, and settled start new requests,
	// growing c.recs: rec is stale after.)
	flow, transfer := rec.flow, rec.transfer
	c.settledTag(r, o)
	c.flows[flow].settled(transfer, o == Delivered)
	if j >= 0 {
		// The joined request ends the same way, for the same reason.
		c.recs[j].reason = reason
		c.settleWhy(j, o, why)
		c.unref(j)
	}
}

// send puts m on link l from end side, sizing the packet from its header.
func send(l *link.Link, side int, m *msg) { sendAt(l, side, m, 0) }

// sendAt is send, not starting before ready.
func sendAt(l *link.Link, side int, m *msg, ready sim.Time) { l.SendAt(side, m.packet(0), ready) }

// packet sizes m's link packet from its header, taking room in its
// sender's egress buffer (link.Packet.Room; 0 where nothing counts it).
func (m *msg) packet(room int) *link.Packet {
	m.pkt.Class = link.ClassOf(m.t.Kind())
	m.pkt.Bytes = m.t.HeaderLen()
	m.pkt.Payload = 0
	if m.t.Kind().HasData() {
		m.pkt.Payload = int(m.t.Length) * 4
		m.pkt.Bytes += m.pkt.Payload
	}
	m.pkt.Room = room
	return &m.pkt
}

// hostEnd is the host's end of the link to O-NIC o.
type hostEnd struct {
	h *hostNode
	o *onicNode
}

// Receive hands a TLP arriving at the host to it.
func (e hostEnd) Receive(l *link.Link, side int, p *link.Packet) sim.Time {
	c := e.h.c
	c.tlps++
	m := c.msgs[p.Arg]
	if c.capture != nil {
		c.record(e.o.tap(0), true, m)
	}
	e.h.receive(m)
	return 0
}

// onicEnd is an O-NIC's end of a link: its host link or an optical port.
type onicEnd struct {
	o  *onicNode
	in manager.Ingress
}

// Receive runs a TLP arriving at the O-NIC through its manager.
func (e onicEnd) Receive(l *link.Link, side int, p *link.Packet) sim.Time {
	c := e.o.c
	c.tlps++
	m := c.msgs[p.Arg]
	if c.capture != nil {
		if e.in == manager.FromHost {
			c.record(e.o.tap(0), false, m)
		} else {
			c.record(e.o.tap(int(e.in)), true, m)
		}
	}
	if e.o.hw >= 0 {
		return c.hwReceive(e.o, m) // (its host link: its ports carry lane words)
	}
	m.from, m.at = e.in, e.o
	if e.o.blocked[e.in] != nil {
		// Its pipeline waits for a full egress buffer: m waits in the
		// receive buffer, holding its credits.
		e.o.waiting[e.in] = append(e.o.waiting[e.in], arrival{m, l, side, l.Epoch()})
		return link.HoldOpen
	}
	return e.o.admit(m, e.in)
}

// arrival is a TLP that arrived while its ingress's pipeline waited: its
// link, the link's end at the O-NIC and the link's epoch then (to
// release its credits once it is taken).
type arrival struct {
	m     *msg
	l     *link.Link
	end   int
	epoch uint64
}

// admit takes m, which arrived from in, into in's pipeline. It returns
// how long m keeps its receive buffer.
func (o *onicNode) admit(m *msg, in manager.Ingress) sim.Time {
	o.taking = int(in) + 1
	wait := o.decide(m)
	o.taking = 0
	if in != manager.FromHost {
		if pt := o.ports[(int(in)-1)&1]; len(pt.w.faults) > 0 {
			wait = max(wait, pt.faultHold(o.c.scn()))
		}
	}
	return wait
}

// block stops ingress in's pipeline: m, bound for port pt at ready, met
// the port's full egress buffer (the card's merge into it is not
// ready), and nothing more from in is taken until the buffer has room
// for m or the port stalls or goes down (unblock). The O-NIC's other
// pipelines go on.
func (o *onicNode) block(in int, pt *port, m *msg, ready sim.Time) {
	now := o.c.s.Now()
	if pt.blockers == 0 {
		// The card's pipeline waits from when m reaches the egress.
		pt.blockedAt = max(now, ready)
	}
	pt.blockers++
	if !pt.w.stuckArmed {
		pt.checkStuck(now)
	}
	if pt.blockers == 1 {
		if ready > now {
			o.c.s.At(ready, pt, evWaitStart)
		} else {
			pt.slowWatch(now)
		}
	}
	o.blocked[in], o.stuck[in], o.stuckReady[in] = pt, m, ready
	// Told when the smallest TLP waiting for the port fits.
	room := int64(-1)
	for k, b := range o.blocked {
		if b == pt {
			room = max(room, int64(scenario.HoldBeats-o.beats(&o.stuck[k].t)))
		}
	}
	if pt.queued()+1 > o.egressTLPs() {
		room = min(room, pt.l.QueuedRoom(pt.side)-1) // a TLP sent frees one
	}
	pt.l.NotifyRoom(pt.side, room, pt, evPortRoom)
}

// unblockAll runs again every pipeline that waits for port pt, taking
// turns: the first to go is the one after the pipeline that went first
// last time, as the card's round-robin merge into the port serves its
// inputs (axis.PacketMux). Always starting from the host's, the host's
// writes would take every place the buffer frees and starve a port's
// relays through it, whose ingress link then stalls its sender.
func (o *onicNode) unblockAll(pt *port) {
	first := true
	for k := range len(o.blocked) {
		in := (pt.turn + k) % len(o.blocked)
		if o.blocked[in] == pt {
			if first {
				pt.turn, first = in+1, false
			}
			o.unblock(in)
		}
	}
}

// unblock runs ingress in's pipeline again: the TLP that waited goes to
// its port (sent, or held or dropped if the port stalled or went down
// meanwhile), then what arrived meanwhile, in order, until one blocks it
// again.
func (o *onicNode) unblock(in int) {
	pt, m, now := o.blocked[in], o.stuck[in], o.c.s.Now()
	if pt.blockers--; pt.blockers == 0 {
		pt.w.blocked += max(0, now-pt.blockedAt)
	}
	o.blocked[in], o.stuck[in] = nil, nil
	o.taking = in + 1
	o.toPort(pt, m, max(o.stuckReady[in], now))
	o.taking = 0
	for len(o.deferWait[in]) > 0 && o.blocked[in] == nil {
		d := o.deferWait[in][0]
		o.deferWait[in] = o.deferWait[in][1:]
		o.decideDeferred(d)
	}
	n := 0
	o.pl.behindEgress = true
	for n < len(o.waiting[in]) && o.blocked[in] == nil {
		a := o.waiting[in][n]
		n++
		a.l.Release(a.end, a.epoch, o.admit(a.m, manager.Ingress(in)))
	}
	o.pl.behindEgress = false
	q := o.waiting[in]
	o.waiting[in] = q[:copy(q, q[n:])]
}

// Handle answers a read of the host's memory once its access time has
// passed (arg: the message).
func (h *hostNode) Handle(_ *sim.Sim, arg uint64) { h.answerRead(h.c.msgs[arg]) }

// Handle lets the flow issue more transfers.
func (f *flowState) Handle(*sim.Sim, uint64) { f.feed() }

// memsSwitch is the MEMS optical circuit switch: it moves to each
// phase's circuits, and lights a circuit once it has reconfigured and
// trained.
type memsSwitch struct{ c *Cluster }

// Switch events: the phase or circuit index is above the kind.
const (
	memsPhase = iota // the switch moves to phase i's circuits
	memsLit          // circuit i (in the cluster's dark list) is lit
)

// Handle runs a switch event.
func (w memsSwitch) Handle(_ *sim.Sim, arg uint64) {
	c, i := w.c, arg>>1
	if arg&1 == memsPhase {
		c.reconfigure(int(i), c.phases[i].pairs)
	} else {
		c.light(c.dark[i])
	}
}

// lightAfter has the switch light circuit pr after d.
func (c *Cluster) lightAfter(d sim.Time, pr [2]*port) {
	c.dark = append(c.dark, pr)
	c.s.After(d, memsSwitch{c}, memsLit|uint64(len(c.dark)-1)<<1)
}

// portState is an optical port's link state.
type portState uint8

const (
	portDown     portState = iota // no circuit
	portTraining                  // circuit lit, link training
	portUp
)

// light joins two ports with an optical link and brings them up.
func (c *Cluster) light(pr [2]*port) {
	a, b := pr[0], pr[1]
	if a.l != nil || a.hwLit || a.circuit != b || b.circuit != a {
		return // lit already, or a later phase took the circuit away
	}
	if a.o.hw >= 0 || b.o.hw >= 0 {
		light := c.hwLight
		if (a.o.hw >= 0) != (b.o.hw >= 0) {
			light = c.hwLightMixed
		}
		if err := light(pr); err != nil && c.hw.err == nil {
			c.hw.err = err
			c.s.Stop()
		}
		return
	}
	fibre := a.o.cfg.FibreM[a.idx] + c.trunkM(a, b) + b.o.cfg.FibreM[b.idx]
	l, err := link.New(c.s, link.Config{Plan: a.o.d.Lanes, ClockMHz: min(a.o.d.ClockMHz, b.o.d.ClockMHz), MPS: 256, RxWords: link.DefaultRxWords,
		Propagation:   sim.Time(fibre * FibreNsPerMetre * float64(sim.Nanosecond)),
		ReplayTimeout: max(a.o.cycles(ReplayCycles), b.o.cycles(ReplayCycles))},
		onicEnd{a.o, ingress(a.idx)}, onicEnd{b.o, ingress(b.idx)})
	if err != nil {
		panic(err) // the configuration is fixed and was checked by Build
	}
	l.OnLost(func(side int, p *link.Packet) { pr[side].lost++; c.lose(c.msgs[p.Arg]) })
	if a.hasErrors() || b.hasErrors() {
		// A TLP sent from end side arrives at the other end's port.
		l.OnDamage(func(side int, p *link.Packet) bool { return pr[1-side].damaged(p, c.scn()) })
	}
	// REPLAY_NUM rolled over: the link retrains (PCIe Base §3.6.2.1), as
	// when its partner returns no credits.
	l.OnRollover(func(side int) { pr[side].rollovers++; pr[side].retrainLink() })
	for j, pt := range pr {
		pt.l, pt.side, pt.peer = l, j, pr[1-j]
		pt.linkErr.add(pt.last)
		pt.last = portLink{l, j}
		pt.w.armed, pt.w.stalled = false, false
		pt.setState(c.s.Now(), portUp)
		pt.o.mgr.PortDown[pt.idx] = false
	}
	for _, pt := range pr {
		pt.flush()
	}
}

// reconfigure switches the MEMS to a new circuit set: circuits that stay
// stay up; circuits that go away go dark at once (their TLPs are lost);
// new circuits light after the reconfiguration time and come up after
// the bring-up time.
func (c *Cluster) reconfigure(idx int, pairs [][2]*port) {
	keep := map[*port]*port{}
	for _, pr := range pairs {
		keep[pr[0]], keep[pr[1]] = pr[1], pr[0]
	}
	for _, o := range c.onics {
		for _, pt := range o.ports {
			pt.circuit = keep[pt]
			if pt.bridge != nil && keep[pt] != pt.peer {
				c.hwDarkMixed(pt.bridge)
				continue
			}
			if pt.hwLit && keep[pt] != pt.peer {
				c.hwDark(pt)
				continue
			}
			if pt.l != nil && keep[pt] != pt.peer {
				l := pt.l
				for _, end := range [2]*port{pt, pt.peer} {
					end.keepQueued()
					end.l, end.peer = nil, nil
					end.w.stalled = false
					end.setState(c.s.Now(), portDown)
					end.o.mgr.PortDown[end.idx] = true
					end.o.mgr.PortLinkDown(end.idx) // its requests' completions are gone with the link
				}
				l.SetDown()
			}
		}
	}
	var stall sim.Time // the longest a changed circuit stays dark
	changed := false
	for _, pr := range pairs {
		if (pr[0].l != nil || pr[0].hwLit) && pr[0].peer == pr[1] {
			continue // unchanged circuit
		}
		changed = true
		reconfig, bringUp := c.circuitTimes(pr[0], pr[1])
		wait := reconfig + bringUp
		stall = max(stall, wait)
		for _, pt := range pr {
			pt.setState(c.s.Now(), portTraining)
		}
		c.spans = append(c.spans, span{name: pr[0].name() + " <-> " + pr[1].name(), start: c.scn(), end: c.scn() + wait})
		lit := wait
		if pr[0].o.hw >= 0 || pr[1].o.hw >= 0 {
			lit -= c.hw.trainLead(bringUp) // a card trains in the bring-up time
		}
		c.lightAfter(lit, pr)
	}
	if changed {
		c.reconf++
		c.phases[idx].stall = stall
		c.stall += stall
	}
}

// keepQueued is what a port's hold buffer does as its circuit goes dark
// under hold: what waits in its link queue, not yet handed to the link
// (the card's hold buffer's front), stays, as many as fit, before what
// the port already held; the rest is lost with the link. So does a
// non-posted request, whose port tag goes with the link. (What is on the
// wire or in the replay buffer is lost, as before: Link.SetDown.)
func (pt *port) keepQueued() {
	o, c := pt.o, pt.o.c
	if !o.d.Hold {
		return
	}
	var queued []*msg
	pt.l.EachQueued(pt.side, func(p *link.Packet) bool {
		queued = append(queued, c.msgs[p.Arg])
		return true
	})
	pt.l.DropQueued(pt.side, 0, func(*link.Packet) {})
	tlps, beats := len(pt.hold), pt.holdBeats
	var kept []*msg
	for _, m := range queued {
		pt.sent-- // (counted as sent when queued; again as it leaves the hold)
		if b := o.beats(&m.t); !m.t.Kind().IsNonPosted() && tlps < o.d.HoldTLPs && beats+b <= scenario.HoldBeats {
			kept = append(kept, m)
			tlps, beats = tlps+1, beats+b
			continue
		}
		c.lose(m)
	}
	pt.hold, pt.holdBeats = append(kept, pt.hold...), beats
}

// lose accounts a TLP lost with its link.
func (c *Cluster) lose(m *msg) {
	if m.rec >= 0 {
		c.settleWhy(m.rec, Dropped, "link-down")
	}
	c.release(m)
}

// hostNode is a server: memory and a root port per O-NIC.
type hostNode struct {
	c       *Cluster
	cfg     scenario.HostConfig
	idx     int // in the configuration
	id      tlp.ID
	onics   []*onicNode
	written uint64
	// dev is the device it stands for when its kind takes commands (an
	// NVMe drive's media; deviceKinds), nil for the others.
	dev device
	// dataIn is the payload written into its memory (not control writes
	// such as doorbells and completion entries); forwarders are its flows
	// that send on what arrives.
	dataIn     uint64
	forwarders []*flowState
	interrupts uint64 // MSIs received
	// masterAborts are its software's accesses no device claimed;
	// outsideMemory devices' accesses outside its memory (Attach).
	masterAborts, outsideMemory uint64
	// absent are devices' writes to it while no software was attached
	// (SoftwareOnly).
	absent uint64
	// hiers are its PCI segments' hierarchies (one per CPU), and soft the
	// software driving it from outside, if any (software.go).
	hiers []*pcie.Hierarchy
	soft  *Software
	// unexpected counts the completions its root complex could route to
	// no root port (PCIe §2.3.2: an Unexpected Completion).
	unexpected uint64
	// tags are its root complex's tags toward its O-NICs.
	tags hostTags
}

// msiBase is the x86 interrupt address range (0xFEE00000, 1 MiB): writes
// there are MSIs, not memory writes.
const (
	msiBase = 0xFEE00000
	msiSize = 1 << 20
)

// onicNode is an O-NIC: end 1 of its host link, the manager, two ports.
type onicNode struct {
	c    *Cluster
	cfg  scenario.ONICConfig
	d    *desc.ONIC // cfg resolved (an image's, once one is loaded)
	idx  int        // in the configuration
	host *hostNode
	link *link.Link // to its host: end 0 at the host, end 1 here
	seg  int        // its host's PCI segment (hierarchy) it is in
	fn   *pcie.Function
	mgr  *manager.Manager
	// pl times the manager (pipeline.go).
	pl    pipeline
	ports [2]*port
	self  tlp.ID
	// kernels by slot (nil: none loaded)
	kernels [maxKernelSlots]*kernel
	// closed counts, per slot, writes that found no kernel there (the
	// card's slot<k>_drop_closed).
	closed [maxKernelSlots]uint64
	// stalled is when the manager can take TLPs again after a kernel's
	// full input buffer stopped it.
	stalled sim.Time
	// Per ingress (the card's manager pipeline for the host, a port
	// pipeline for each port): blocked is the port whose full egress
	// buffer stops its pipeline (nil: it flows), stuck the TLP that met
	// it, to go at stuckReady, and waiting what arrived meanwhile, in
	// order (block, unblock). taking is the ingress, plus one, whose
	// pipeline takes a TLP that arrived: only those wait (a kernel's
	// output, or a TLP held through a reflash, goes to its port's link
	// whatever the queue).
	blocked    [3]*port
	stuck      [3]*msg
	stuckReady [3]sim.Time
	waiting    [3][]arrival
	taking     int
	// Per ingress: deferred counts TLPs whose decision waits for the
	// pipeline to take them (decide), and deferWait holds those whose
	// time came while the pipeline was blocked, in order.
	deferred  [3]int
	deferWait [3][]*msg
	// Firmware (deploy.go): the image it runs, reflashes under way, what
	// was deployed, and what replaced managers and kernels did.
	running     *firmware.Image
	slotKernel  [maxKernelSlots]*firmware.SlotManifest // a partial load's kernel, since the last full one
	full        *reflash
	slotFlash   [maxKernelSlots]*reflash
	deploys     []DeployReport
	replays     []ReplayReport
	pastCounts  map[manager.Reason]uint64
	pastDenials [acl.NumRules]uint64 // denials by acl.Rule before a full reflash
	pastKernels []KernelReport
	reflashTime sim.Time
	slotTime    [maxKernelSlots]sim.Time
	regs        regFile // register BAR state (regs.go)
	// hw is its card in the cluster's Hardware (rtl.go), or -1: the Go
	// model.
	hw int
	sw int // its switch (Cluster.switches)
	// tagWait are requests from the ports for the host waiting for a
	// requester tag (manager.Wait), oldest first.
	tagWait []*msg
}

// port is one optical port: one end of an optical link through the MEMS
// while it has a circuit.
type port struct {
	o     *onicNode
	idx   int
	l     *link.Link // nil while it has no circuit
	side  int
	peer  *port
	state portState
	// states are the port's state changes, for the trace (rare: a
	// reconfiguration makes at most three a port).
	states []portChange
	// wire is the bytes of TLPs the port sent, per TraceBuckets-th of the
	// run, for the trace's utilisation counters (allocated at Build).
	wire      []uint64
	wireBytes uint64 // what wire adds up to, counted as it counts
	hold      []*msg // traffic held while the port is down (or stalled)
	holdBeats int    // the data beats they take (scenario.HoldBeats at most)
	// circuit is the port the MEMS joins it to (nil: none), lit or not.
	circuit *port
	// hwLit: a hardware O-NIC's port with a lit circuit (its words cross
	// in the Hardware; l stays nil).
	hwLit bool
	// bridge joins a card's port and a Go-model port in one circuit (a
	// mixed pair, rtl.go): set on both ends while it is lit.
	bridge *hwBridge
	w      watch // its egress watchdog and faults (stall.go)
	// blockers is how many of the O-NIC's pipelines wait for room in
	// its egress buffer, since blockedAt.
	blockers  int
	blockedAt sim.Time
	// turn is the pipeline (an ingress) that goes first the next time
	// the egress buffer has room for those waiting (unblockAll).
	turn int
	// tagWait are non-posted requests waiting for one of the port's
	// requester tags (manager.Issue), in order; nothing else waits.
	tagWait []*msg
	sent    uint64   // TLPs sent out of it
	lastIn  sim.Time // when the last of them went into its link queue
	// last is the link it had last (and its end of it), and linkErr the
	// data link layer's counts on the links before it (linkErrors);
	// rollovers counts the times REPLAY_NUM rolled over on them.
	last      portLink
	linkErr   LinkErrors
	rollovers uint64
	// holdDrops and downDrops count TLPs dropped for the port under hold
	// and fail (the card's <port>_hold_drops and <port>_down_drops), and
	// lost those its links lost going down (<port>_lost).
	holdDrops, downDrops, lost uint64
}

// dropped counts a TLP dropped for the port by its down policy.
func (pt *port) dropped() {
	if pt.o.d.Hold {
		pt.holdDrops++
	} else {
		pt.downDrops++
	}
}

// portLink is a link a port had, and its end of it.
type portLink struct {
	l    *link.Link
	side int
}

// add counts pl's data link layer's recovery into e, as seen from its
// end: TLPs received damaged, Naks sent, TLPs sent again, replay timer
// expiries.
func (e *LinkErrors) add(pl portLink) {
	if pl.l == nil {
		return
	}
	in, out := pl.l.Stats(1-pl.side), pl.l.Stats(pl.side)
	e.CRCErrors += in.Damaged
	e.Naks += out.Naks
	e.Replays += out.Replays
	e.ReplayTimeouts += out.ReplayTimeouts
}

// linkErrors is the port's LinkErrors over every link it has had.
func (pt *port) linkErrors() LinkErrors {
	e := pt.linkErr
	e.add(pt.last)
	e.Rollovers = pt.rollovers
	return e
}

// portChange is a port's state from a time on, and its peer when up.
type portChange struct {
	at    sim.Time
	state portState
	peer  string
}

// setState moves the port to state st (with its peer's name when up),
// recording the change for the trace; the link's coming up or going down
// fires the port's MSI-X vector.
func (pt *port) setState(now sim.Time, st portState) {
	if (pt.state == portUp) != (st == portUp) && pt.o.hw < 0 {
		// The link came up or went down: the port's MSI-X vector fires,
		// as the card's does (a card raises its own).
		pt.o.raiseMSIX(pcie.ONICMSIXLinkVector+pt.idx, now)
	}
	pt.state = st
	peer := ""
	if st == portUp && pt.peer != nil {
		peer = pt.peer.name()
	}
	pt.states = append(pt.states, portChange{now + pt.o.c.offset, st, peer})
}

// send puts m on the port's link at ready, counting its bytes in the
// interval it leaves in (wire).
func (pt *port) send(m *msg, ready sim.Time) {
	pt.l.SendAt(pt.side, m.packet(pt.o.beats(&m.t)), ready) // (its link queue is its egress buffer)
	if !pt.w.armed {
		pt.watchFrom(pt.o.c.s.Now())
	}
	pt.wireBytes += uint64(m.pkt.Bytes)
	if b := int((max(ready, pt.o.c.s.Now()) + pt.o.c.offset) / pt.o.c.bucket); b < len(pt.wire) {
		pt.wire[b] += uint64(m.pkt.Bytes)
	}
}

// name is the port's name in configurations, "onicA.a".
func (pt *port) name() string { return pt.o.cfg.Name + "." + string(rune('a'+pt.idx)) }

// flush sends the traffic held while the port was down, and what waits
// for a tag as far as tags allow.
func (pt *port) flush() {
	for _, m := range pt.hold {
		pt.issue(m, 0)
	}
	pt.hold, pt.holdBeats = pt.hold[:0], 0
	pt.retryTags(0)
}

// issue sends m out of the port, which is up, at ready: a non-posted
// request with a tag of the port's (manager.Issue), or, with none free,
// after those that wait for one. Posted requests and completions never
// wait behind them (PCIe §2.4.1: they must be able to pass non-posted
// requests; a completion held behind a read that waits for a tag only
// that completion's twin can free would deadlock both O-NICs).
func (pt *port) issue(m *msg, ready sim.Time) {
	np := m.t.Kind().IsNonPosted()
	if np && len(pt.tagWait) > 0 || !pt.o.mgr.Issue(&m.t, pt.idx) {
		pt.tagWait = append(pt.tagWait, m)
		return
	}
	pt.sent++
	pt.lastIn = pt.o.c.s.Now()
	pt.send(m, ready)
}

// retryTags sends, at ready, the requests that waited for tags, in order,
// while the port has tags free.
func (pt *port) retryTags(ready sim.Time) {
	n := 0
	for _, m := range pt.tagWait {
		if pt.state != portUp || !pt.o.mgr.Issue(&m.t, pt.idx) {
			break
		}
		pt.sent++
		pt.lastIn = pt.o.c.s.Now()
		pt.send(m, ready)
		n++
	}
	pt.tagWait = pt.tagWait[:copy(pt.tagWait, pt.tagWait[n:])]
}

// toPort sends m out of port pt at ready, holding or failing it if the
// port is down.
func (o *onicNode) toPort(pt *port, m *msg, ready sim.Time) {
	if pt.state == portUp && !pt.w.stalled {
		if in := o.taking - 1; in >= 0 && o.blocked[in] == nil && pt.full(o.beats(&m.t)) {
			o.block(in, pt, m, ready)
			return
		}
		pt.issue(m, ready)
		return
	}
	// A stalled port's link queue is the front of its hold buffer (the
	// card has one FIFO for both): what it kept takes room too.
	tlps, beats := len(pt.hold), pt.holdBeats
	if pt.state == portUp {
		tlps, beats = tlps+pt.queued(), beats+int(pt.l.QueuedRoom(pt.side))
	}
	if b := o.beats(&m.t); o.d.Hold && tlps < o.d.HoldTLPs && beats+b <= scenario.HoldBeats {
		pt.hold = append(pt.hold, m)
		pt.holdBeats += b
		return
	}
	pt.dropped()
	if m.rec >= 0 {
		why := "hold-buffer-full"
		if !o.d.Hold {
			why = "port-down" // nothing is held under fail
		}
		o.c.recs[m.rec].reason = manager.PortDown
		o.c.settleWhy(m.rec, Dropped, why)
	}
	o.c.release(m)
}

// beats is the room t takes in a port's hold buffer: a data beat of the
// O-NIC's width per part of its payload, one if it has none (the card's
// hold buffer counts the same).
func (o *onicNode) beats(t *tlp.TLP) int {
	if !t.Kind().HasData() {
		return 1
	}
	dws := int(t.Length)
	if dws == 0 {
		dws = 1024
	}
	per := o.d.DataWidth / 32
	return (dws + per - 1) / per
}

// decide runs m through the manager as it arrives and hands the result on
// once the pipeline latency has passed: the decision depends only on m and
// the tables, so taking it on arrival saves an event per TLP.
//
// m enters the pipeline once the TLPs before it from its ingress have
// (pipeline.take). decide returns how long m waits for that, which its
// link keeps it in the receive buffer for: a busy manager withholds
// credits from the sender.
func (o *onicNode) decide(m *msg) (wait sim.Time) {
	c := o.c
	if o.full != nil {
		o.hold(o.full, m, 0)
		return 0
	}
	now := c.s.Now()
	start := o.pl.take(m.from, !m.t.Kind().IsRequest(), payloadBytes(&m.t), now)
	wait = start - now
	ready := max(start, o.stalled) + o.pl.latency
	if o.deferred[m.from] > 0 || start > now && o.portReturning() {
		// A port is stalled or training: it may be back by the time the
		// pipeline takes m, and the card's manager decides then. (So
		// does every TLP behind one deferred, to keep their order.)
		o.deferred[m.from]++
		m.ready = ready
		c.s.At(start, o, m.pkt.Arg<<2|onicDecide)
		return wait
	}
	o.apply(m, ready)
	return wait
}

// portReturning says whether a port the manager counts as down may take
// traffic again soon: it is stalled, or its link is training. (A dark
// port lights only at a MEMS phase, and then trains first.)
func (o *onicNode) portReturning() bool {
	for _, pt := range o.ports {
		if pt.w.stalled || pt.state == portTraining {
			return true
		}
	}
	return false
}

// decideDeferred runs a deferred decision as the pipeline takes m, or
// keeps m in order behind the TLP its blocked pipeline waits with.
func (o *onicNode) decideDeferred(m *msg) {
	in := int(m.from)
	if o.blocked[in] != nil {
		o.deferWait[in] = append(o.deferWait[in], m)
		return
	}
	o.deferred[in]--
	if o.full != nil {
		o.hold(o.full, m, 0)
		return
	}
	o.taking = in + 1
	o.apply(m, m.ready)
	o.taking = 0
}

// apply runs m through the manager and carries the outcome out once m is
// decided, at ready.
func (o *onicNode) apply(m *msg, ready sim.Time) {
	c := o.c
	var out manager.Outcome
	o.mgr.Process(&m.t, m.from, &out)
	if out.Freed {
		// A tag is free again: what waited longest for one goes after
		// this completion.
		if m.from == manager.FromHost && len(o.tagWait) > 0 {
			defer o.retryTagWait(ready)
		}
		if pt := o.ports[(int(m.from)-1)&1]; m.from != manager.FromHost && len(pt.tagWait) > 0 && pt.state == portUp {
			defer pt.retryTags(ready)
		}
	}
	if out.Reason == manager.PortDown && o.d.Hold && out.Egress.IsPort() && out.Holdable {
		// No failover took it: hold it at the port it was meant for (only
		// if it would pass the access check: holding is no way round it).
		out.Action = manager.Forward
	}
	switch out.Action {
	case manager.Forward:
		if out.Second.IsPort() {
			// A multicast or relayed write: a copy goes out of the other
			// port, and the request is delivered when every copy is.
			cp := c.newMsg()
			c.attach(cp, m.rec)
			cp.t = m.t
			out.ApplySecond(&cp.t)
			if m.rec >= 0 {
				c.recs[m.rec].copies++
			}
			o.toPort(o.ports[portOf(out.Second)], cp, ready)
		}
		switch out.Egress.Kind {
		case ntb.EgressPortA, ntb.EgressPortB:
			out.Apply(&m.t)
			o.toPort(o.ports[portOf(out.Egress)], m, ready)
		case ntb.EgressHost:
			out.Apply(&m.t)
			o.toHost(m, ready)
		case ntb.EgressKernel:
			if r := o.slotFlash[out.Egress.Slot]; r != nil {
				o.hold(r, m, out.Address)
				return
			}
			if k := o.kernels[out.Egress.Slot]; k != nil {
				k.process(m, out.Address, ready)
				return
			}
			// No kernel in the slot: nothing takes the data.
			o.closed[out.Egress.Slot]++
			c.settleWhy(m.rec, Dropped, "empty-slot")
			c.release(m)
		default: // local registers consume it
			if out.Egress.Kind == ntb.EgressLocal {
				switch m.t.Kind() {
				case tlp.MWr:
					o.regWrite(out.Address, &m.t)
					o.registerWrite(out.Address, m, ready)
				case tlp.MRd:
					// Registers answer reads: the request is delivered
					// when its completion reaches the host.
					for _, t := range o.regRead(out.Address, &m.t) {
						cpl := c.newMsg()
						c.attach(cpl, m.rec)
						cpl.t = t
						o.toHost(cpl, ready)
					}
					c.release(m)
					return
				}
			}
			c.settle(m.rec, Delivered)
			c.release(m)
		}
	case manager.Complete:
		// The O-NIC answers the request itself, back the way it came.
		if m.rec >= 0 {
			c.recs[m.rec].reason = out.Reason
		}
		cpl := c.newMsg()
		c.attach(cpl, m.rec)
		cpl.t = pcie.Completion(&m.t, o.self, out.Status, nil)
		if m.from == manager.FromHost {
			o.toHost(cpl, ready)
		} else {
			o.toPort(o.ports[int(m.from)-1], cpl, ready)
		}
		c.release(m)
	case manager.Drop:
		// Ended as the card's manager decides it, after the pipeline: a
		// flow learns of it no sooner.
		if ready <= c.s.Now() {
			c.fail(m, out.Reason)
			return
		}
		if m.rec >= 0 {
			c.recs[m.rec].reason = out.Reason
		}
		m.dropWhy = out.Reason
		c.s.At(ready, o, m.pkt.Arg<<2|onicDropped)
	case manager.Wait:
		// Every tag toward the host is outstanding: the request waits
		// for one, and nothing behind it does.
		o.tagWait = append(o.tagWait, m)
	}
}

// toHost sends m to the O-NIC's host once the PCIe block's RQ or CC
// interface has taken it (pipeline.send), at ready at the earliest.
func (o *onicNode) toHost(m *msg, ready sim.Time) {
	sendAt(o.link, 1, m, o.pl.send(!m.t.Kind().IsRequest(), payloadBytes(&m.t), ready))
}

// retryTagWait offers the oldest request waiting for a tag to the
// manager again.
func (o *onicNode) retryTagWait(ready sim.Time) {
	m := o.tagWait[0]
	o.tagWait = o.tagWait[1:]
	o.apply(m, ready)
}

// lostWrite drops a write m that reached a host but no memory there,
// for why: the request ends there, unless another copy of it is still on
// its way (which settles it).
func (c *Cluster) lostWrite(m *msg, why string) {
	if m.rec >= 0 && c.recs[m.rec].copies > 0 {
		c.recs[m.rec].copies--
	} else if m.rec >= 0 {
		c.settleWhy(m.rec, Dropped, why)
	}
	c.release(m)
}

// fail drops m for reason; the request it belongs to ends there.
func (c *Cluster) fail(m *msg, r manager.Reason) {
	if m.rec >= 0 {
		c.recs[m.rec].reason = r
		c.settle(m.rec, classify(r))
	}
	c.release(m)
}

// receive handles a TLP arriving at a host: completions of its own reads,
// and remote writes and reads of its memory.
func (h *hostNode) receive(m *msg) {
	c := h.c
	h.land(m)
	switch m.t.Kind().Class() {
	case tlp.ClassCompletion:
		r := &c.recs[m.rec]
		if h.soft != nil {
			done := m.t.Status != tlp.StatusSC || int(r.left) <= min(int(m.t.ByteCount), int(m.t.Length)*4-int(m.t.LowerAddress&3))
			h.soft.completion(m, done)
		}
		if m.t.Status != tlp.StatusSC {
			// The read completed, with an error status: not dropped,
			// whatever failed it (denied and unsupported keep their own
			// outcomes).
			o := classify(r.reason)
			if o == Dropped {
				o = ErrorStatus
			}
			c.settle(m.rec, o)
		} else {
			n := min(int(m.t.ByteCount), int(m.t.Length)*4-int(m.t.LowerAddress&3))
			f := c.flows[r.flow]
			if !r.stage.control() {
				f.bytesIn(n)
			}
			r.left -= int32(n)
			if r.left <= 0 {
				if r.stage == stFetch && r.outcome == InFlight && h.dev != nil {
					h.dev.fetched(f, r.transfer)
				}
				c.settle(m.rec, Delivered)
			}
		}
		c.release(m)
	case tlp.ClassMemory:
		if m.t.Kind() == tlp.MWr {
			n := int(m.t.Length) * 4
			if m.t.Address&^0xFFFFF == msiBase {
				h.interrupts++ // an MSI: the root complex raises it, memory is untouched
				if h.soft != nil {
					h.soft.interrupt(&m.t)
				}
			} else if h.soft == nil && c.softOnly {
				// Served, the host is its client: with none attached,
				// nothing is there to take the write.
				h.absent++
				c.lostWrite(m, "host-without-software")
				return
			} else if h.soft != nil && !h.soft.inMemory(m.t.Address, n) {
				// Nothing claims it: a master abort at the root complex
				// (PCIe §2.3.1, Unsupported Request); the write is lost.
				h.outsideMemory++
				c.lostWrite(m, "master-abort")
				return
			} else {
				h.written += uint64(n)
				if h.soft != nil {
					h.soft.memWrite(&m.t)
				}
			}
			if m.rec >= 0 {
				// copies+1 messages of this request are on their way; the
				// last one to arrive delivers the request.
				r := &c.recs[m.rec]
				if r.copies > 0 {
					r.copies--
					c.release(m)
					return
				}
				if !r.stage.control() {
					h.dataIn += uint64(n)
					for _, fw := range h.forwarders {
						if fw.starved {
							fw.feed()
						}
					}
				}
				if r.outcome == InFlight {
					f := c.flows[r.flow]
					if !r.stage.control() {
						f.bytesIn(n)
					}
					if j := r.join - 1; j >= 0 && !c.recs[j].stage.control() {
						// A write a kernel combined with this one: its
						// data arrived in these bytes too.
						c.flows[c.recs[j].flow].bytesIn(n)
					}
					if r.stage == stDoorbell {
						if h.dev == nil {
							c.settleWhy(m.rec, Dropped, "doorbell-not-nvme")
							c.release(m)
							return
						}
						h.dev.doorbell(f, r.transfer)
					}
				}
			}
			c.settle(m.rec, Delivered)
			c.release(m)
			return
		}
		m.host = h
		c.s.After(ps(h.cfg.Memory), h, m.pkt.Arg)
	default:
		c.fail(m, manager.Unsupported)
	}
}

// answerRead sends the completions of a read whose memory access is done.
// The root complex routes them by requester ID, as a root port does
// (PCIe §2.2.9: completions are routed by the Requester ID's bus,
// device and function): to the root port whose O-NIC has that ID. A read
// from an ID behind no root port has nowhere to be answered: an
// Unexpected Completion, counted at the host and named in the
// accounting, never delivered.
func (h *hostNode) answerRead(m *msg) {
	c := h.c
	rd := m.t
	to := h.routeByID(m.at.seg, rd.RequesterID)
	if to == nil {
		h.unexpected++
		c.settleWhy(m.rec, Dropped, "unexpected-completion")
		c.release(m)
		return
	}
	if h.soft == nil && c.softOnly || h.soft != nil && !h.soft.inMemory(rd.Address, int(rd.Length)*4) {
		// Outside the host's memory: the root complex completes it with
		// UR (a master abort, PCIe §2.3.1).
		h.outsideMemory++
		cm := c.newMsg()
		c.attach(cm, m.rec)
		cm.t = pcie.Completion(&rd, h.id, tlp.StatusUR, nil)
		send(to.link, 0, cm)
		c.release(m)
		return
	}
	f, typ, _ := tlp.FmtType(tlp.CplD, false, 0)
	for cp := range tlp.Completions(rd.Address, rd.Length, rd.FirstBE, rd.LastBE, h.cfg.RCB, h.cfg.MPS) {
		cm := c.newMsg()
		c.attach(cm, m.rec)
		cm.t = tlp.TLP{Fmt: f, Type: typ, Tag: rd.Tag, RequesterID: rd.RequesterID, CompleterID: h.id,
			Length: cp.LengthDW, ByteCount: cp.ByteCount, LowerAddress: cp.LowerAddress}
		if h.soft != nil {
			cm.t.Data = h.soft.completionData(&rd, cp.ByteCount, cp.LengthDW)
		}
		send(to.link, 0, cm)
	}
	c.release(m)
}

// routeByID is the O-NIC whose root port's bus range holds id in PCI
// segment seg (each segment is a hierarchy of its own, with its own bus
// numbers), or nil. Each O-NIC is alone below a root port of its own
// (buildHost), so the range is its bus, and only its function 0 exists
// there.
func (h *hostNode) routeByID(seg int, id tlp.ID) *onicNode {
	for _, o := range h.onics {
		if o.seg == seg && o.self.Bus() == id.Bus() {
			if id == o.self {
				return o
			}
			return nil // an absent function on that bus
		}
	}
	return nil
}

// portOf is the port index (0 A, 1 B) of an optical egress.
func portOf(e ntb.Egress) int {
	if e.Kind == ntb.EgressPortB {
		return 1
	}
	return 0
}
