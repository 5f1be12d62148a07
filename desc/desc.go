// Package desc resolves an O-NIC, as an entry of a scenario's onics or
// a firmware spec gives it, into one validated, defaulted and typed
// description: its host-facing function and BAR sizes, its manager's
// configuration with the translation tables built from it, its down
// policy and egress timeouts, and the kernels in its slots with their
// egress and sources as values rather than names. The emulator
// (emu/cluster), the card's generator (designs/bundle, onic hdl gen) and
// the image builder (firmware/build) all take it, so what an entry means
// — its defaults, the limits its fields keep, the names it is written
// with, the library kernels it names — is decided here once. A consumer
// applies only the rules that are its own: the generator, for one,
// refuses a kernel the emulator times from configured figures, since it
// has no RTL for it.
package desc

import (
	"fmt"

	"onic/emu/scenario"
	"onic/firmware"
	"onic/pcie"
	"onic/pcie/lanes"
	"onic/pcie/manager"
	"onic/pcie/ntb"
)

// ONIC is an O-NIC, resolved.
type ONIC struct {
	// Name is the O-NIC's name in its scenario (a firmware spec's name
	// for a spec).
	Name string
	// Function is its host-facing function, as pcie.NewONIC builds it
	// with the documented defaults, and BARs the sizes of its memory
	// BARs (0: no BAR), as the manager's tables are built against them.
	Function *pcie.Function
	BARs     [6]uint64
	// ClockMHz, DataWidth and PipelineCycles are the manager's clock, its
	// data path in bits (256 or 512) and its latency in cycles.
	ClockMHz       float64
	DataWidth      int
	PipelineCycles int
	// Lanes is the optical ports' lane plan.
	Lanes lanes.Plan
	// Manager is the manager's configuration, checked by building the
	// manager it describes; Tables are its translation tables.
	Manager manager.Config
	Tables  *ntb.Tables
	// Hold is the down policy: true for hold (TLPs for a dark port wait
	// in its hold buffer, up to HoldTLPs of them), false for fail.
	Hold     bool
	HoldTLPs int
	// EgressStallCycles and CreditTimeoutCycles are the egress watch's
	// timeouts in manager clock cycles (emu/scenario.ONICConfig).
	EgressStallCycles   int
	CreditTimeoutCycles int
	// ReflashHold is the reflash policy: true for hold (traffic that
	// meets a reflash waits, up to HoldTLPs, until the O-NIC or slot is
	// back), false for fail. A firmware spec leaves it to the O-NIC it is
	// loaded into (true here).
	ReflashHold bool
	// Kernels are the kernels in its slots, in the order given.
	Kernels []Kernel
}

// Function returns the O-NIC's host-facing function with the documented
// defaults (pcie.NewONIC), which every O-NIC of a scenario and every
// image's card presents.
func Function() (*pcie.Function, error) {
	return pcie.NewONIC("onic", pcie.DefaultONICInfo, pcie.DefaultONICWindowBytes)
}

// FromScenario resolves a scenario's O-NIC o; where names it in errors
// (onics[0], or a file and entry).
func FromScenario(o scenario.ONICConfig, where string) (*ONIC, error) {
	o.Defaults()
	if err := o.Check(where); err != nil {
		return nil, err
	}
	d, err := resolve(o.Name, o.Manager, where+".manager.")
	if err != nil {
		return nil, err
	}
	d.ClockMHz, d.DataWidth, d.PipelineCycles = o.ClockMHz, o.DataWidth, o.PipelineCycles
	d.Lanes, _ = lanes.Parse(o.LanePlan) // checked above
	d.Hold, d.HoldTLPs = o.DownPolicy == "hold", o.HoldTLPs
	d.EgressStallCycles, d.CreditTimeoutCycles = o.EgressStallCycles, o.CreditTimeoutCycles
	d.ReflashHold = o.ReflashPolicy == "hold"
	ks := make([]KernelConfig, len(o.Kernels))
	for i, k := range o.Kernels {
		ks[i] = KernelConfig{KernelConfig: k, Where: fmt.Sprintf("%s.kernels[%d]", where, i)}
	}
	if d.Kernels, err = Kernels(ks, d.Tables.KernelSlots()); err != nil {
		return nil, err
	}
	return d, nil
}

// FromSpec resolves a firmware spec's card: its manager, down policy and
// slots (a slot with no kernel is an empty slot of the shape its egress
// and sources give). The spec is checked first (firmware.Spec.Check).
func FromSpec(s firmware.Spec) (*ONIC, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	d, err := resolve(s.Name, s.Manager, "manager: ")
	if err != nil {
		return nil, err
	}
	d.ClockMHz, d.DataWidth, d.PipelineCycles = s.ClockMHz, s.Width, manager.Depth
	d.Lanes = lanes.Default
	d.Hold, d.HoldTLPs = s.DownPolicy == "hold", s.HoldTLPs
	d.EgressStallCycles, d.CreditTimeoutCycles = scenario.DefaultEgressStallCycles, scenario.DefaultCreditTimeoutCycles
	d.ReflashHold = true
	ks := make([]KernelConfig, len(s.Slots))
	for i, sl := range s.Slots {
		ks[i] = SlotConfig(sl)
		ks[i].Where = fmt.Sprintf("slots[%d]", i)
	}
	if d.Kernels, err = Kernels(ks, d.Tables.KernelSlots()); err != nil {
		return nil, err
	}
	return d, nil
}

// resolve builds the function and checks the manager's configuration c
// by building the manager, whose tables it keeps; prefix leads its
// errors.
func resolve(name string, c manager.Config, prefix string) (*ONIC, error) {
	f, err := Function()
	if err != nil {
		return nil, err
	}
	mgr, err := manager.New(c, f, 0)
	if err != nil {
		return nil, fmt.Errorf("%s%v", prefix, err)
	}
	return &ONIC{Name: name, Function: f, BARs: f.MemorySizes(), Manager: c, Tables: mgr.Tables()}, nil
}

// SlotConfig is the kernel entry of a firmware spec's slot s (Where:
// "slot N"); a slot with no kernel is an empty slot.
func SlotConfig(s firmware.SlotSpec) KernelConfig {
	return KernelConfig{KernelConfig: scenario.KernelConfig{Slot: s.Slot, Name: s.Kernel, Egress: s.Egress,
		Translated: s.Translated, Sources: s.Sources, PairBufferKiB: s.PairBufferKiB},
		Where: fmt.Sprintf("slot %d", s.Slot), Empty: true}
}
