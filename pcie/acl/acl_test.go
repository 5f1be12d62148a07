package acl

import (
	"strings"
	"testing"

	"onic/pcie/ntb"
	"onic/tlp"
)

var (
	portA = ntb.Egress{Kind: ntb.EgressPortA}
	portB = ntb.Egress{Kind: ntb.EgressPortB}
	local = ntb.Egress{Kind: ntb.EgressLocal}
)

func id(s string) tlp.ID {
	x, err := tlp.ParseID(s)
	if err != nil {
		panic(err)
	}
	return x
}

func testACL(t testing.TB) *ACL {
	a, err := Build(Config{Domains: []DomainConfig{
		{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Ranges: []RangeConfig{
			{Base: 0x1000_0000, Size: 0x1000_0000, Read: true, Write: true},
			{Base: 0x8000_0000, Size: 0x1000, Read: true},
			{Base: 0x9000_0000, Size: 0x2000, Write: true},
		}},
		{Name: "gpu", Requesters: []string{"05:00.0-05:00.7"}, Ingress: []string{"host"}, Ranges: []RangeConfig{{Base: 0x1000_0000, Size: 0x1000, Read: true, Write: true}},
			Egress: []string{"port-b"}},
	}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSourceValidation: a domain's requester IDs are trusted only from
// the ingresses it names: the same ID from elsewhere is forged.
func TestSourceValidation(t *testing.T) {
	a, err := Build(Config{Domains: []DomainConfig{
		{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Ranges: []RangeConfig{{Base: 0, Size: 1 << 30, Read: true, Write: true}}},
		{Name: "peer-a", Requesters: []string{"10:00.0-10:00.7"}, Ingress: []string{"port-a"}, Ranges: []RangeConfig{{Base: 1 << 32, Size: 1 << 30, Read: true, Write: true}}},
		{Name: "peer-b", Requesters: []string{"20:00.0-20:00.7"}, Ingress: []string{"port-b"}, Ranges: []RangeConfig{{Base: 2 << 32, Size: 1 << 30, Read: true, Write: true}}},
	}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	host := ntb.Egress{Kind: ntb.EgressHost}
	for _, tc := range []struct {
		req  string
		in   Ingress
		addr uint64
		rule Rule
	}{
		{"10:00.1", FromPortA, 1 << 32, Allowed},
		{"10:00.1", FromPortB, 1 << 32, SourceInvalid}, // A's peer's ID arriving on port B
		{"10:00.1", FromHost, 1 << 32, SourceInvalid},
		{"20:00.0", FromPortB, 2 << 32, Allowed},
		{"20:00.0", FromPortA, 2 << 32, SourceInvalid},
		{"00:00.0", FromPortA, 0, SourceInvalid}, // the local root complex's ID from outside
		{"00:00.0", FromHost, 0, Allowed},
		{"30:00.0", FromPortA, 0, NoDomain},
	} {
		if v := a.Check(id(tc.req), tc.in, tc.addr, 4, OpWrite, host); v.Rule != tc.rule {
			t.Errorf("%s from %s: %s, want %s", tc.req, tc.in, v.Rule, tc.rule)
		}
	}
	for _, tc := range []struct {
		ingress []string
		want    string
	}{
		{nil, "domains[0].ingress: say where this domain's requesters arrive from"},
		{[]string{"port-c"}, `domains[0].ingress[0]: "port-c" must be host, port-a or port-b`},
	} {
		_, err := Build(Config{Domains: []DomainConfig{{Requesters: []string{"00:00.0"}, Ingress: tc.ingress}}}, 4)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ingress %q: %v, want %q", tc.ingress, err, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	a := testACL(t)
	for _, tc := range []struct {
		name string
		req  string
		addr uint64
		size uint64
		op   Op
		e    ntb.Egress
		rule Rule
	}{
		{"in range", "00:00.0", 0x1000_0000, 4, OpWrite, portA, Allowed},
		{"last byte of a range", "00:00.0", 0x1FFF_FFFF, 1, OpRead, portA, Allowed},
		{"one past the range", "00:00.0", 0x2000_0000, 4, OpRead, portA, NoRange},
		{"straddles the end", "00:00.0", 0x1FFF_FFFC, 8, OpWrite, portA, NoRange},
		{"below every range", "00:00.0", 0x0FFF_FFFC, 4, OpRead, portA, NoRange},
		{"write to read-only", "00:00.0", 0x8000_0000, 4, OpWrite, portA, WriteDenied},
		{"read of read-only", "00:00.0", 0x8000_0FFC, 4, OpRead, portA, Allowed},
		{"read of write-only", "00:00.0", 0x9000_1000, 4, OpRead, portA, ReadDenied},
		{"atomic on read-write", "00:00.0", 0x1000_0000, 8, OpReadWrite, portA, Allowed},
		{"atomic on read-only", "00:00.0", 0x8000_0000, 8, OpReadWrite, portA, WriteDenied},
		{"atomic on write-only", "00:00.0", 0x9000_1000, 8, OpReadWrite, portA, ReadDenied},
		{"no op needs read", "00:00.0", 0x9000_1000, 4, 0, portA, ReadDenied},
		{"requester with no domain", "06:00.0", 0x1000_0000, 4, OpRead, portA, NoDomain},
		{"ID range, last function", "05:00.7", 0x1000_0000, 4, OpRead, portB, Allowed},
		{"egress not allowed", "05:00.0", 0x1000_0000, 4, OpRead, portA, EgressDenied},
		{"egress local not allowed", "05:00.1", 0x1000_0000, 4, OpRead, local, EgressDenied},
	} {
		v := a.Check(id(tc.req), FromHost, tc.addr, tc.size, tc.op, tc.e)
		if v.Rule != tc.rule {
			t.Errorf("%s: %s, want %s", tc.name, v.Rule, tc.rule)
		}
	}
	if a.DenyStatus != tlp.StatusUR {
		t.Error("default deny status is not UR")
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{DenyStatus: "SC"}, `deny_status: "SC" must be UR or CA`},
		{Config{Domains: []DomainConfig{{Requesters: []string{"zz"}}}}, "domains[0].requesters[0]"},
		{Config{Domains: []DomainConfig{{Requesters: []string{"05:00.3-05:00.1"}}}}, "runs backwards"},
		{Config{Domains: []DomainConfig{{Name: "a", Requesters: []string{"01:00.0"}, Ingress: []string{"host"}}, {Requesters: []string{"00:1f.7-01:00.0"}}}}, "domains[1].requesters[0]: 01:00.0 already belongs to domain a"},
		{Config{Domains: []DomainConfig{{Ranges: []RangeConfig{{Base: 0x800, Size: 0x1000, Read: true}}}}}, "domains[0].ranges[0]: base 0x800 and size 0x1000 must be non-zero multiples of 4 KiB"},
		{Config{Domains: []DomainConfig{{Ranges: []RangeConfig{{Base: 0x1000, Size: 0x1000}}}}}, "grants neither read nor write"},
		{Config{Domains: []DomainConfig{{Ranges: []RangeConfig{{Base: 0, Size: 0x2000, Read: true}, {Base: 0x1000, Size: 0x1000, Read: true}}}}}, "domains[0].ranges: 0x1000-0x1fff overlaps 0x0-0x1fff"},
		{Config{Domains: []DomainConfig{{Ranges: []RangeConfig{{Base: 0xFFFF_FFFF_FFFF_F000, Size: 0x2000, Read: true}}}}}, "wraps"},
		{Config{Domains: []DomainConfig{{Ingress: []string{"host"}, Egress: []string{"kernel:9"}}}}, "domains[0].egress[0]"},
		{Config{RuleSlots: 33}, "rule_slots: 33 must be 0 to 32"},
		{Config{RuleSlots: -1}, "rule_slots: -1"},
	} {
		_, err := Build(tc.c, 4)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.c, err, tc.want)
		}
	}
	a, err := Build(Config{DenyStatus: "CA"}, 4)
	if err != nil || a.DenyStatus != tlp.StatusCA {
		t.Errorf("deny_status CA: %v %v", a, err)
	}
}

// TestRuleSlots programs run-time rules on top of the configured ranges:
// a slot adds a range to one domain only, its rights add to a configured
// range's, and turning it off takes them away again.
func TestRuleSlots(t *testing.T) {
	c := Config{RuleSlots: 4, Domains: []DomainConfig{
		{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Ranges: []RangeConfig{{Base: 0x8000_0000, Size: 0x1000, Read: true}}},
		{Name: "peer", Requesters: []string{"05:00.0"}, Ingress: []string{"port-a"}},
	}}
	a, err := Build(c, 4)
	if err != nil {
		t.Fatal(err)
	}
	host, peer := id("00:00.0"), id("05:00.0")
	type probe struct {
		req  tlp.ID
		addr uint64
		size uint64
		op   Op
		rule Rule
	}
	check := func(step string, ps []probe) {
		t.Helper()
		for _, p := range ps {
			in := FromHost
			if p.req == peer {
				in = FromPortA // where the peer's domain may come from
			}
			if v := a.Check(p.req, in, p.addr, p.size, p.op, portA); v.Rule != p.rule {
				t.Errorf("%s: %s %#x+%d op=%d: %s, want %s", step, p.req, p.addr, p.size, p.op, v.Rule, p.rule)
			}
		}
	}
	check("no slot", []probe{{peer, 0x1_0000_0000, 4, OpWrite, NoRange}, {host, 0x8000_0000, 4, OpWrite, WriteDenied}})
	set := func(i int, r RuleSlot) {
		t.Helper()
		if err := a.SetRuleSlot(i, r); err != nil {
			t.Fatal(err)
		}
	}
	set(2, RuleSlot{Enabled: true, Write: true, Domain: 1, Base: 0x1_0000_0000, Pages: 2})
	check("peer may write two pages", []probe{
		{peer, 0x1_0000_0000, 4096, OpWrite, Allowed},
		{peer, 0x1_0000_1FFC, 4, OpWrite, Allowed},
		{peer, 0x1_0000_1FFC, 8, OpWrite, NoRange}, // runs past the slot
		{peer, 0x1_0000_2000, 4, OpWrite, NoRange},
		{peer, 0x0_FFFF_FFFC, 4, OpWrite, NoRange},
		{peer, 0x1_0000_0000, 4, OpRead, ReadDenied},
		{peer, 0x1_0000_0000, 8, OpReadWrite, ReadDenied}, // an atomic needs both rights
		{host, 0x1_0000_0000, 4, OpWrite, NoRange},        // another domain's slot
	})
	set(0, RuleSlot{Enabled: true, Write: true, Domain: 0, Base: 0x8000_0000, Pages: 1})
	check("host's read-only range made writable", []probe{{host, 0x8000_0000, 4, OpWrite, Allowed}, {host, 0x8000_0FFC, 4, OpRead, Allowed}})
	set(0, RuleSlot{Write: true, Domain: 0, Base: 0x8000_0000, Pages: 1})
	set(2, RuleSlot{})
	check("slots off", []probe{{peer, 0x1_0000_0000, 4, OpWrite, NoRange}, {host, 0x8000_0000, 4, OpWrite, WriteDenied}})
	set(3, RuleSlot{Enabled: true, Read: true, Domain: 1, Base: 0xFFFF_FFFF_FFFF_E000, Pages: 2})
	check("slot at the top of the address space", []probe{{peer, 0xFFFF_FFFF_FFFF_FFFC, 4, OpRead, Allowed}, {peer, 0, 4, OpRead, NoRange}})
	if a.RuleSlots() != 4 || a.RuleSlot(3).Pages != 2 || a.RuleSlot(9) != (RuleSlot{}) {
		t.Errorf("slots read back wrong: %d %+v", a.RuleSlots(), a.RuleSlot(3))
	}
	for _, bad := range []struct {
		i int
		r RuleSlot
	}{
		{4, RuleSlot{}}, {-1, RuleSlot{}}, {1, RuleSlot{Base: 0x800}},
		// Past 2^64: an 8-byte access at 2^64-4 would wrap to address 0.
		{3, RuleSlot{Enabled: true, Read: true, Domain: 1, Base: 0xFFFF_FFFF_FFFF_F000, Pages: 2}},
		// A domain the ACL does not have.
		{3, RuleSlot{Enabled: true, Read: true, Domain: 7, Base: 0x1000, Pages: 1}},
	} {
		if err := a.SetRuleSlot(bad.i, bad.r); err == nil {
			t.Errorf("SetRuleSlot(%d, %+v) accepted", bad.i, bad.r)
		}
	}
	if a.RuleSlot(3).Base != 0xFFFF_FFFF_FFFF_E000 {
		t.Errorf("refused commits changed slot 3: %+v", a.RuleSlot(3))
	}
	// Up to 2^64 exactly is no wrap.
	set(3, RuleSlot{Enabled: true, Read: true, Domain: 1, Base: 0xFFFF_FFFF_FFFF_F000, Pages: 1})
	if n := testing.AllocsPerRun(100, func() { _ = a.Check(peer, FromPortA, 0xFFFF_FFFF_FFFF_F000, 4, OpRead, portA) }); n != 0 {
		t.Errorf("Check with slots made %.1f allocs", n)
	}
}

func TestCheckAllocs(t *testing.T) {
	a := testACL(t)
	if n := testing.AllocsPerRun(100, func() { _ = a.Check(id("00:00.0"), FromHost, 0x1000_0000, 4, OpWrite, portA) }); n != 0 {
		t.Errorf("Check made %.1f allocs", n)
	}
}

// BenchmarkCheck64Ranges checks addresses spread over a domain of 64 ranges.
func BenchmarkCheck64Ranges(b *testing.B) {
	var rs []RangeConfig
	for i := 0; i < 64; i++ {
		rs = append(rs, RangeConfig{Base: uint64(i) << 24, Size: 1 << 23, Read: true, Write: i%2 == 0})
	}
	a, err := Build(Config{Domains: []DomainConfig{{Requesters: []string{"00:00.0-00:1f.7"}, Ingress: []string{"host"}, Ranges: rs}}}, 4)
	if err != nil {
		b.Fatal(err)
	}
	var addrs [256]uint64
	for i := range addrs {
		addrs[i] = uint64(i*37%64)<<24 | uint64(i*4096)
	}
	b.ReportAllocs()
	i, n := 0, 0
	for b.Loop() {
		if a.Check(tlp.ID(i&0xFF), FromHost, addrs[i&255], 64, OpRead, portA).Rule == Allowed {
			n++
		}
		i++
	}
	_ = n
}
