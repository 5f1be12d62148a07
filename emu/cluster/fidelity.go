package cluster

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"time"

	"onic/emu/sim"
)

// The fidelities a run may have (scenario.Config.Fidelity).
const (
	// FidelityPacket simulates every TLP and DLLP of the whole run: the
	// reference.
	FidelityPacket = "packet"
	// FidelityAuto simulates TLPs around every transient and carries
	// the steady stretches between them on at the rates it measured.
	FidelityAuto = "auto"
	// FidelityTransfer is FidelityAuto with shorter samples and a
	// looser test of steadiness: faster, and further from the packet
	// level.
	FidelityTransfer = "transfer"
)

// Fidelities lists the fidelities, the default first.
func Fidelities() []string { return []string{FidelityPacket, FidelityAuto, FidelityTransfer} }

// fidelity is the transfer level's state: how it samples, what it measured
// and how much of the run it carried.
//
// The transfer level never models a TLP itself. Between transients — a
// MEMS phase, a flow's start or stop, a fault, a deployment, the run's
// end, and anything that leaves a port not up, holding traffic or
// reflashing — it simulates two consecutive samples of equal length at
// the packet level. When every flow moved the same bytes in both (within
// tol) and the cluster stayed quiet, the cluster is steady: the engine's
// clock stands still while the scenario's jumps ahead (Cluster.offset) to
// one sample's length before the next transient, and every counter the
// report reads grows by what it grew over the samples, scaled to the time
// skipped. The state the packet level leaves — queues, credits, transfers
// in flight — carries over unchanged, as a steady state repeats itself;
// what is fixed to the scenario's clock (phases, flows' starts and stops,
// faults, deployments) keeps its time. docs/emu.md says what this cannot
// see.
type fidelity struct {
	name string
	// completions is how many transfers each flow that moves data must
	// finish in a sample (the sample grows in steps of minSample until
	// they have, up to maxSample); tol is how far the two samples' bytes
	// may differ, per flow, for the cluster to count as steady.
	completions          int
	tol                  float64
	minSample, maxSample sim.Time
	// transients are the scenario's times that end a steady stretch,
	// sorted.
	transients []sim.Time
	// skipped is the simulated time carried at the transfer level and
	// windows how many stretches it was in.
	skipped sim.Time
	windows int
	// held says why the run kept the packet level throughout, if it did
	// for a reason of its own.
	held string
	// At the first sample's start: the counters (in counters' order),
	// the failure reasons, and the time.
	snap  []uint64
	mid   []uint64 // the counters at the second sample's start, and each flow's bytes
	why   map[string]uint64
	start sim.Time
	// settles counts finished transfers and settled names the flow of
	// the last.
	settles uint64
	settled int
	live    uint64 // requests in flight at the first sample's start
}

// newFidelity is name's transfer level; nil for the packet level.
func newFidelity(name string) (*fidelity, error) {
	switch name {
	case "", FidelityPacket:
		return nil, nil
	case FidelityAuto:
		return &fidelity{name: name, completions: 32, tol: 0.01, minSample: 5 * sim.Microsecond, maxSample: 2 * sim.Millisecond}, nil
	case FidelityTransfer:
		return &fidelity{name: name, completions: 24, tol: 0.02, minSample: 2 * sim.Microsecond, maxSample: sim.Millisecond}, nil
	}
	return nil, fmt.Errorf("fidelity: %q is not one of %v", name, Fidelities())
}

// report says in rep how much of a run d long the fidelity carried.
func (f *fidelity) report(rep *Report, d time.Duration) {
	if f != nil {
		rep.Fidelity, rep.TransferWindows, rep.TransferHeld = f.name, f.windows, f.held
		rep.TransferShare = float64(f.skipped) / float64(ps(d))
	}
}

// scn is the scenario's clock: the engine's plus what the transfer level
// skipped.
func (c *Cluster) scn() sim.Time { return c.s.Now() + c.offset }

// flowStarts is the argument of a flow's start event, which the transfer
// level keeps at its time (pacing events, argument 0, keep their distance).
const flowStarts = 1

// fixedTime says whether an event is fixed to the scenario's clock.
func fixedTime(h sim.Handler, arg uint64) bool {
	switch h := h.(type) {
	case memsSwitch:
		return arg&1 == memsPhase
	case *flowState:
		return arg == flowStarts
	case *onicNode:
		return arg&3 == onicDeploy && h.full == nil
	}
	return false
}

// carries says whether the transfer level may carry this cluster at all:
// not with a capture (its TLPs are the point), hardware O-NICs or
// software outside the emulator.
func (c *Cluster) carries() bool {
	if c.fid == nil {
		return false
	}
	switch {
	case c.capture != nil:
		c.fid.held = "a capture keeps the packet level"
	case c.hw != nil:
		c.fid.held = "hardware O-NICs keep the packet level"
	case c.softOnly || slices.ContainsFunc(c.flows, func(f *flowState) bool { return f.soft }):
		c.fid.held = "software clients keep the packet level"
	}
	return c.fid.held == ""
}

// quiet says whether nothing transient is under way: every port with a
// circuit is up and holds nothing, no O-NIC is reflashing and no fault
// is in force.
func (c *Cluster) quiet() bool {
	now := c.scn()
	for _, o := range c.onics {
		if o.full != nil || slices.ContainsFunc(o.slotFlash[:], func(r *reflash) bool { return r != nil }) {
			return false
		}
		for _, pt := range o.ports {
			if pt.circuit != nil && pt.state != portUp || len(pt.hold) > 0 || len(pt.tagWait) > 0 {
				return false
			}
			for _, f := range pt.w.faults {
				if now >= f.from && now < f.to {
					return false
				}
			}
		}
	}
	return true
}

// transientTimes lists the scenario's fixed times that end a steady
// stretch, sorted.
func (c *Cluster) transientTimes() []sim.Time {
	ts := []sim.Time{ps(c.cfg.Duration)}
	for _, ph := range c.phases {
		ts = append(ts, ph.at)
	}
	for _, f := range c.flows {
		ts = append(ts, ps(f.cfg.Start))
		if f.cfg.Stop != 0 {
			ts = append(ts, ps(f.cfg.Stop))
		}
	}
	for _, d := range c.deploys {
		ts = append(ts, d.at)
	}
	for _, o := range c.onics {
		for _, pt := range o.ports {
			for _, f := range pt.w.faults {
				ts = append(ts, f.from, f.to)
			}
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// nextTransient is the first transient after now.
func (f *fidelity) nextTransient(now sim.Time) sim.Time {
	i, _ := slices.BinarySearch(f.transients, now+1)
	if i == len(f.transients) {
		return sim.Forever
	}
	return f.transients[i]
}

// runCarried runs the cluster to the scenario time end at the fidelity's
// level, calling step after each stretch with the time reached.
func (c *Cluster) runCarried(end sim.Time, step func(sim.Time)) {
	f := c.fid
	f.transients = c.transientTimes()
	runTo := func(t sim.Time) { c.s.Run(min(t, end) - c.offset) }
	for c.scn() < end {
		now := c.scn()
		next := min(f.nextTransient(now), end)
		if next-now < 6*f.minSample || !c.quiet() {
			// Too close to the next transient, or within one.
			runTo(min(next, now+f.minSample))
			step(c.scn())
			continue
		}
		if c.ramping(f.since(c)) {
			// Transfers that began with the last transient are still
			// in flight: their latencies are its, not the steady
			// state's.
			runTo(min(next, now+f.minSample))
			step(c.scn())
			continue
		}
		ref := c.untilSettles(-1, next-3*f.minSample-c.offset)
		if ref < 0 {
			continue
		}
		now = c.scn()
		f.begin(c)
		// The first sample: until every flow that moves data has
		// finished enough transfers (or it is as long as it may be).
		for {
			runTo(c.scn() + f.minSample)
			l := c.scn() - now
			if f.enough(c) || l >= f.maxSample || now+3*l >= next {
				break
			}
		}
		l := c.scn() - now
		if !c.untilInPhase(ref, now+l+l/4-c.offset, next-3*l-c.offset) {
			// The flows did not come back to where they were: they
			// were not in their steady cycle yet. Start again here.
			f.end(c)
			continue
		}
		l = c.scn() - now
		f.middle(c)
		runTo(now + 2*l)
		c.untilInPhase(ref, now+2*l+l/4-c.offset, min(now+2*l+l/2, end)-c.offset)
		step(c.scn())
		skip := next - l - c.scn()
		for _, fl := range c.flows {
			skip = min(skip, fl.room())
		}
		if c.scn() < now+2*l || skip < 2*l || !c.quiet() || !f.steady(c, l, c.scn()-now-l) {
			f.end(c)
			continue
		}
		c.carry(skip)
		f.end(c)
		step(c.scn())
	}
}

// untilSettles runs events, up to the engine's time limit, until flow
// ref (any flow, if ref < 0) finishes a transfer, and returns the flow
// that did (-1 if none did by the limit). Traffic goes in whole
// transfers: samples that began and ended at different points of a flow's
// cycle would scale the counters at the injecting end (a port's TLPs out,
// the manager's decisions) apart from those at the receiving end by up to
// a transfer's requests, so both samples begin and end as the same flow
// finishes one.
func (c *Cluster) untilSettles(ref int, limit sim.Time) int {
	f := c.fid
	for seen := f.settles; c.s.Now() < limit; {
		c.s.RunLimit(limit, 1)
		if f.settles != seen && (ref < 0 || f.settled == ref) {
			return f.settled
		}
		seen = f.settles
	}
	return -1
}

// untilInPhase runs events until flow ref finishes a transfer with every
// flow at the phase of its own cycle it had when the samples began
// (inPhase), and says whether one did; past soft, it stops at ref's next
// finish, up to hard (the engine's times). A flow's transfers need not finish evenly: with several in
// flight behind another flow's on one link they finish in bursts, a
// depth's worth at a time, so that samples whose edges fell at different
// points of the bursts would count a flow up to a depth of transfers too
// many or too few — in phase, each flow's count is whole bursts.
func (c *Cluster) untilInPhase(ref int, soft, hard sim.Time) bool {
	for c.untilSettles(ref, hard) >= 0 {
		if c.fid.inPhase(c) {
			return true
		}
		if c.s.Now() >= soft {
			break
		}
	}
	return false
}

// inPhase says whether every flow that finished at least two transfers in
// the samples is where it was in its cycle when they began: as long since
// its last finish, which came as long after the one before, within 1% of
// its mean time between finishes.
func (f *fidelity) inPhase(c *Cluster) bool {
	now := c.scn()
	for _, fl := range c.flows {
		s := &fl.sample
		if s.n < 2 {
			continue
		}
		eps := (c.s.Now() - f.start) / sim.Time(100*s.n)
		if d := now - fl.lastEnd - s.phase; d > eps || d < -eps {
			return false
		}
		if d := fl.lastGap - s.gap; d > eps || d < -eps {
			return false
		}
	}
	return true
}

// begin starts the samples: the counters as they are now.
func (f *fidelity) begin(c *Cluster) {
	f.start = c.s.Now()
	f.live = c.live()
	f.snap = f.snap[:0]
	c.counters(func(p *uint64) { f.snap = append(f.snap, *p) })
	f.why = maps.Clone(c.why)
	since := f.since(c)
	for _, fl := range c.flows {
		fl.sample = flowSample{on: true, since: since, phase: c.scn() - fl.lastEnd, gap: fl.lastGap, bytes: fl.bytes, ok: fl.ok, bad: fl.bad,
			lat: fl.sample.lat[:0]}
	}
}

// since is the last transient passed, on the engine's clock: a transfer
// that began at or before it does not show the steady state.
func (f *fidelity) since(c *Cluster) sim.Time {
	if i, _ := slices.BinarySearch(f.transients, c.scn()+1); i > 0 {
		return f.transients[i-1] - c.offset
	}
	return 0
}

// ramping says whether a transfer that began at or before since (on the
// engine's clock) is in flight.
func (c *Cluster) ramping(since sim.Time) bool {
	for _, fl := range c.flows {
		for _, x := range fl.xfers {
			if x.left > 0 && x.start <= since {
				return true
			}
		}
	}
	return false
}

// end stops sampling.
func (f *fidelity) end(c *Cluster) {
	for _, fl := range c.flows {
		fl.sample.on = false
	}
}

// enough says whether every flow that moved data in the sample has
// finished the transfers a sample needs.
func (f *fidelity) enough(c *Cluster) bool {
	for _, fl := range c.flows {
		if fl.bytes != fl.sample.bytes && fl.sample.n < f.completions {
			return false
		}
	}
	return true
}

// middle ends the first sample: the counters and flows' bytes as they
// are now.
func (f *fidelity) middle(c *Cluster) {
	f.mid = f.mid[:0]
	c.counters(func(p *uint64) { f.mid = append(f.mid, *p) })
	for _, fl := range c.flows {
		f.mid = append(f.mid, fl.bytes)
	}
}

// steady says whether the second sample (l2 long) went as the first (l1
// long): every counter (but stallCounters') and every flow's bytes grew
// as fast in both,
// within tol and a little (64 of whatever it counts, 4 KiB of bytes), as
// many requests are in flight at the end as at the start, and every
// transfer the samples saw finish began after the last transient (its
// latency, which carry repeats, is the steady state's, not the ramp's
// after a flow's start or a fault).
func (f *fidelity) steady(c *Cluster, l1, l2 sim.Time) bool {
	n := 0
	c.counters(func(*uint64) { n++ })
	if n != len(f.snap) {
		return false // a link came or went (not quiet)
	}
	i := 0
	k := float64(l1) / float64(l2)
	near := func(a, b, slack float64) bool { return math.Abs(a-b) <= f.tol*max(a, b)+slack }
	ok := true
	stalls := map[*uint64]bool{}
	c.stallCounters(func(p *uint64) { stalls[p] = true })
	c.counters(func(p *uint64) {
		a, b := float64(f.mid[i]-f.snap[i]), float64(*p-f.mid[i])*k
		ok = ok && (near(a, b, 64) || stalls[p])
		i++
	})
	for _, fl := range c.flows {
		a, b := float64(f.mid[i]-fl.sample.bytes), float64(fl.bytes-f.mid[i])*k
		ok = ok && near(a, b, 4096) && !fl.sample.early
		i++
	}
	return ok && near(float64(f.live), float64(c.live()), 64)
}

// live is how many requests are in flight.
func (c *Cluster) live() uint64 {
	n := c.injected
	for i, k := range c.counts {
		if Outcome(i) != InFlight {
			n -= k
		}
	}
	return n
}

// counters calls visit with every counter the report reads that grows
// with simulated time, in the same order each time — the cluster's
// outcomes, the hosts', the O-NICs' and their ports' — but the flows',
// which carry scales apart.
func (c *Cluster) counters(visit func(*uint64)) {
	for i := range c.counts {
		visit(&c.counts[i])
	}
	for _, h := range c.hosts {
		for _, p := range []*uint64{&h.written, &h.dataIn, &h.interrupts, &h.masterAborts, &h.outsideMemory, &h.absent, &h.unexpected} {
			visit(p)
		}
	}
	for _, o := range c.onics {
		if o.link != nil {
			o.link.Counters(visit)
		}
		for _, pt := range o.ports {
			if pt.l != nil && pt.side == 0 {
				pt.l.Counters(visit) // (once a link: from its end 0)
			}
		}
		o.mgr.Counters(visit)
		visit(&o.pl.waited)
		visitTime(visit, &o.pl.waitSum)
		for i := range o.pl.busy {
			visitTime(visit, &o.pl.busy[i])
		}
		for _, pt := range o.ports {
			for _, p := range []*uint64{&pt.sent, &pt.wireBytes, &pt.w.stalls, &pt.w.retrain, &pt.rollovers, &pt.lost, &pt.holdDrops, &pt.downDrops} {
				visit(p)
			}
		}
		for _, k := range o.kernels {
			if k != nil {
				k.counters(visit)
			}
		}
	}
}

// stallCounters visits the links' counters among counters' that count
// how often a TLP waited to be sent (link.StallCounters). steady leaves
// them out: from sample to sample they jitter with where the samples'
// edges fall in the cycle of credits' return, while the traffic they
// hold back is steady. carry scales them like the rest.
func (c *Cluster) stallCounters(visit func(*uint64)) {
	for _, o := range c.onics {
		if o.link != nil {
			o.link.StallCounters(visit)
		}
		for _, pt := range o.ports {
			if pt.l != nil && pt.side == 0 {
				pt.l.StallCounters(visit)
			}
		}
	}
}

// counters visits a kernel's counters: what it streamed, its summed
// latencies and stalls, its drops and its tasks.
func (k *kernel) counters(visit func(*uint64)) {
	for _, p := range []*uint64{&k.tlps, &k.bytesIn, &k.bytesOut, &k.noProxy, &k.tasks, &k.refused} {
		visit(p)
	}
	for i := range k.dropped {
		visit(&k.dropped[i])
	}
	for _, t := range []*sim.Time{&k.latency, &k.stall, &k.pairWait, &k.taskTime, &k.taskStall} {
		visitTime(visit, t)
	}
}

// visitTime visits a simulated time as a counter.
func visitTime(visit func(*uint64), t *sim.Time) {
	v := uint64(*t)
	visit(&v)
	*t = sim.Time(v)
}

// scale is n*num/den, rounded to nearest.
func scale(n, num, den uint64) uint64 {
	hi, lo := bits.Mul64(n, num)
	lo, carry := bits.Add64(lo, den/2, 0)
	hi += carry
	if hi >= den {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, den)
	return q
}

// carry jumps the scenario's clock skip ahead: every counter grows by what
// it grew over the samples, scaled from their length to skip, each flow's
// transfers by its measured rate, and what is fixed to the scenario's
// clock keeps its time.
func (c *Cluster) carry(skip sim.Time) {
	f := c.fid
	sampled := c.s.Now() - f.start
	num, den := uint64(skip), uint64(sampled)
	i := 0
	var outcomes uint64
	nOutcomes := len(c.counts)
	var wire, dataIn []uint64
	for _, h := range c.hosts {
		dataIn = append(dataIn, h.dataIn)
	}
	issued := make([]int, len(c.flows))
	for i, fl := range c.flows {
		issued[i] = fl.issued
	}
	for _, o := range c.onics {
		for _, pt := range o.ports {
			wire = append(wire, pt.wireBytes)
		}
	}
	c.counters(func(p *uint64) {
		var add uint64
		if *p > f.snap[i] { // (every counter only grows; a guard all the same)
			add = scale(*p-f.snap[i], num, den)
		}
		if i < nOutcomes && Outcome(i) != InFlight {
			outcomes += add
		}
		*p += add
		i++
	})
	c.injected += outcomes
	for _, k := range slices.Sorted(maps.Keys(c.why)) {
		c.why[k] += scale(c.why[k]-f.why[k], num, den)
	}
	from := c.scn()
	for _, o := range c.onics {
		for _, pt := range o.ports {
			spread(pt.wire, from, from+skip, c.bucket, pt.wireBytes-wire[0])
			wire = wire[1:]
		}
	}
	for _, fl := range c.flows {
		fl.carry(from, skip, sampled)
	}
	// A forwarding flow sends on only what its host has received: its
	// host's data grows by what its forwarders sent on, so that each
	// leaves the stretch as far ahead of its data as it entered it (the
	// two scaled apart would starve one or let it run ahead).
	for i, h := range c.hosts {
		if len(h.forwarders) == 0 {
			continue
		}
		var grow uint64
		for _, fw := range h.forwarders {
			grow = max(grow, uint64(fw.issued-issued[fw.idx])*uint64(fw.cfg.Size))
		}
		h.dataIn = dataIn[i] + grow
	}
	c.offset += skip
	c.s.Shift(skip, fixedTime)
	f.skipped += skip
	f.windows++
}

// spread adds total to the buckets (each width long) covering [from, to),
// evenly over the time.
func spread(buckets []uint64, from, to, width sim.Time, total uint64) {
	if to <= from || total == 0 {
		return
	}
	span := uint64(to - from)
	at := func(t sim.Time) uint64 { return scale(total, uint64(t-from), span) }
	for b := from / width; b*width < to && int(b) < len(buckets); b++ {
		lo, hi := max(b*width, from), min((b+1)*width, to)
		buckets[b] += at(hi) - at(lo)
	}
}

// flowSample is what the transfer level measures of a flow while it
// samples: its bytes, ok and bad at the start, and the transfers it
// finished since — how many, the first and last finish, the latencies,
// and whether one of them began at or before since, the last transient —
// and where it was in its cycle at the start: how long since its last
// finish (phase), which came how long after the one before (gap).
type flowSample struct {
	on          bool
	since       sim.Time
	early       bool
	phase, gap  sim.Time
	bytes       uint64
	ok, bad     int
	n           int
	first, last sim.Time
	lat         []sim.Time
}

// settled notes a finished transfer while sampling.
func (s *flowSample) settled(x *xfer) {
	if !s.on {
		return
	}
	if s.n == 0 {
		s.first = x.end
	}
	s.n++
	s.last = x.end
	s.early = s.early || x.start <= s.since
	if !x.failed {
		s.lat = append(s.lat, x.end-x.start)
	}
}

// carry moves the flow on by skip at what it did over the samples
// (sampled long, ending now, at the scenario's from): its bytes in
// proportion, counted evenly into its throughput buckets, and its
// transfers at the rate they finished — from the first finish to the last,
// which a whole number of transfers spans, so that the count is not off
// by the one a sample's edges cut — with their latencies as sampled.
func (f *flowState) carry(from, skip, sampled sim.Time) {
	s := &f.sample
	bytes := scale(f.bytes-s.bytes, uint64(skip), uint64(sampled))
	f.bytes += bytes
	spread(f.delivered, from, from+skip, f.c.bucket, bytes)
	var n uint64
	switch {
	case (f.cfg.Op == "write" || f.cfg.Op == "read") && f.landsSize(bytes):
		// Each transfer lands its size (no kernel on the way changes
		// it): as many as the bytes make.
		n = (bytes + uint64(f.cfg.Size)/2) / uint64(f.cfg.Size)
	case s.n >= 2 && s.last > s.first:
		n = scale(uint64(s.n-1), uint64(skip), uint64(s.last-s.first))
	default:
		n = scale(uint64(s.n), uint64(skip), uint64(sampled))
	}
	if n == 0 {
		return
	}
	ok := scale(n, uint64(f.ok-s.ok), uint64(s.n))
	f.ok += int(ok)
	f.bad += int(n - ok)
	f.issued += int(n)
	f.lastEnd += skip
	if len(s.lat) == 0 {
		return
	}
	per, extra := ok/uint64(len(s.lat)), ok%uint64(len(s.lat))
	for i, t := range s.lat {
		k := per
		if uint64(i) < extra {
			k++
		}
		f.hist.addN(t, k)
	}
}

// landsSize says whether the flow's transfers each land their size (no
// kernel on the way changes it), by the samples' bytes and finished
// transfers (before carry added carried bytes), or, when transfers too
// big to finish in the samples finished none, by the run's so far.
func (f *flowState) landsSize(carried uint64) bool {
	s := &f.sample
	bytes, n := f.bytes-carried-s.bytes, s.n
	if n == 0 {
		bytes, n = f.bytes-carried, f.ok+f.bad
	}
	return n > 0 && math.Abs(float64(bytes)/float64(n*f.cfg.Size)-1) < 0.1
}

// room is how long the flow's measured rate may carry it: for ever,
// unless it has a number of transfers to issue, when it is the time that
// leaves twice its depth of them to the packet level.
func (f *flowState) room() sim.Time {
	s := &f.sample
	if f.cfg.Transfers == 0 || s.n == 0 {
		return sim.Forever
	}
	left := f.cfg.Transfers - f.issued - 2*f.cfg.Depth
	if left <= 0 || s.n < 2 || s.last <= s.first {
		return 0
	}
	return sim.Time(scale(uint64(left), uint64(s.last-s.first), uint64(s.n-1)))
}
