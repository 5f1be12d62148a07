package access

import (
	"math/big"
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
		{Name: "host", Requesters: []string{"00:00.0", "00:02.0"}, Ingress: []string{"host"}, Ranges: []acl.RangeConfig{
			{Base: 0, Size: 1 << 20, Read: true, Write: true},
			{Base: 0x7000_0000, Size: 64 << 10, Read: true},
			{Base: 0x8000_0000, Size: 1 << 30, Read: true, Write: true},
			{Base: 0xD000_0000, Size: 4 << 10, Write: true},
		}},
		{Name: "gpu", Requesters: []string{"05:00.0-05:00.1"}, Ingress: []string{"host"}, Egress: []string{"port-b", "kernel:2"},
			Ranges: []acl.RangeConfig{{Base: 0x8000_0000, Size: 1 << 30, Read: true, Write: true}}},
		{Name: "remote", Requesters: []string{"20:00.0-20:00.7"}, Ingress: []string{"port-a", "port-b"}, Egress: []string{"host"},
			Ranges: []acl.RangeConfig{{Base: 0x1_0000_0000, Size: 16 << 30, Read: true, Write: true}}},
	}, RuleSlots: slots}, 4)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// slots is the number of run-time rule slots the tests give the check.
const slots = 4

func module(t testing.TB, ds []acl.Domain) *ir.Module {
	m, err := Module("access_check", ds, slots)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var egresses = []ntb.Egress{{Kind: ntb.EgressPortA}, {Kind: ntb.EgressPortB}, {Kind: ntb.EgressLocal},
	{Kind: ntb.EgressHost}, {Kind: ntb.EgressKernel, Slot: 2}, {Kind: ntb.EgressKernel, Slot: 3}}

// TestAgainstACL: 30,000 accesses — requesters in and out of domains,
// addresses at and across range and rule-slot edges, sizes 1 to 4096,
// reads and writes, every egress, with the slots reprogrammed every 100
// accesses (on and off, any domain, overlapping configured ranges or
// not, up to the top of the address space) — get the same verdict from
// the RTL as from acl.Check.
func TestAgainstACL(t *testing.T) {
	a := table(t)
	ds := a.Domains()
	s, err := sim.New(module(t, ds))
	if err != nil {
		t.Fatal(err)
	}
	reqs := []tlp.ID{0x0000, 0x0010, 0x0500, 0x0501, 0x0502, 0x2000, 0x2007, 0x2008, 0x1234}
	rng := rand.New(rand.NewPCG(8, 8))
	var enabled int
	seen := map[acl.Rule]int{}
	for i := range 30000 {
		if i%100 == 0 {
			enabled = program(t, s, a, rng)
		}
		req := reqs[rng.IntN(len(reqs))]
		var addr uint64
		d := ds[rng.IntN(len(ds))]
		sp := d.Spans[rng.IntN(len(d.Spans))]
		if rng.IntN(3) == 0 { // a slot's edges instead
			r := a.RuleSlot(rng.IntN(slots))
			sp = acl.Span{Base: r.Base, End: r.Base + uint64(r.Pages)*acl.Page}
		}
		switch rng.IntN(3) {
		case 0:
			addr = sp.Base + rng.Uint64N(max(sp.End-sp.Base, 1))
		case 1:
			addr = sp.End - 4096 + rng.Uint64N(8192)
		default:
			addr = sp.Base - 8 + rng.Uint64N(16)
		}
		size := 1 + rng.Uint64N(4096)
		op := acl.Op(rng.IntN(4))
		e := egresses[rng.IntN(len(egresses))]
		in := acl.Ingress(rng.IntN(3))
		want := a.Check(req, in, addr, size, op, e)
		s.Set("req", uint64(req))
		s.Set("ingress", uint64(in))
		s.Set("addr", addr)
		s.Set("size", size)
		s.Set("op", uint64(op))
		bit := uint64(0)
		for acl.EgressBit(e)>>bit != 1 {
			bit++
		}
		s.Set("egress_bit", bit)
		rule, _ := s.Get("rule")
		dom, _ := s.Get("domain")
		if acl.Rule(rule) != want.Rule || want.Domain >= 0 && dom != uint64(want.Domain) {
			t.Fatalf("%d: %s from %s %#x+%d op=%d %s (%d slots on): RTL %s (domain %d), acl %s (domain %d)", i, req, in, addr, size, op, e,
				enabled, acl.Rule(rule), dom, want.Rule, want.Domain)
		}
		seen[want.Rule]++
	}
	for r := acl.Allowed; r <= acl.SourceInvalid; r++ {
		if seen[r] == 0 {
			t.Errorf("no access was %s: the stimulus misses a verdict (%v)", r, seen)
		}
	}
}

// program writes random rules into every slot of a and the same into the
// simulated check's slot inputs; it returns how many are on.
func program(t *testing.T, s *sim.Sim, a *acl.ACL, rng *rand.Rand) int {
	t.Helper()
	bases := []uint64{0, 0x7000_0000, 0x8000_0000, 0xD000_0000, 0x1_0000_0000, 0x4_0000_0000, 0xFFFF_FFFF_FFFF_0000}
	var en, rd, wr uint64
	dom, page, pages := new(big.Int), new(big.Int), new(big.Int)
	on := 0
	for i := range slots {
		r := acl.RuleSlot{Enabled: rng.IntN(3) != 0, Read: rng.IntN(2) == 0, Write: rng.IntN(2) == 0,
			Domain: uint16(rng.IntN(len(a.Domains()))), Base: bases[rng.IntN(len(bases))] + uint64(rng.IntN(64))*acl.Page,
			Pages: []uint32{0, 1, 2, 16, 1 << 18, 0xFFFF_FFFF}[rng.IntN(6)]}
		// The register map refuses a slot past 2^64 (or naming no domain):
		// clip it to end there.
		r.Pages = uint32(min(uint64(r.Pages), 1<<52-r.Base/acl.Page))
		if err := a.SetRuleSlot(i, r); err != nil {
			t.Fatal(err)
		}
		en |= b(r.Enabled) << i
		rd |= b(r.Read) << i
		wr |= b(r.Write) << i
		dom.Or(dom, new(big.Int).Lsh(big.NewInt(int64(r.Domain)), uint(16*i)))
		page.Or(page, new(big.Int).Lsh(new(big.Int).SetUint64(r.Base>>12), uint(52*i)))
		pages.Or(pages, new(big.Int).Lsh(new(big.Int).SetUint64(uint64(r.Pages)), uint(32*i)))
		on += int(b(r.Enabled))
	}
	s.Set("rule_en", en)
	s.Set("rule_read", rd)
	s.Set("rule_write", wr)
	for name, v := range map[string]*big.Int{"rule_domain": dom, "rule_page": page, "rule_pages": pages} {
		var w []uint64
		for x := new(big.Int).Set(v); x.Sign() > 0; x.Rsh(x, 64) {
			w = append(w, new(big.Int).And(x, new(big.Int).SetUint64(^uint64(0))).Uint64())
		}
		if err := s.SetWords(name, w); err != nil {
			t.Fatal(err)
		}
	}
	return on
}

func b(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// TestVerilog: the check is clean under Verilator -Wall.
func TestVerilog(t *testing.T) { verilator.Lint(t, module(t, table(t).Domains())) }
