package cluster

import (
	"time"

	"onic/emu/sim"
	"onic/pcie/manager"
	"onic/tlp"
)

// pipeline times an O-NIC's PCIe manager as the generated RTL runs
// (designs/manager): a fixed latency, and per ingress (host, port A, port
// B) one data-path-wide beat per cycle, the header riding a sideband with
// the first beat. In front of each ingress, as in the card
// (designs/internal/card), sits an adapter that strips a descriptor from
// 512-bit beats (realign.Strip): the PCIe block's CQ for the host's
// requests and RC for its completions (a 16- and a 12-byte descriptor,
// PG213 with straddling off), each port's deframer for what its link
// received (a 20-byte token and header slot). An adapter takes a beat a
// cycle, packets back to back, so a packet occupies it for as many cycles
// as its descriptor and payload fill 512-bit beats: five for a 256-byte
// write from the host, where the pipeline takes four. It also keeps what
// the report says about it.
type pipeline struct {
	latency sim.Time
	cyclePS float64
	width   int
	// free is when each ingress has fed in every beat it was given, and
	// busy how long it was busy in all: for each TLP, the longer of its
	// adapter's time and the pipeline's.
	free, busy [3]sim.Time
	// adapter is when each adapter has taken in every packet it was
	// given: CQ, port A's, port B's (by ingress), RC, then toward the
	// host RQ and CC.
	adapter [6]sim.Time
	// replaying is set while the TLPs a full reflash held go into the
	// new manager: they came through their adapters as they arrived.
	replaying bool
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

// adapterBytes is the width of the adapters in front of the pipeline's
// ingresses: PG213's 512-bit interface for Gen3 x16, and the optical
// ports' deframers.
const adapterBytes = 64

// descriptorBytes is what goes before a packet's payload in each
// adapter, by pipeline.adapter's index: CQ's descriptor (PG213), the
// optical frame's token and header slot on each port (optlink.FrontDWs),
// RC's, RQ's and CC's descriptors (PG213).
var descriptorBytes = [6]int{16, 20, 20, 12, 16, 12}

// pipeline.adapter's indices of the RC, RQ and CC adapters.
const (
	rcAdapter = 3 + iota
	rqAdapter
	ccAdapter
)

// take feeds a TLP with payload bytes from ingress in (a completion if
// cpl) to the pipeline at now: it goes through its adapter once the
// packets before it there have, taking a cycle for each 512-bit beat its
// descriptor and payload fill, and starts into the pipeline once the TLPs
// before it from the same ingress have gone in, occupying the ingress for
// max(1, ceil(payload bits / width)) cycles. It returns when the TLP
// starts.
func (p *pipeline) take(in manager.Ingress, cpl bool, payload int, now sim.Time) (start sim.Time) {
	a := int(in)
	if cpl && in == manager.FromHost {
		a = rcAdapter
	}
	through, adapted := now, sim.Time(0)
	if !p.replaying {
		through, adapted = p.adapt(a, payload, now)
	}
	start = max(through, p.free[in])
	beats := max(1, (payload*8+p.width-1)/p.width)
	occ := sim.Time(float64(beats)*p.cyclePS + 0.5)
	p.free[in] = start + occ
	p.busy[in] += max(occ, adapted)
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

// adapt passes a packet with payload bytes through adapter a at now: it
// starts once the packets before it have gone through and takes a cycle
// for each 512-bit beat its descriptor and payload fill. It returns when
// the packet starts and how long it occupies the adapter.
func (p *pipeline) adapt(a, payload int, now sim.Time) (start, occ sim.Time) {
	start = max(now, p.adapter[a])
	beats := (descriptorBytes[a] + payload + adapterBytes - 1) / adapterBytes
	occ = sim.Time(float64(beats)*p.cyclePS + 0.5)
	p.adapter[a] = start + occ
	return start, occ
}

// send passes a TLP the O-NIC sends its host, with payload bytes (a
// completion if cpl), through the PCIe block's RQ or CC interface at
// ready, and returns when the block starts to take it: five beats of
// RQ for a 256-byte write, 102.4 Gb/s at 250 MHz, below the Gen3 x16
// link's rate.
func (p *pipeline) send(cpl bool, payload int, ready sim.Time) sim.Time {
	a := rqAdapter
	if cpl {
		a = ccAdapter
	}
	start, _ := p.adapt(a, payload, ready)
	return start
}

// payloadBytes is t's payload in bytes.
func payloadBytes(t *tlp.TLP) int {
	if !t.Kind().HasData() {
		return 0
	}
	if t.Length == 0 {
		return 4096 // (a Length of 0 is 1024 DWs, §2.2.2)
	}
	return int(t.Length) * 4
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
