package cluster

import (
	"fmt"
	"math"

	"onic/emu/sim"
	"onic/kernels"
	"onic/pcie/manager"
	"onic/tlp"
)

// maxKernelSlots bounds the kernel slots an O-NIC can have.
const maxKernelSlots = 16

// KernelConfig binds an in-network kernel to an O-NIC's kernel slot; the
// windows whose egress is "kernel:SLOT" feed it. The posted writes it
// receives pass through it and leave out of an optical port.
//
// A kernel of onic's library (onic kernel list) is timed by its own cycle
// simulation (kernels.Profile): its latency, its cycles per 64-byte beat
// and its output bytes per input byte, in the O-NIC's clock. Any other
// name is an opaque kernel timed by Cycles and Gbps.
type KernelConfig struct {
	Slot int    `mapstructure:"slot"`
	Name string `mapstructure:"name"`
	// Cycles is an opaque kernel's pipeline latency in the O-NIC's clock
	// (default 64).
	Cycles int `mapstructure:"cycles"`
	// Gbps is an opaque kernel's throughput (default 128: a 512-bit
	// datapath at 250 MHz).
	Gbps float64 `mapstructure:"gbps"`
	// BufferBeats is the kernel's input buffer in beats (default 4): a
	// backlog beyond it stalls the PCIe manager, and with it every TLP
	// the O-NIC handles, until the kernel catches up.
	BufferBeats int `mapstructure:"buffer_beats"`
	// Egress (port-a or port-b) and Translated: its output goes out of
	// that port to Translated plus the offset the window gave.
	Egress     string `mapstructure:"egress"`
	Translated uint64 `mapstructure:"translated"`
}

// kernel is a loaded kernel.
type kernel struct {
	o       *onicNode
	cfg     KernelConfig
	port    int
	prof    kernels.Profile
	library bool     // timed by its cycle simulation
	cycle   float64  // picoseconds per cycle of the O-NIC's clock
	delay   sim.Time // pipeline latency
	buffer  sim.Time // how long a backlog its input buffer absorbs
	free    sim.Time // when it can take the next TLP

	tlps, bytesIn, bytesOut uint64
	first, last             sim.Time // first TLP in, last TLP out
	latency                 sim.Time // summed over TLPs: ready at its input to out
	stall                   sim.Time // the manager stalled by a full input buffer
}

func (o *onicNode) loadKernel(kc KernelConfig, p string) error {
	slots := o.cfg.Manager.Translation.KernelSlots
	if slots == 0 {
		slots = 4 // the translation tables' default
	}
	if kc.Slot < 0 || kc.Slot >= min(slots, maxKernelSlots) {
		return fmt.Errorf("%s.slot: %d is not a kernel slot of the O-NIC", p, kc.Slot)
	}
	if o.kernels[kc.Slot] != nil {
		return fmt.Errorf("%s.slot: slot %d already holds kernel %q", p, kc.Slot, o.kernels[kc.Slot].cfg.Name)
	}
	if kc.Cycles < 0 || kc.Gbps < 0 || kc.BufferBeats < 0 {
		return fmt.Errorf("%s: cycles, gbps and buffer_beats must be positive", p)
	}
	if kc.BufferBeats == 0 {
		kc.BufferBeats = 4
	}
	k := &kernel{o: o, cfg: kc, cycle: 1e6 / o.cfg.ClockMHz, first: -1}
	if lk, err := kernels.Lookup(kc.Name); err == nil {
		if kc.Cycles != 0 || kc.Gbps != 0 {
			return fmt.Errorf("%s: kernel %q is timed by its cycle simulation; cycles and gbps are for opaque kernels", p, kc.Name)
		}
		if lk.Inputs != 1 {
			return fmt.Errorf("%s.name: kernel %q combines two streams; the emulator's kernel slots take one", p, kc.Name)
		}
		if k.prof, err = lk.Profile(); err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		k.library = true
	} else {
		if kc.Cycles == 0 {
			kc.Cycles = 64
		}
		if kc.Gbps == 0 {
			kc.Gbps = 128
		}
		// An opaque kernel: a 64-byte beat every 512/Gbps ns.
		k.prof = kernels.Profile{Latency: kc.Cycles, BeatBytes: 64, OutPerIn: 1,
			CyclesPerBeat: 512 / kc.Gbps * 1e3 / k.cycle}
		k.cfg = kc
	}
	k.delay = sim.Time(float64(k.prof.Latency) * k.cycle)
	k.buffer = sim.Time(float64(kc.BufferBeats) * k.prof.CyclesPerBeat * k.cycle)
	switch kc.Egress {
	case "port-a":
	case "port-b":
		k.port = 1
	default:
		return fmt.Errorf("%s.egress: %q must be port-a or port-b", p, kc.Egress)
	}
	o.kernels[kc.Slot] = k
	return nil
}

// process runs m, sent to the kernel at window address addr, through the
// kernel and out of its port: it waits for the kernel, takes its beats'
// cycles, and leaves after the pipeline latency, as long as the kernel's
// output makes it. A wait longer than the input buffer absorbs stalls the
// manager. Only posted writes stream through kernels.
func (k *kernel) process(m *msg, addr uint64, ready sim.Time) {
	o := k.o
	if m.t.Kind() != tlp.MWr {
		o.c.fail(m, manager.Unsupported)
		return
	}
	proxy, ok := o.mgr.Tables().ProxyID(m.t.RequesterID)
	if !ok {
		o.c.fail(m, manager.NoProxyID)
		return
	}
	n := int(m.t.Length) * 4
	start := max(ready, k.free)
	if wait := start - ready; wait > k.buffer {
		// The buffer fills: the manager takes nothing more until the
		// kernel has room again.
		until := start - k.buffer
		if until > o.stalled {
			k.stall += until - max(o.stalled, ready)
			o.stalled = until
		}
	}
	beats := (n + k.prof.BeatBytes - 1) / k.prof.BeatBytes
	k.free = start + sim.Time(float64(beats)*k.prof.CyclesPerBeat*k.cycle)
	out := k.free + k.delay
	if k.first < 0 {
		k.first = start
	}
	k.last = out
	k.tlps++
	k.bytesIn += uint64(n)
	outBytes := max(4, int(math.Ceil(float64(n)*k.prof.OutPerIn)))
	k.bytesOut += uint64(outBytes)
	k.latency += out - ready
	// The output leaves as writes of the transformed length in whole DWs,
	// none bigger than the write that came in (so within the MPS it
	// obeyed): a kernel that grows its data sends more writes.
	m.t.Address = k.cfg.Translated + addr
	m.t.RequesterID = proxy
	m.t.FirstBE = 0xF
	for off := n; off < outBytes; off += n {
		cp := o.c.newMsg()
		o.c.attach(cp, m.rec)
		cp.t = m.t
		cp.t.Address += uint64(off)
		cp.t.Length = uint16((min(n, outBytes-off) + 3) / 4)
		cp.t.LastBE = lastBE(cp.t.Length)
		if m.rec >= 0 {
			o.c.recs[m.rec].copies++
		}
		o.toPort(o.ports[k.port], cp, out)
	}
	m.t.Length = uint16((min(n, outBytes) + 3) / 4)
	m.t.LastBE = lastBE(m.t.Length)
	o.toPort(o.ports[k.port], m, out)
}

// lastBE is the last DW byte enables of a whole-DW write of n DWs.
func lastBE(n uint16) uint8 {
	if n == 1 {
		return 0
	}
	return 0xF
}

// KernelReport is what a kernel in a slot did.
type KernelReport struct {
	Name          string  `json:"name"`
	Slot          int     `json:"slot"`
	Simulated     bool    `json:"simulated"` // timed by its cycle simulation (else opaque)
	TLPs          uint64  `json:"tlps"`
	BytesIn       uint64  `json:"bytes_in"`
	BytesOut      uint64  `json:"bytes_out"`
	GbpsIn        float64 `json:"gbps_in"`         // payload in over its active time, first TLP in to last out
	LatencyCycles int     `json:"latency_cycles"`  // its pipeline
	MeanLatencyNs float64 `json:"mean_latency_ns"` // per TLP: at its input to out, waiting included
	StallNs       float64 `json:"manager_stall_ns"`
}

// report is the kernel's report.
func (k *kernel) report() KernelReport {
	r := KernelReport{Name: k.cfg.Name, Slot: k.cfg.Slot, Simulated: k.library, TLPs: k.tlps, BytesIn: k.bytesIn, BytesOut: k.bytesOut,
		LatencyCycles: k.prof.Latency, StallNs: float64(k.stall) / float64(sim.Nanosecond)}
	if k.tlps > 0 {
		r.MeanLatencyNs = float64(k.latency) / float64(k.tlps) / float64(sim.Nanosecond)
		if span := k.last - k.first; span > 0 {
			r.GbpsIn = float64(k.bytesIn) * 8 / (float64(span) / float64(sim.Second)) / 1e9
		}
	}
	return r
}
