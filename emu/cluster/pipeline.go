package cluster

import (
	"time"

	"onic/emu/sim"
	"onic/pcie/manager"
)

// pipeline times an O-NIC's PCIe manager as the generated RTL runs
// (designs/manager): a fixed latency, and per ingress (host, port A, port
// B) one data-path-wide beat per cycle, the header riding a sideband with
// the first beat. It also keeps what the report says about it.
type pipeline struct {
	latency sim.Time
	cyclePS float64
	width   int
	// free is when each ingress has fed in every beat it was given, and
	// busy how long it kept the pipeline busy in all.
	free, busy [3]sim.Time
	// The TLPs that had to wait for their ingress: how many, and the
	// total and longest wait.
	waited           uint64
	waitSum, waitMax sim.Time
	// behindEgress is set while the pipeline takes TLPs that waited for a
	// full egress buffer: they come together once it has room, and their
	// short wait for each other is the egress's doing, not a bottleneck
	// of the manager's.
	behindEgress bool
	// chained is set per ingress while it has been busy without a break
	// since it last took TLPs behind the egress: the TLPs that queue up
	// behind such a burst wait for the egress's doing too.
	chained [3]bool
}

// set gives the pipeline its latency in cycles, clock and data path width
// (from the configuration, or a deployed image's manifest).
func (p *pipeline) set(cycles int, clockMHz float64, width int) {
	p.cyclePS = 1e6 / clockMHz
	p.latency = sim.Time(float64(cycles) * 1e6 / clockMHz)
	p.width = width
}

// take feeds a TLP with payload bytes from ingress in to the pipeline at
// now: it starts when the TLPs before it from the same ingress have gone
// in and occupies the ingress for max(1, ceil(payload bits / width))
// cycles. It returns when the TLP starts.
func (p *pipeline) take(in manager.Ingress, payload int, now sim.Time) (start sim.Time) {
	start = max(now, p.free[in])
	beats := max(1, (payload*8+p.width-1)/p.width)
	occ := sim.Time(float64(beats)*p.cyclePS + 0.5)
	p.free[in] = start + occ
	p.busy[in] += occ
	wait := start - now
	switch {
	case p.behindEgress:
		p.chained[in] = true
	case wait <= 0:
		p.chained[in] = false
	}
	if wait > 0 && !p.chained[in] {
		p.waited++
		p.waitSum += wait
		p.waitMax = max(p.waitMax, wait)
	}
	return start
}

// report says how the pipeline fared over a run of d, or nil if no TLP
// ever waited for it (it was nowhere a bottleneck).
func (p *pipeline) report(d time.Duration) *PipelineReport {
	if p.waited == 0 {
		return nil
	}
	r := &PipelineReport{DataWidth: p.width, ClockMHz: 1e6 / p.cyclePS, Waited: p.waited,
		MeanWaitNs: ns(p.waitSum) / float64(p.waited), MaxWaitNs: ns(p.waitMax)}
	for i, b := range p.busy {
		r.Busy[i] = min(1, float64(b)/float64(ps(d)))
	}
	return r
}
