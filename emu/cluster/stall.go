package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"onic/emu/link"
	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/pcie/manager"
)

// A link partner that stops taking TLPs must not stop the O-NIC (issue
// 41). The card watches each port's egress: a beat that waits
// EgressStallCycles, or half of a window of EgressStallCycles spent
// waiting while fewer than manager.SlowTLPs TLPs got past in it (a
// partner returning credits a trickle at a time), makes the port
// count as stalled (treated as down for admission, so the down policy
// applies and the host's other traffic flows), and a link that gets no
// credits for CreditCycles goes down and retrains. The emulator's O-NIC
// does the same on its own terms. A port's link queue is its egress
// buffer, as big as the card's hold buffer (hold_tlps TLPs, HoldBeats
// beats): a pipeline (the host's, or the other port's relaying) whose
// next TLP does not fit waits, holding what arrives behind it in its
// link's receive buffer (onicNode.block), until the queue has room or
// the port stalls or goes down. Each port watches its link while it has
// TLPs queued, a quarter of the stall time at a time, and takes the
// same steps; the slow rule counts the time a pipeline waited for it.
//
// Faults (scenario.FaultConfig) make a port's receiving end withhold
// credits, so that the partner's port meets a stalled or slow peer.

// RetrainCycles is how long, in the O-NIC's clock cycles, a link that
// went down for want of credits takes to train again (the card's optical
// link's TrainCycles default).
const RetrainCycles = 1024

// ReplayCycles is the replay timer of an O-NIC's optical link, in its
// clock cycles (the card's optical link's ReplayCycles default): a
// replay whose TLP arrives damaged again waits this long to be sent once
// more.
const ReplayCycles = 2048

// A port's events besides its watchdog's check (its Handle's argument;
// 0 is the check): its link queue has room for the TLP the O-NIC's
// pipeline waits to send out of it (NotifyRoom); a pipeline may have
// waited for its full egress buffer EgressStallCycles in a row (stuck).
const (
	evPortRoom  = 1
	evStuck     = 2
	evRelease   = 3
	evSlow      = 4 // the slow rule's window may have reached half its waiting
	evWindowEnd = 5 // the slow rule's window ends
	evWaitStart = 6 // a pipeline's wait for the egress starts (block)
)

// releaseCycles is how long the card's fail policy wants a stalled port's
// link ready, in a row, before it releases the port; a stalled port looks
// whether it may take traffic again every releaseCheckCycles, so that it
// is released within that of when the card's would be (under hold, as
// soon as half its hold buffer is free).
const (
	releaseCycles      = 256
	releaseCheckCycles = 16
)

// portFault is a scenario fault at a port's receiving end, in simulated
// time.
type portFault struct {
	slow           bool // else stall (or errors)
	from, to, hold sim.Time
	// errors: the bit error rate, and the draws of which TLPs it damages
	// (seeded by the fault's place in the scenario, so a run repeats).
	ber float64
	rng *rand.Rand
}

// watch is a port's egress watchdog state.
type watch struct {
	armed    bool     // a check is scheduled
	stalled  bool     // treated as down for admission until its queue drains
	sent     uint64   // the link's TLPs sent at the last check that saw progress
	progress sim.Time // when that check was
	// busy is when a slow fault's receiver returns its last credit.
	busy   sim.Time
	faults []portFault
	// The slow rule's window, as the card's: it starts as a pipeline
	// starts to wait for the port's full egress buffer (or as the one
	// before ends while one waits) and lasts EgressStallCycles; then the
	// total time pipelines had waited (blocked, up to the last time they
	// stopped) and the TLPs sent into the port.
	win        bool
	slowAt     sim.Time // when an evSlow is due (0: none): one at a time
	winStart   sim.Time
	winBlocked sim.Time
	winSent    uint64
	winLink    uint64 // the link's TLPs sent at the window's start
	blocked    sim.Time
	// stuckArmed: an evStuck check is scheduled.
	stuckArmed bool
	// freed is when the port was last released from a stall.
	freed sim.Time
	// readyFrom is when a stalled port under fail was first seen with an
	// empty queue, since when it has been (ready: it was).
	readyFrom sim.Time
	ready     bool
	stalls    uint64 // times the port was stalled
	retrain   uint64 // times its link went down for want of credits and retrained
}

// cycles is n of the O-NIC's clock cycles as simulated time.
func (o *onicNode) cycles(n int) sim.Time {
	return sim.Time(float64(n) * 1e6 / o.d.ClockMHz)
}

// queued is how many TLPs wait at the port's end of its link.
func (pt *port) queued() int {
	n := 0
	for c := range 3 {
		n += pt.l.Queued(pt.side, link.Class(c))
	}
	return n
}

// watchFrom starts the watchdog, if it is not running, as the port
// queues a TLP on its link: the stall clock starts now.
func (pt *port) watchFrom(now sim.Time) {
	if !pt.w.armed {
		pt.w.sent, pt.w.progress = pt.l.Stats(pt.side).TLPs, now
		pt.arm()
	}
}

// blockedFor is how long in all the O-NIC's pipeline has waited for the
// port's egress buffer (while it was full), up to now.
func (pt *port) blockedFor(now sim.Time) sim.Time {
	t := pt.w.blocked
	if pt.blockers > 0 {
		t += max(0, now-pt.blockedAt)
	}
	return t
}

// slowWatch is the slow rule, as the card's: pipelines that wait for the
// port's full egress buffer half of a window of EgressStallCycles while
// fewer than SlowTLPs TLPs went into it in the window stall the port.
// A window starts as a pipeline starts to wait (block calls this then);
// slowWatch looks when the waiting would reach half the window if it went
// on, and evWindowEnd starts the next window if one still waits.
func (pt *port) slowWatch(now sim.Time) {
	o := pt.o
	if pt.l == nil || pt.w.stalled {
		return
	}
	window := o.cycles(o.d.EgressStallCycles)
	if !pt.w.win {
		pt.w.win, pt.w.winStart, pt.w.winBlocked, pt.w.winSent = true, now, pt.blockedFor(now), pt.sent
		pt.w.winLink = pt.l.Stats(pt.side).TLPs
		o.c.s.At(now+window, pt, evWindowEnd)
	}
	waited := pt.blockedFor(now) - pt.w.winBlocked
	if waited >= window/2 {
		// (TLPs sent on the link count too: traffic held through a
		// reflash, or a kernel's output, may fill the queue past the
		// hold buffer, which then drains at the link's pace while nothing
		// goes in; the card's buffer, never fuller, takes one TLP for
		// each that leaves.)
		least := uint64(manager.SlowTLPs(o.d.EgressStallCycles))
		if pt.sent-pt.w.winSent < least && pt.l.Stats(pt.side).TLPs-pt.w.winLink < least {
			pt.stall()
		}
		return
	}
	// (A later look is never due before one already due: the waiting
	// grows no faster than time.)
	if at := now + window/2 - waited; pt.blockers > 0 && at < pt.w.winStart+window && pt.w.slowAt == 0 {
		pt.w.slowAt = at
		o.c.s.At(at, pt, evSlow)
	}
}

// windowEnd ends the slow rule's window; the next starts at once if a
// pipeline still waits.
func (pt *port) windowEnd(now sim.Time) {
	if !pt.w.win || now < pt.w.winStart+pt.o.cycles(pt.o.d.EgressStallCycles) {
		return // (a window of before a stall, or a new one)
	}
	pt.w.win = false
	if pt.blockers > 0 {
		pt.slowWatch(now)
	}
}

// full says whether the port's egress buffer (its link queue, counted as
// the card's hold buffer counts) lacks room for one more TLP of beats.
func (pt *port) full(beats int) bool {
	return pt.queued()+1 > pt.o.egressTLPs() || pt.l.QueuedRoom(pt.side)+int64(beats) > scenario.HoldBeats
}

// egressTLPs is how many TLPs the port's link queue holds at most, as
// the card's egress buffer: the hold buffer's hold_tlps under hold, and
// under fail manager.FailEgressTLPs, the card's fail buffer's two TLPs.
func (o *onicNode) egressTLPs() int {
	if o.d.Hold {
		return o.d.HoldTLPs
	}
	return manager.FailEgressTLPs
}

// drained says whether a stalled port may take traffic again: once its
// link queue is empty, or under hold once at least half the hold buffer
// is free, in beats and in TLPs (what its link queue and its held TLPs
// take), as the card's is released.
func (pt *port) drained() bool {
	return pt.queued() == 0 || pt.o.d.Hold && pt.l.QueuedRoom(pt.side)+int64(pt.holdBeats) <= scenario.HoldBeats/2 &&
		pt.queued()+len(pt.hold) <= pt.o.d.HoldTLPs/2
}

// released says whether a stalled port may take traffic again at now, as
// the card's is released: under hold, once half its hold buffer is free
// (drained); under fail, once its queue — the TLPs the card's fail buffer
// kept through the stall, and its link's input — has been empty for
// releaseCycles in a row: every TLP it kept has gone, so its partner
// takes TLPs again (the card's link is ready while it holds none).
func (pt *port) released(now sim.Time) bool {
	if pt.o.d.Hold {
		return pt.drained()
	}
	if pt.queued() != 0 {
		pt.w.ready = false
		return false
	}
	if !pt.w.ready {
		pt.w.ready, pt.w.readyFrom = true, now
	}
	return now-pt.w.readyFrom >= pt.o.cycles(releaseCycles)
}

// arm schedules the watchdog's next check.
func (pt *port) arm() {
	pt.w.armed = true
	o := pt.o
	o.c.s.After(o.cycles(o.d.EgressStallCycles)/4, pt, 0)
}

// Handle is the port's watchdog check (the port is a sim.Handler of its
// own): progress since the last check, the stall and credit timeouts,
// and the end of a stall once the queue has drained.
func (pt *port) Handle(s *sim.Sim, arg uint64) {
	switch arg {
	case evPortRoom:
		pt.o.unblockAll(pt)
		return
	case evStuck:
		pt.w.stuckArmed = false
		pt.checkStuck(s.Now())
		return
	case evSlow:
		pt.w.slowAt = 0
		pt.slowWatch(s.Now())
		return
	case evWindowEnd:
		pt.windowEnd(s.Now())
		return
	case evWaitStart:
		if pt.blockers > 0 {
			pt.slowWatch(s.Now())
		}
		return
	case evRelease:
		if pt.l == nil || !pt.w.stalled {
			return
		}
		if pt.released(s.Now()) {
			pt.unstall()
			return
		}
		pt.o.c.s.After(pt.o.cycles(releaseCheckCycles), pt, evRelease)
		return
	}
	pt.w.armed = false
	if pt.l == nil {
		return // down: light resets the watch
	}
	now := s.Now()
	sent := pt.l.Stats(pt.side).TLPs
	if sent != pt.w.sent {
		pt.w.sent, pt.w.progress = sent, now
	}
	if pt.w.stalled && pt.released(now) {
		pt.unstall()
		if pt.w.armed {
			return // what it held, sent, started the watch again
		}
	}
	if pt.queued() == 0 {
		return // (idle is not a stall; the next TLP queued starts the watch again)
	}
	o := pt.o
	waited := now - pt.w.progress
	switch {
	case waited >= o.cycles(o.d.CreditTimeoutCycles):
		pt.retrainLink()
		return
	}
	if !pt.w.armed {
		pt.arm()
	}
}

// checkStuck is the stall watch's first rule, as the card's: pipelines
// that have waited for the port's full egress buffer EgressStallCycles in
// a row, while it took no TLP (lastIn), the port up and not yet stalled,
// stall it; one that waits less
// long has the check come again when it will have. (A TLP that waits in
// the queue while nothing waits for the queue's room is the link's
// business: its credit timeout.)
func (pt *port) checkStuck(now sim.Time) {
	if pt.l == nil || pt.w.stalled || pt.blockers == 0 {
		return
	}
	at := max(pt.blockedAt, pt.lastIn, pt.w.freed) + pt.o.cycles(pt.o.d.EgressStallCycles)
	if now >= at {
		pt.stall()
		return
	}
	pt.w.stuckArmed = true
	pt.o.c.s.At(at, pt, evStuck)
}

// stall makes the port count as down for admission. Like the card's
// egress buffer, its link queue keeps what fits — under hold, as many
// TLPs as the hold buffer has room for, the first queued; under fail,
// its whole queue (the fail buffer's two TLPs) — and drops the rest, each
// accounted as the down policy names it.
func (pt *port) stall() {
	o, c := pt.o, pt.o.c
	pt.w.stalled = true
	pt.w.stalls++
	pt.w.ready = false
	c.s.After(o.cycles(releaseCheckCycles), pt, evRelease)
	o.mgr.PortDown[pt.idx] = true
	// Under fail, the card's fail buffer keeps what it took (its two
	// TLPs, the whole queue) and sends it once the link takes it again.
	keep, why := manager.FailEgressTLPs, "port-down"
	if o.d.Hold {
		keep = 0
		// The first queued, as many as the hold buffer has room for (TLPs
		// and beats).
		why = "hold-buffer-full"
		tlps, beats := o.d.HoldTLPs-len(pt.hold), scenario.HoldBeats-pt.holdBeats
		pt.l.EachQueued(pt.side, func(p *link.Packet) bool {
			if tlps < 1 || p.Room > beats {
				return false
			}
			keep, tlps, beats = keep+1, tlps-1, beats-p.Room
			return true
		})
	}
	pt.l.DropQueued(pt.side, keep, func(p *link.Packet) {
		pt.dropped()
		m := c.msgs[p.Arg]
		o.mgr.Withdraw(&m.t, pt.idx)
		pt.sent-- // (counted as sent when queued)
		if m.rec >= 0 {
			c.recs[m.rec].reason = manager.PortDown
			c.settleWhy(m.rec, Dropped, why)
		}
		c.release(m)
	})
	o.unblockAll(pt) // what waited for it is held or dropped now
}

// unstall lets the port take TLPs again and sends what it held; the stall
// watch starts again, both its rules counting from now, as the card's
// counters stay at zero while its port is stalled.
func (pt *port) unstall() {
	pt.w.stalled = false
	pt.w.win = false
	pt.w.freed = pt.o.c.s.Now()
	pt.o.mgr.PortDown[pt.idx] = false
	pt.flush()
}

// retrainLink takes the port's link down for want of credits — what is
// queued on it is lost, as on any link that goes down — and lights it
// again RetrainCycles later.
func (pt *port) retrainLink() {
	c := pt.o.c
	pr := [2]*port{pt, pt.peer}
	l := pt.l
	for _, end := range pr {
		end.l, end.peer = nil, nil
		end.w.stalled = false
		end.setState(c.s.Now(), portTraining)
		end.o.mgr.PortDown[end.idx] = true
		end.o.mgr.PortLinkDown(end.idx)
	}
	pt.w.retrain++
	l.SetDown()
	wait := pt.o.cycles(RetrainCycles)
	c.spans = append(c.spans, span{name: pr[0].name() + " <-> " + pr[1].name() + " (retrain)", start: c.scn(), end: c.scn() + wait})
	c.lightAfter(wait, pr)
}

// faultHold is how much longer than its own processing a TLP arriving
// at the port now keeps its receive buffer, under the port's faults.
func (pt *port) faultHold(now sim.Time) sim.Time {
	var hold sim.Time
	for _, f := range pt.w.faults {
		if now < f.from || now >= f.to {
			continue
		}
		if f.ber > 0 {
			continue // (errors hold nothing)
		}
		if !f.slow {
			hold = max(hold, f.to-now)
			continue
		}
		// (The fault ends at to: what is held then is freed, as the card's
		// port advertises its own credits again.)
		pt.w.busy = max(pt.w.busy, now) + f.hold
		hold = max(hold, min(pt.w.busy, f.to)-now)
	}
	return hold
}

// checkFault checks fault f (faults[i], p) beyond its port and times:
// its kind, and the hold or bit error rate that kind takes.
func checkFault(p string, f scenario.FaultConfig) error {
	switch f.Kind {
	case "stall", "slow", "errors":
	default:
		return fmt.Errorf("%s.kind: %q must be stall, slow or errors", p, f.Kind)
	}
	switch {
	case f.Kind == "slow" && (f.Hold <= 0 || f.Hold > scenario.MaxLatency):
		return fmt.Errorf("%s.hold: %v must be more than 0 and at most %v (how long each TLP keeps its buffer)", p, f.Hold, scenario.MaxLatency)
	case f.Kind != "slow" && f.Hold != 0:
		return fmt.Errorf("%s.hold: %v: hold is for kind slow", p, f.Hold)
	case f.Kind == "errors" && !(f.BER > 0 && f.BER <= scenario.MaxBER):
		return fmt.Errorf("%s.ber: %g must be more than 0 and at most %g", p, f.BER, scenario.MaxBER)
	case f.Kind != "errors" && f.BER != 0:
		return fmt.Errorf("%s.ber: %g: ber is for kind errors", p, f.BER)
	}
	return nil
}

// damaged says whether TLP p, arriving at the port now, comes damaged
// under the port's errors faults: each bit of its frame on the card's
// optical link wrong with the fault's bit error rate. The frame is a
// 1-DW token, the 4-DW header slot, the payload and the 1-DW LCRC in
// 64-byte words (designs/internal/optlink.Words), every bit of them under
// the LCRC.
func (pt *port) damaged(p *link.Packet, now sim.Time) bool {
	bits := float64(512 * ((5 + (p.Payload+3)/4 + 1 + 15) / 16))
	bad := false
	for i := range pt.w.faults {
		f := &pt.w.faults[i]
		if f.ber == 0 || now < f.from || now >= f.to {
			continue
		}
		// 1-(1-ber)^bits, the odds of at least one wrong bit; drawn for
		// every active fault, so each keeps its own sequence.
		if f.rng.Float64() < -math.Expm1(bits*math.Log1p(-f.ber)) {
			bad = true
		}
	}
	return bad
}

// hasErrors says whether the port has a fault of kind errors.
func (pt *port) hasErrors() bool {
	for _, f := range pt.w.faults {
		if f.ber > 0 {
			return true
		}
	}
	return false
}

// faults reads the scenario's faults into their ports.
func (cl *Cluster) faults(fs []scenario.FaultConfig, onics map[string]*onicNode) error {
	if len(fs) > scenario.MaxFaults {
		return fmt.Errorf("faults: %d entries; at most %d", len(fs), scenario.MaxFaults)
	}
	for i, f := range fs {
		p := fmt.Sprintf("faults[%d]", i)
		on, pn, ok := strings.Cut(f.Port, ".")
		o := onics[on]
		if !ok || o == nil || (pn != "a" && pn != "b") {
			return fmt.Errorf("%s.port: %q is not an O-NIC port (want onic.a or onic.b)", p, f.Port)
		}
		pf := portFault{from: ps(f.From), to: ps(f.To), hold: ps(f.Hold)}
		if err := checkFault(p, f); err != nil {
			return err
		}
		switch f.Kind {
		case "slow":
			pf.slow = true
		case "errors":
			pf.ber, pf.rng = f.BER, rand.New(rand.NewPCG(uint64(i), 0x6f6e6963)) // ("onic")
		}
		if f.From < 0 || f.To <= f.From || f.To > scenario.MaxTime {
			return fmt.Errorf("%s: from %v and to %v must have 0 <= from < to <= %v", p, f.From, f.To, scenario.MaxTime)
		}
		pt := o.ports[pn[0]-'a']
		pt.w.faults = append(pt.w.faults, pf)
	}
	return nil
}
