package cluster

import (
	"fmt"

	"onic/emu/sim"
	"onic/pcie/manager"
	"onic/tlp"
)

// maxKernelSlots bounds the kernel slots an O-NIC can have.
const maxKernelSlots = 16

// KernelConfig is an in-network kernel loaded in an O-NIC's slot, as the
// emulator times it: the posted writes a window sends to the slot pass
// through the kernel's pipeline and leave, transformed, out of an optical
// port. (What the kernel computes belongs to the kernel authoring issue;
// here it has a latency and a throughput.)
type KernelConfig struct {
	Slot int    `mapstructure:"slot"`
	Name string `mapstructure:"name"`
	// Cycles is its pipeline latency in the O-NIC's clock (default 64).
	Cycles int `mapstructure:"cycles"`
	// Gbps is its throughput (default 128: a 512-bit datapath at 250 MHz).
	Gbps float64 `mapstructure:"gbps"`
	// Egress (port-a or port-b) and Translated: its output goes out of
	// that port to Translated plus the offset the window gave.
	Egress     string `mapstructure:"egress"`
	Translated uint64 `mapstructure:"translated"`
}

// kernel is a loaded kernel.
type kernel struct {
	o      *onicNode
	cfg    KernelConfig
	port   int
	delay  sim.Time // pipeline latency
	perBit float64  // picoseconds per bit of throughput
	free   sim.Time // when it can take the next TLP
	tlps   uint64
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
	if kc.Cycles == 0 {
		kc.Cycles = 64
	}
	if kc.Gbps == 0 {
		kc.Gbps = 128
	}
	if kc.Cycles < 0 || kc.Gbps < 0 {
		return fmt.Errorf("%s: cycles and gbps must be positive", p)
	}
	k := &kernel{o: o, cfg: kc, delay: sim.Time(float64(kc.Cycles) * 1e6 / o.cfg.ClockMHz),
		perBit: float64(sim.Second) / (kc.Gbps * 1e9)}
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
// kernel and out of its port. Only posted writes stream through kernels.
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
	start := max(ready, k.free)
	k.free = start + sim.Time(float64(int(m.t.Length)*32)*k.perBit)
	k.tlps++
	m.t.Address = k.cfg.Translated + addr
	m.t.RequesterID = proxy
	o.toPort(o.ports[k.port], m, k.free+k.delay)
}
