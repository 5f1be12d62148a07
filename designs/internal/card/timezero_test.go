package card

import (
	"encoding/binary"
	"slices"
	"testing"

	"onic/designs/manager"
	"onic/hdlgen/ir"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/testbenches/replay"
	"onic/testbenches/tools"
	"onic/tlp"
)

// TestIdleBusFromTimeZero: the whole card from reset with an idle PCIe
// bus and dark optical ports, where the first TLP is what every driver
// does first — a register read in BAR0 — and then another. Nothing moves
// the manager's table indexes before that read (in_bar starts at 0 and
// stays 0), so a table printed as an always @(*) block would still be X
// in Icarus and spread X through the pipeline for good. The IR
// simulation's answers are checked, then the Verilog replayed under
// Icarus and Verilator from time 0 must give the same outputs every
// cycle.
func TestIdleBusFromTimeZero(t *testing.T) {
	tools.Long(t)
	// onicA of the two-party scenario, its host's domain allowed its own
	// O-NIC's registers, so that the reads return data.
	top := cardOf(t, "onic_card", withRegisters(config(t, 0)), testLink(t))
	const idle, limit = 40, 400
	p := newNetRecorded(t, []*ir.Module{top}, nil, idle+limit)
	for range idle {
		p.cycle()
	}
	regBAR := config(t, 0).Manager.RegisterBAR
	if regBAR != 0 {
		t.Fatalf("the scenario's register BAR is %d; this test wants BAR0", regBAR)
	}
	for i, off := range []uint64{0, 4} {
		x := tlp.TLP{Tag: uint16(i), RequesterID: tlp.NewID(0, 0, 0), Length: 1, FirstBE: 0xF, Address: bases[0] + off}
		x.Fmt, x.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
		p.request(0, &x, 0)
		p.run("the completion of the BAR0 read", limit/2, func() bool { return len(p.cc[0]) > i })
		c := p.cc[0][i]
		if c.Kind() != tlp.CplD || c.Status != tlp.StatusSC || c.Tag != x.Tag || c.Length != 1 {
			t.Fatalf("read %d of BAR0 at %#x: got %s", i, off, c.String())
		}
		if i == 0 && binary.LittleEndian.Uint32(c.Data) != pmgr.IDValue {
			t.Fatalf("the ID register reads %x, want %#x", c.Data, pmgr.IDValue)
		}
		t.Logf("read %d of BAR0 at %#x: %s", i, off, c.String())
	}
	for p.cycles < idle+limit {
		p.cycle()
	}
	replay.VerifyUnder(t, p.rec, "icarus", "icarus-2012", "verilator")
}

// withRegisters is c with its host's domain (the first) also allowed the
// O-NIC's own register BAR (64 KiB: the manager's registers, the slots'
// pages, the MSI-X table and PBA), read and write.
func withRegisters(c manager.Config) manager.Config {
	host := &c.Manager.Access.Domains[0]
	host.Egress = append(slices.Clone(host.Egress), "local")
	host.Ranges = append(slices.Clone(host.Ranges), acl.RangeConfig{Base: 0, Size: 0x10000, Read: true, Write: true})
	return c
}
