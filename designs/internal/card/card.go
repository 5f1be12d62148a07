// Package card builds the O-NIC's top as far as it is generated: AMD's
// PCIE4 block's four interfaces (designs/internal/pcie4) around the PCIe
// manager's host and port pipelines (designs/manager), with an optical
// link layer (designs/internal/optlink) on each port.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package card

import (
	"onic/designs/manager"
	"onic/hdlgen/ir"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/pcie/pg213"
)

// Ports are the optical ports, by the prefix their top-level signals
// carry.
var Ports = []struct{ Prefix string }{
	{"port_a"},
	{"port_b"},
}

// DefaultHoldTLPs and HoldBeats are the hold buffer's, as the card and
// the emulator share them (pcie/manager).
const (
	DefaultHoldTLPs = pmgr.DefaultHoldTLPs
	HoldBeats       = pmgr.HoldBeats
)

// PartsOf builds the blocks of the card around the manager d: its port
// pipeline and register block from the same configuration, link on each
// optical port, and the user extended configuration space of f, the
// O-NIC's host-facing function (pcie.NewONIC).
func PartsOf(d *manager.Design, link *ir.Module, f *pcie.Function) (Parts, error) {
	ext, err := pg213.UserExtended(f)
	if err != nil {
		return Parts{}, err
	}
	pi, err := d.PortIn()
	if err != nil {
		return Parts{}, err
	}
	regs, err := manager.BuildRegBlock(d.Config)
	if err != nil {
		return Parts{}, err
	}
	p := Parts{Manager: d.Module, PortIn: pi.Module, Link: link, Regs: regs, ExtConfig: ext, RegisterBAR: d.Config.Manager.RegisterBAR}
	if d.Config.Hold {
		p.HoldTLPs = d.Config.HoldTLPs
		if p.HoldTLPs == 0 {
			p.HoldTLPs = DefaultHoldTLPs
		}
	}
	return p, nil
}
