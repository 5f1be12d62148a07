package access

import (
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/pcie/acl"
	"onic/pcie/ntb"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// table is an O-NIC's domains: the host with several ranges (one
// read-only), a GPU that may only use port B, remote requesters that may
// only reach the host.
func table(t testing.TB) *acl.ACL {
	t.Helper()
	a, err := acl.Build(acl.Config{Domains: []acl.DomainConfig{
		{Name: "host", Requesters: []string{"00:00.0", "00:02.0"}, Ranges: []acl.RangeConfig{
			{Base: 0, Size: 1 << 20, Read: true, Write: true},
			{Base: 0x7000_0000, Size: 64 << 10, Read: true},
			{Base: 0x8000_0000, Size: 1 << 30, Read: true, Write: true},
			{Base: 0xD000_0000, Size: 4 << 10, Write: true},
		}},
		{Name: "gpu", Requesters: []string{"05:00.0-05:00.1"}, Egress: []string{"port-b", "kernel:2"},
			Ranges: []acl.RangeConfig{{Base: 0x8000_0000, Size: 1 << 30, Read: true, Write: true}}},
		{Name: "remote", Requesters: []string{"20:00.0-20:00.7"}, Egress: []string{"host"},
			Ranges: []acl.RangeConfig{{Base: 0x1_0000_0000, Size: 16 << 30, Read: true, Write: true}}},
	}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func module(t testing.TB, ds []acl.Domain) *ir.Module {
	m := ir.NewModule("access_check")
	v, err := Check(m, m.Input("req", 16), m.Input("addr", 64), m.Input("size", 13), m.Input("write", 1), m.Input("egress", 5), ds)
	if err != nil {
		t.Fatal(err)
	}
	m.Output("rule", v.Rule)
	m.Output("found", v.Found)
	m.Output("domain", v.Domain)
	return m
}

var egresses = []ntb.Egress{{Kind: ntb.EgressPortA}, {Kind: ntb.EgressPortB}, {Kind: ntb.EgressLocal},
	{Kind: ntb.EgressHost}, {Kind: ntb.EgressKernel, Slot: 2}, {Kind: ntb.EgressKernel, Slot: 3}}

// TestAgainstACL: 30,000 accesses — requesters in and out of domains,
// addresses at and across range edges, sizes 1 to 4096, reads and writes,
// every egress — get the same verdict from the RTL as from acl.Check.
func TestAgainstACL(t *testing.T) {
	a := table(t)
	ds := a.Domains()
	s, err := sim.New(module(t, ds))
	if err != nil {
		t.Fatal(err)
	}
	reqs := []tlp.ID{0x0000, 0x0010, 0x0500, 0x0501, 0x0502, 0x2000, 0x2007, 0x2008, 0x1234}
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 30000 {
		req := reqs[rng.IntN(len(reqs))]
		var addr uint64
		d := ds[rng.IntN(len(ds))]
		sp := d.Spans[rng.IntN(len(d.Spans))]
		switch rng.IntN(3) {
		case 0:
			addr = sp.Base + rng.Uint64N(sp.End-sp.Base)
		case 1:
			addr = sp.End - 4096 + rng.Uint64N(8192)
		default:
			addr = sp.Base - 8 + rng.Uint64N(16)
		}
		size := 1 + rng.Uint64N(4096)
		write := rng.IntN(2) == 0
		e := egresses[rng.IntN(len(egresses))]
		want := a.Check(req, addr, size, write, e)
		s.Set("req", uint64(req))
		s.Set("addr", addr)
		s.Set("size", size)
		s.Set("write", b(write))
		bit := uint64(0)
		for acl.EgressBit(e)>>bit != 1 {
			bit++
		}
		s.Set("egress", bit)
		rule, _ := s.Get("rule")
		dom, _ := s.Get("domain")
		if acl.Rule(rule) != want.Rule || want.Domain >= 0 && dom != uint64(want.Domain) {
			t.Fatalf("%d: %s %#x+%d write=%v %s: RTL %s (domain %d), acl %s (domain %d)", i, req, addr, size, write, e,
				acl.Rule(rule), dom, want.Rule, want.Domain)
		}
	}
}

func b(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// TestVerilog: the check is clean under Verilator -Wall.
func TestVerilog(t *testing.T) { verilator.Lint(t, module(t, table(t).Domains())) }
