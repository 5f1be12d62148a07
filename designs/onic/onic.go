// Package onic assembles the O-NIC's hardware design from a PCIe manager
// design (designs/manager) and the choices that shape the hardware: the
// manager alone, or the whole card around it (AMD's PCIE4 block's
// adapters, the manager's host and port pipelines, an optical link layer
// on each port, the kernel slots, the MSI-X controller). It builds; it
// writes nothing: designs/bundle renders what Build returns into the
// files `onic hdl gen` writes, and designs/cardsim simulates it.
package onic

import (
	"fmt"

	"onic/desc"
	"onic/designs/internal/card"
	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/hdlgen/ir"
	"onic/pcie"
	"onic/pcie/pg213"
)

// Options are the choices that shape the O-NIC's hardware beyond the
// manager's design.
type Options struct {
	// Card builds the whole card (card.Build, onic_card); otherwise the
	// design is the manager alone.
	Card bool
	// Function is the O-NIC's host-facing function: its extended
	// configuration space's description capability, and the BARs the
	// PCIE4 IP is configured with (required with Card).
	Function *pcie.Function
	// Link configures the optical link layers (zero: the defaults of
	// optlink.Config; tests train in tens of cycles).
	Link optlink.Config
	// EgressStallCycles is how long a TLP may wait at an up port that
	// takes nothing before the card treats the port as down for
	// admission (zero: card.DefaultEgressStallCycles).
	EgressStallCycles int
	// Kernels are the kernels in the card's slots (desc.ONIC's: library
	// kernels, or empty slots of a firmware spec's shapes); every other
	// slot the tables number is empty.
	Kernels []desc.Kernel
	// ExtConfigBase is the byte offset at which the PCIe block hands the
	// card its user extended configuration space (a board's block: the
	// U55C's PCIE4C at 0xE80); zero is PG213's default, 0x480.
	ExtConfigBase int
	// DropTaps adds the card's drop taps (card.Parts.DropTaps): outputs
	// that tell a simulation which TLP each port drops.
	DropTaps bool
}

// Design is a built O-NIC design.
type Design struct {
	// Manager is the PCIe manager's design it was built from.
	Manager *manager.Design
	// Top is the design's top module: the card (onic_card, before the
	// user-clock wrapper onic_top) or the manager's own module.
	Top *ir.Module
	// Card says Top is the whole card; Function is then its function.
	Card     bool
	Function *pcie.Function
	// Slots are the card's kernel slots, in order (nil for the manager
	// alone); each slot's RM is a reconfigurable partition.
	Slots []card.Slot
	// Counters are the card's counters in register-BAR order (none for
	// the manager alone).
	Counters []string
}

// Build builds the design of d with o.
func Build(d *manager.Design, o Options) (*Design, error) {
	if !o.Card {
		if len(d.Config.Manager.Relay)+len(d.Config.Manager.KernelIn) > 0 {
			return nil, fmt.Errorf("relay, kernel_in: they act on TLPs from the optical ports, which the manager alone does not take; generate the whole card (onic hdl gen without --manager-only), which has the port pipeline")
		}
		return &Design{Manager: d, Top: d.Module}, nil
	}
	if d.DataWidth != 512 {
		return nil, fmt.Errorf("pcie4: the PCIE4 adapters take the 512-bit interface; the manager is %d bits wide", d.DataWidth)
	}
	if o.Function == nil {
		return nil, fmt.Errorf("pcie4: the O-NIC's function is needed to configure the PCIE4 IP")
	}
	link, err := optlink.Module(o.Link)
	if err != nil {
		return nil, err
	}
	parts, err := card.PartsOf(d, link, o.Function)
	if err != nil {
		return nil, err
	}
	parts.EgressStallCycles = o.EgressStallCycles
	parts.DropTaps = o.DropTaps
	if o.ExtConfigBase != 0 && o.ExtConfigBase != 4*pg213.ExtFirstReg {
		// The block hands the card another user extended space.
		if parts.ExtSpace, err = pg213.ExtSpaceAt(o.ExtConfigBase); err != nil {
			return nil, err
		}
		if parts.ExtWords, err = pg213.UserExtendedIn(o.Function, parts.ExtSpace); err != nil {
			return nil, err
		}
	}
	if parts.Slots, err = card.SlotsOf(d, o.Kernels); err != nil {
		return nil, err
	}
	top := card.Build("onic_card", parts)
	if err := top.Check(); err != nil {
		return nil, err
	}
	return &Design{Manager: d, Top: top, Card: true, Function: o.Function, Slots: parts.Slots, Counters: card.Counters(top)}, nil
}

// ManagerConfig is the manager generator's configuration for the
// resolved O-NIC d: its tables, BARs, clock and width, and the down
// policy (under hold, the emulator's default, the card keeps what waits
// for a dark port in each port's hold buffer).
func ManagerConfig(d *desc.ONIC) manager.Config {
	return manager.Config{BARs: d.BARs, ClockMHz: d.ClockMHz, DataWidth: d.DataWidth, Manager: d.Manager,
		Hold: d.Hold, HoldTLPs: d.HoldTLPs}
}
