package manager

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"onic/pcie"
	"onic/pcie/acl"
	"onic/pcie/ntb"
	"onic/tlp"
)

// testConfig expresses SmartIO's mechanisms on an O-NIC whose BAR2 (16 GiB
// of direct windows) and BAR4 (a 512-entry LUT) sit where enumeration of
// the default topology put onic0: BAR0 0xc1100000, BAR2 0x40_0000_0000,
// BAR4 0x44_0000_0000.
func testConfig() Config {
	return Config{
		Translation: ntb.Config{
			Windows: []ntb.WindowConfig{
				{Name: "lent-gpu", BAR: 2, Offset: 0, Size: 4 << 30, Egress: "port-a", Translated: 0x50_0000_0000},
				{Name: "dma", BAR: 2, Offset: 4 << 30, Size: 1 << 30, Egress: "port-b", Translated: 0x8000_0000},
				{Name: "multicast", BAR: 2, Offset: 0x1_4000_0000, Size: 16 << 20, Egress: "port-a", Translated: 0x10_0000_0000,
					FailoverEgress: "port-b", FailoverTranslated: 0x20_0000_0000, Multicast: true},
				{Name: "multipath", BAR: 2, Offset: 0x1_4100_0000, Size: 16 << 20, Egress: "port-a", Translated: 0x30_0000_0000,
					FailoverEgress: "port-b", FailoverTranslated: 0x31_0000_0000},
				{Name: "kernel1", BAR: 2, Offset: 0x1_4200_0000, Size: 1 << 20, Egress: "kernel:1"},
				{Name: "parked", BAR: 2, Offset: 0x1_4300_0000, Size: 64 << 10, Egress: "port-a", Disabled: true},
			},
			LUT: ntb.LUTConfig{BAR: 4, Map: []ntb.LUTEntryConfig{
				{Index: 0, Egress: "port-b", Translated: 0x7000_0000},
				{Index: 511, Egress: "port-a", Translated: 0xD000_0000},
			}},
			RID: ntb.RIDConfig{ProxyBase: "10:00.0", Map: []string{"00:00.0", "05:00.0"}},
		},
		Access: acl.Config{Domains: []acl.DomainConfig{
			{Name: "host", Requesters: []string{"00:00.0", "00:02.0"}, Ingress: []string{"host"}, Ranges: []acl.RangeConfig{
				{Base: 0, Size: 1 << 20, Read: true, Write: true}, // local registers and kernel offsets
				{Base: 0x7000_0000, Size: 64 << 10, Read: true},
				{Base: 0x8000_0000, Size: 1 << 30, Read: true, Write: true},
				{Base: 0xD000_0000, Size: 4 << 10, Read: true, Write: true}, // only the first page of LUT entry 511
				{Base: 0x10_0000_0000, Size: 16 << 20, Read: true, Write: true},
				{Base: 0x20_0000_0000, Size: 16 << 20, Write: true}, // the multicast window's copies
				{Base: 0x30_0000_0000, Size: 16 << 20, Read: true, Write: true},
				{Base: 0x31_0000_0000, Size: 16 << 20, Read: true, Write: true},
				{Base: 0x50_0000_0000, Size: 4 << 30, Read: true, Write: true},
			}},
			{Name: "gpu", Requesters: []string{"05:00.0-05:00.1"}, Ingress: []string{"host"}, Egress: []string{"port-b"},
				Ranges: []acl.RangeConfig{{Base: 0x8000_0000, Size: 1 << 30, Read: true, Write: true}}},
			{Name: "remote", Requesters: []string{"20:00.0-20:00.7"}, Ingress: []string{"port-a", "port-b"}, Egress: []string{"host"},
				Ranges: []acl.RangeConfig{{Base: 0x1_0000_0000, Size: 16 << 30, Read: true, Write: true}}},
		}},
	}
}

func onic0(t testing.TB) (*pcie.Function, tlp.ID) {
	t.Helper()
	h, err := pcie.Build(pcie.DefaultTopology())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Enumerate(); err != nil {
		t.Fatal(err)
	}
	n := h.Find("onic0")
	return n.Funcs[0], n.ID(0)
}

func testManager(t testing.TB, mod func(*Config)) *Manager {
	t.Helper()
	f, self := onic0(t)
	c := testConfig()
	if mod != nil {
		mod(&c)
	}
	m, err := New(c, f, self)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	bar0 = 0xC110_0000
	bar2 = 0x40_0000_0000
	bar4 = 0x44_0000_0000
)

func req(k tlp.Kind, addr uint64, from string, dw uint16) *tlp.TLP {
	r, _ := tlp.ParseID(from)
	f, typ, _ := tlp.FmtType(k, addr >= 1<<32, 0)
	t := &tlp.TLP{Fmt: f, Type: typ, Length: dw, FirstBE: 0xF, Address: addr, RequesterID: r, Tag: 1}
	if dw > 1 {
		t.LastBE = 0xF
	}
	if k.HasData() {
		t.Data = make([]byte, int(dw)*4)
	}
	return t
}

func cplTo(id string) *tlp.TLP {
	r, _ := tlp.ParseID(id)
	return &tlp.TLP{Fmt: tlp.Fmt3DW, Type: 0xA, RequesterID: r, ByteCount: 4}
}

func TestOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		t       *tlp.TLP
		in      Ingress
		down    [2]bool
		want    string // action reason egress address requester [second address] or status
		wantDen acl.Rule
	}{
		{"device lending: host reads the lent GPU", req(tlp.MRd, bar2+0x1000, "00:00.0", 1), FromHost, [2]bool{}, "forward ok port-a 0x5000001000 10:00.0", 0},
		{"last DW of a window", req(tlp.MWr, bar2+4<<30-4, "00:00.0", 1), FromHost, [2]bool{}, "forward ok port-a 0x50fffffffc 10:00.0", 0},
		{"DMA window: the GPU writes remote memory", req(tlp.MWr, bar2+4<<30+0x40, "05:00.0", 16), FromHost, [2]bool{}, "forward ok port-b 0x80000040 10:00.1", 0},
		{"multicast write goes to both ports", req(tlp.MWr, bar2+0x1_4000_0040, "00:00.0", 1), FromHost, [2]bool{}, "forward ok port-a 0x1000000040 10:00.0 port-b 0x2000000040", 0},
		{"multicast read goes to one port", req(tlp.MRd, bar2+0x1_4000_0040, "00:00.0", 1), FromHost, [2]bool{}, "forward ok port-a 0x1000000040 10:00.0", 0},
		{"multicast write, port B down", req(tlp.MWr, bar2+0x1_4000_0040, "00:00.0", 1), FromHost, [2]bool{false, true}, "forward ok port-a 0x1000000040 10:00.0", 0},
		{"multipath, port A up", req(tlp.MRd, bar2+0x1_4100_0100, "00:00.0", 1), FromHost, [2]bool{}, "forward ok port-a 0x3000000100 10:00.0", 0},
		{"multipath, port A down: port B takes over", req(tlp.MRd, bar2+0x1_4100_0100, "00:00.0", 1), FromHost, [2]bool{true, false}, "forward ok port-b 0x3100000100 10:00.0", 0},
		{"multipath, both ports down", req(tlp.MRd, bar2+0x1_4100_0100, "00:00.0", 1), FromHost, [2]bool{true, true}, "complete port-down UR", 0},
		{"port down, no failover: read", req(tlp.MRd, bar2+0x1000, "00:00.0", 1), FromHost, [2]bool{true, false}, "complete port-down UR", 0},
		{"port down, no failover: write dropped", req(tlp.MWr, bar2+0x1000, "00:00.0", 1), FromHost, [2]bool{true, false}, "drop port-down", 0},
		{"kernel slot", req(tlp.MWr, bar2+0x1_4200_0040, "00:00.0", 1), FromHost, [2]bool{}, "forward ok kernel:1 0x40 00:00.0", 0},
		{"local registers", req(tlp.MRd, bar0+0x10, "00:00.0", 1), FromHost, [2]bool{}, "forward ok local 0x10 00:00.0", 0},
		{"disabled window: read completes UR", req(tlp.MRd, bar2+0x1_4300_0000, "00:00.0", 1), FromHost, [2]bool{}, "complete mapping-disabled UR", 0},
		{"disabled window: write dropped", req(tlp.MWr, bar2+0x1_4300_0000, "00:00.0", 1), FromHost, [2]bool{}, "drop mapping-disabled", 0},
		{"one past a window: miss", req(tlp.MRd, bar2+0x1_4301_0000, "00:00.0", 1), FromHost, [2]bool{}, "complete window-miss UR", 0},
		{"LUT entry 0", req(tlp.MRd, bar4+0x20, "00:00.0", 1), FromHost, [2]bool{}, "forward ok port-b 0x70000020 10:00.0", 0},
		{"LUT last entry, first page", req(tlp.MWr, bar4+511<<16+0xFFC, "00:00.0", 1), FromHost, [2]bool{}, "forward ok port-a 0xd0000ffc 10:00.0", 0},
		{"denied: LUT last DW, outside the domain's range", req(tlp.MWr, bar4+32<<20-4, "00:00.0", 1), FromHost, [2]bool{}, "drop denied", acl.NoRange},
		{"atomic into a read-only range", req(tlp.FetchAdd, bar4+0x20, "00:00.0", 1), FromHost, [2]bool{}, "complete denied UR", acl.WriteDenied},
		{"remote atomic into its range", req(tlp.CAS, 0x1_0000_0000, "20:00.1", 2), FromPortA, [2]bool{}, "forward ok host 0x100000000 03:00.0", 0}, // under the O-NIC's own ID
		{"LUT unmapped entry", req(tlp.MRd, bar4+7<<16, "00:00.0", 1), FromHost, [2]bool{}, "complete mapping-disabled UR", 0},
		{"not one of our BARs", req(tlp.MRd, 0xC000_0000, "00:00.0", 1), FromHost, [2]bool{}, "complete not-for-us UR", 0},
		{"denied: write to a read-only range", req(tlp.MWr, bar4+0x20, "00:00.0", 1), FromHost, [2]bool{}, "drop denied", acl.WriteDenied},
		{"denied: GPU through port A", req(tlp.MRd, bar2+0x1000, "05:00.0", 1), FromHost, [2]bool{}, "complete denied UR", acl.EgressDenied},
		{"denied: requester in no domain", req(tlp.MRd, bar2+0x1000, "06:00.0", 1), FromHost, [2]bool{}, "complete denied UR", acl.NoDomain},
		{"a 4 KB read inside the range", req(tlp.MRd, bar2+4<<30, "00:00.0", 1024), FromHost, [2]bool{}, "forward ok port-b 0x80000000 10:00.0", 0},
		{"no proxy ID for the requester", req(tlp.MRd, bar2+0x1000, "00:02.0", 1), FromHost, [2]bool{}, "complete no-proxy-id UR", 0},
		{"I/O request", &tlp.TLP{Fmt: tlp.Fmt3DW, Type: 2, Length: 1, FirstBE: 0xF, Address: 0x100}, FromHost, [2]bool{}, "complete unsupported UR", 0},
		{"config request to the O-NIC", &tlp.TLP{Fmt: tlp.Fmt3DW, Type: 4, Length: 1, FirstBE: 0xF}, FromHost, [2]bool{}, "forward ok local 0x0 00:00.0", 0},
		{"completion for the O-NIC with nothing outstanding", cplTo("03:00.0"), FromHost, [2]bool{}, "drop unexpected-completion", 0},
		{"completion for nobody", cplTo("07:00.0"), FromHost, [2]bool{}, "drop unexpected-completion", 0},
		{"completion from a port for a request never sent there", cplTo("10:00.1"), FromPortA, [2]bool{}, "drop unexpected-completion", 0},
		{"completion from a port for an unknown proxy", cplTo("10:00.5"), FromPortB, [2]bool{}, "drop unexpected-completion", 0},
		{"remote DMA into host memory, as the O-NIC's own", req(tlp.MWr, 0x1_0000_1000, "20:00.1", 16), FromPortB, [2]bool{}, "forward ok host 0x100001000 03:00.0", 0},
		{"remote DMA outside its range", req(tlp.MWr, 0x2000, "20:00.1", 1), FromPortA, [2]bool{}, "drop denied", acl.NoRange},
		{"remote read outside its range", req(tlp.MRd, 0x2000, "20:00.1", 1), FromPortA, [2]bool{}, "complete denied UR", acl.NoRange},
		{"remote write across 4 KiB", req(tlp.MWr, 0x1_0000_0FFC, "20:00.1", 2), FromPortA, [2]bool{}, "drop malformed", 0},
		{"remote read across 4 KiB", req(tlp.MRd, 0x1_0000_1F00, "20:00.1", 128), FromPortB, [2]bool{}, "drop malformed", 0},
		{"configuration read from a port", &tlp.TLP{Fmt: tlp.Fmt3DW, Type: 0x04, Length: 1, FirstBE: 0xF, RequesterID: 0x2001, Tag: 3},
			FromPortA, [2]bool{}, "complete unsupported UR", 0},
	} {
		m := testManager(t, nil)
		m.PortDown = tc.down
		if err := tc.t.Validate(); err != nil && !strings.Contains(tc.name, "I/O") && !strings.Contains(tc.name, "4 KiB") {
			t.Fatalf("%s: test TLP is malformed: %v", tc.name, err)
		}
		var o Outcome
		m.Process(tc.t, tc.in, &o)
		got := o.Action.String() + " " + o.Reason.String()
		switch o.Action {
		case Forward:
			got += " " + o.Egress.String() + " 0x" + hex(o.Address) + " " + o.Requester.String()
			if o.Second.Kind != ntb.EgressNone {
				got += " " + o.Second.String() + " 0x" + hex(o.SecondAddress)
			}
		case Complete:
			got += " " + o.Status.String()
		}
		if got != tc.want || o.Deny != tc.wantDen {
			t.Errorf("%s:\n got %s (deny %s)\nwant %s (deny %s)", tc.name, got, o.Deny, tc.want, tc.wantDen)
		}
	}
}

// TestBusMasterOff: with Bus Master Enable clear the O-NIC issues no
// request upstream: a peer's write is dropped and its read completed
// with UR, both counted; its completions still reach the host, and the
// host's own requests still go out of the ports (the O-NIC completes
// nothing for them upstream).
func TestBusMasterOff(t *testing.T) {
	m := testManager(t, nil)
	m.BusMasterOff = true
	var o Outcome
	for _, tc := range []struct {
		t    *tlp.TLP
		in   Ingress
		want string
	}{
		{req(tlp.MWr, 0x1_0000_0000, "20:00.1", 1), FromPortA, "drop bus-master-disabled"},
		{req(tlp.MRd, 0x1_0000_0000, "20:00.1", 1), FromPortB, "complete bus-master-disabled"},
		{req(tlp.MWr, bar2+0x40, "00:00.0", 1), FromHost, "forward ok"},
	} {
		m.Process(tc.t, tc.in, &o)
		if got := o.Action.String() + " " + o.Reason.String(); got != tc.want {
			t.Errorf("%s from %v: %s, want %s", tc.t.Kind(), tc.in, got, tc.want)
		}
	}
	if m.Count(BusMasterDisabled) != 2 {
		t.Errorf("bus-master-disabled counted %d times, want 2", m.Count(BusMasterDisabled))
	}
}

// TestMulticastCopyChecked: a multicast window's copy is a write of its
// own, checked for its own address and port; a copy the domain may not
// make is not made (the original goes on) and counted as relay-denied.
// An AtomicOp through the window is never copied.
func TestMulticastCopyChecked(t *testing.T) {
	w := func() *tlp.TLP { return req(tlp.MWr, bar2+0x1_4000_0040, "00:00.0", 4) }
	for _, tc := range []struct {
		name   string
		mod    func(*Config)
		t      *tlp.TLP
		second ntb.EgressKind
		denied uint64
	}{
		{"copy allowed", nil, w(), ntb.EgressPortB, 0},
		{"no range at the copy's address", func(c *Config) {
			rs := c.Access.Domains[0].Ranges
			c.Access.Domains[0].Ranges = append(rs[:5:5], rs[6:]...)
		}, w(), ntb.EgressNone, 1},
		{"copy's range is read-only", func(c *Config) { c.Access.Domains[0].Ranges[5].Read, c.Access.Domains[0].Ranges[5].Write = true, false },
			w(), ntb.EgressNone, 1},
		{"domain may not use port B", func(c *Config) { c.Access.Domains[0].Egress = []string{"port-a", "local", "kernel:1"} },
			w(), ntb.EgressNone, 1},
		{"atomic is not copied", nil, req(tlp.FetchAdd, bar2+0x1_4000_0040, "00:00.0", 1), ntb.EgressNone, 0},
	} {
		m := testManager(t, tc.mod)
		var o Outcome
		m.Process(tc.t, FromHost, &o)
		if o.Action != Forward || o.Egress.Kind != ntb.EgressPortA || o.Second.Kind != tc.second || m.Count(RelayDenied) != tc.denied {
			t.Errorf("%s: %s %s to %s, copy to %s, %d refused copies; want copy to %s, %d refused", tc.name, o.Action, o.Reason,
				o.Egress, o.Second, m.Count(RelayDenied), ntb.Egress{Kind: tc.second}, tc.denied)
		}
	}
}

func hex(v uint64) string { return strconv.FormatUint(v, 16) }

func TestDenyStatusCAAndEvents(t *testing.T) {
	m := testManager(t, func(c *Config) { c.Access.DenyStatus = "CA" })
	var o Outcome
	m.Process(req(tlp.MRd, bar2+0x1000, "06:00.0", 1), FromHost, &o)
	if o.Action != Complete || o.Status != tlp.StatusCA || o.Deny != acl.NoDomain {
		t.Fatalf("deny_status CA: %+v", o)
	}
	m.Process(req(tlp.MWr, bar4+0x20, "00:00.0", 1), FromHost, &o)
	ev := m.Events()
	if len(ev) != 2 || ev[0].Requester != tlp.NewID(6, 0, 0) || ev[0].Address != 0x50_0000_1000 || ev[0].Rule != acl.NoDomain ||
		ev[1].Rule != acl.WriteDenied || ev[1].Address != 0x7000_0020 || ev[1].Ingress != FromHost {
		t.Fatalf("events %+v", ev)
	}
	if m.Count(Denied) != 2 {
		t.Fatalf("denied counter %d", m.Count(Denied))
	}
	// The ring keeps the last EventRing denials.
	for i := 0; i < EventRing+5; i++ {
		m.Process(req(tlp.MRd, bar2, "06:00.1", 1), FromHost, &o)
	}
	if ev := m.Events(); len(ev) != EventRing || ev[len(ev)-1].Requester != tlp.NewID(6, 0, 1) {
		t.Fatalf("ring: %d events", len(ev))
	}
}

func TestConfigErrors(t *testing.T) {
	f, self := onic0(t)
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Translation.Windows[1].Offset = 0x1000 }, "translation.windows[1].offset: 0x1000 is not aligned"},
		{func(c *Config) { c.Translation.Windows[2].Offset = 0x1_4100_0000 }, "translation.windows[3]: BAR2 0x141000000-0x141ffffff overlaps windows[2] (multicast)"},
		{func(c *Config) { c.Translation.LUT.Map[0].Index = 512 }, "translation.lut.map[0].index: 512 is out of range"},
		{func(c *Config) { c.Translation.Windows[0].Egress = "port-z" }, `translation.windows[0].egress: "port-z"`},
		{func(c *Config) { c.Access.Domains[1].Egress = []string{"moon"} }, "access.domains[1].egress[0]"},
		{func(c *Config) { c.RegisterBAR = 1 }, "register_bar: 1 is not a memory BAR"},
	} {
		c := testConfig()
		tc.mod(&c)
		_, err := New(c, f, self)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// TestBARsMove: after software moves a BAR, SyncBARs makes the manager
// decode the new address.
func TestBARsMove(t *testing.T) {
	m := testManager(t, nil)
	m.fn.Space.Write(0x18, 4, 0)
	m.fn.Space.Write(0x1C, 4, 0x60)
	m.SyncBARs()
	var o Outcome
	m.Process(req(tlp.MRd, 0x60_0000_1000, "00:00.0", 1), FromHost, &o)
	if o.Action != Forward || o.Address != 0x50_0000_1000 {
		t.Fatalf("after the move: %+v", o)
	}
}

func TestProcessAllocs(t *testing.T) {
	m := testManager(t, nil)
	w := req(tlp.MWr, bar2+0x1_4000_0040, "00:00.0", 16)
	d := req(tlp.MRd, bar2+0x1000, "06:00.0", 1)
	var o Outcome
	if a := testing.AllocsPerRun(200, func() {
		m.Process(w, FromHost, &o)
		m.Process(d, FromHost, &o)
	}); a != 0 {
		t.Errorf("Process made %.1f allocs", a)
	}
}

// FuzzProcess: any TLP, from any ingress, in any port state, gets exactly
// one outcome with a valid action and reason (a non-posted request is
// answered or, malformed, discarded; a port's may wait for a tag), and
// each TLP taken is counted once.
func FuzzProcess(f *testing.F) {
	f.Add([]byte{0x40, 0, 0, 1, 0, 0, 1, 0xF, 0, 0, 0x10, 0, 0x40, 0, 0, 0}, uint8(0), uint8(0))
	f.Add([]byte{0x60, 0, 0, 1, 0, 0, 1, 0xF, 0, 0, 0, 0x40, 0, 0, 0x10, 0, 1, 2, 3, 4}, uint8(0), uint8(1))
	f.Add([]byte{0x0A, 0, 0, 0, 0, 0, 0, 4, 0x10, 1, 0, 0}, uint8(1), uint8(0))
	m := testManager(f, nil)
	counted := func() uint64 {
		var sum uint64
		for _, r := range Reasons() {
			if r != RelayDenied { // counts copies not made, not TLPs
				sum += m.Count(r)
			}
		}
		return sum
	}
	f.Fuzz(func(t *testing.T, b []byte, in, down uint8) {
		var x tlp.TLP
		if x.Decode(b) != nil {
			return
		}
		m.PortDown = [2]bool{down&1 != 0, down&2 != 0}
		var o Outcome
		before := counted()
		m.Process(&x, Ingress(in%3), &o)
		// Each TLP counted once, under one reason, except a request that
		// must wait for a tag: not taken, so not counted (Wait).
		want := uint64(1)
		if o.Action == Wait {
			if !x.Kind().IsNonPosted() || Ingress(in%3) == FromHost {
				t.Fatalf("%s from %d waits: only a port's non-posted request may", x.String(), in%3)
			}
			want = 0
		}
		if n := counted() - before; n != want {
			t.Fatalf("%s from %d (ports down %v) counted %d times: %+v", x.String(), in%3, m.PortDown, n, o)
		}
		switch o.Action {
		case Forward:
			if o.Reason != OK || o.Egress.Kind == ntb.EgressNone {
				t.Fatalf("forward without egress: %+v", o)
			}
		case Complete:
			if !x.Kind().IsNonPosted() || o.Status == tlp.StatusSC || o.Reason == OK {
				t.Fatalf("completion for %s: %+v", x.Kind(), o)
			}
		case Wait: // (above)
		case Drop:
			// A non-posted request is answered, unless it is malformed:
			// a malformed TLP is discarded with no completion (PCIe Base
			// §2.3; the requester's completion timeout reports it).
			if x.Kind().IsNonPosted() && o.Reason != Malformed || o.Reason == OK {
				t.Fatalf("dropped %s: %+v", x.Kind(), o)
			}
		default:
			t.Fatalf("no outcome: %+v", o)
		}
	})
}

// BenchmarkProcessMWr is the full check and translate of one TLP: a 64-byte
// write through a direct window, with the security check and requester-ID
// translation.
func BenchmarkProcessMWr(b *testing.B) {
	m := testManager(b, nil)
	w := req(tlp.MWr, bar2+4<<30+0x40, "05:00.0", 16)
	var o Outcome
	b.ReportAllocs()
	for b.Loop() {
		m.Process(w, FromHost, &o)
	}
}

// BenchmarkProcessLUTRead: a read through the LUT window.
func BenchmarkProcessLUTRead(b *testing.B) {
	m := testManager(b, nil)
	r := req(tlp.MRd, bar4+32<<20-64, "00:00.0", 16)
	var o Outcome
	b.ReportAllocs()
	for b.Loop() {
		m.Process(r, FromHost, &o)
	}
}

// cplFor is the successful completion of read r that the host sends
// the O-NIC (requester self, the O-NIC's tag), carrying n bytes of the
// byteCount still owed, from lower address la.
func cplFor(self tlp.ID, tag uint16, byteCount, n int, la uint8) *tlp.TLP {
	c := &tlp.TLP{RequesterID: self, Tag: tag, ByteCount: uint16(byteCount & 0xFFF), LowerAddress: la}
	c.Fmt, c.Type, _ = tlp.FmtType(tlp.CplD, false, 0)
	c.Length = uint16((n + int(la&3) + 3) / 4)
	c.Data = make([]byte, 4*int(c.Length))
	return c
}

// TestCompletionsReturnToTheirPort: a peer's read from a port goes to the
// host as the O-NIC's own request (its requester ID, a tag of its own);
// the host's completion, routed to the O-NIC by that ID, goes back out of
// the port the read came in on with the peer's requester ID and tag, and
// frees the tag once the last of the read's bytes has come. Completions
// that match no outstanding request — an unknown tag, a Byte Count other
// than what is owed, a tag already answered, one addressed to the peer's
// ID itself — are Unexpected Completions, dropped and counted.
func TestCompletionsReturnToTheirPort(t *testing.T) {
	self := tlp.NewID(3, 0, 0)
	peer := tlp.NewID(0x20, 0, 3)
	read := func(dw uint16, tag uint16) *tlp.TLP {
		r := req(tlp.MRd, 0x1_0000_1000, "20:00.3", dw)
		r.Tag = tag
		return r
	}
	type step struct {
		t    *tlp.TLP
		in   Ingress
		want string // action reason egress requester tag [freed]
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a read and its one completion", []step{
			{read(1, 0x37), FromPortB, "forward ok host 03:00.0 0"},
			{cplFor(self, 0, 4, 4, 0), FromHost, "forward ok port-b 20:00.3 55 freed"},
			{cplFor(self, 0, 4, 4, 0), FromHost, "drop unexpected-completion"},
		}},
		{"a 512-byte read completed in two parts", []step{
			{read(128, 9), FromPortA, "forward ok host 03:00.0 0"},
			{cplFor(self, 0, 512, 256, 0), FromHost, "forward ok port-a 20:00.3 9"},
			{cplFor(self, 0, 512, 256, 0), FromHost, "drop unexpected-completion"}, // 256 are owed now
			{cplFor(self, 0, 256, 256, 0), FromHost, "forward ok port-a 20:00.3 9 freed"},
		}},
		{"an error status ends the request", []step{
			{read(4, 2), FromPortA, "forward ok host 03:00.0 0"},
			{&tlp.TLP{Fmt: tlp.Fmt3DW, Type: 0xA, RequesterID: self, Status: tlp.StatusUR, ByteCount: 16}, FromHost, "forward ok port-a 20:00.3 2 freed"},
		}},
		{"tags are not reused while outstanding", []step{
			{read(1, 1), FromPortA, "forward ok host 03:00.0 0"},
			{read(1, 1), FromPortB, "forward ok host 03:00.0 1"},
			{cplFor(self, 1, 4, 4, 0), FromHost, "forward ok port-b 20:00.3 1 freed"},
			{cplFor(self, 0, 4, 4, 0), FromHost, "forward ok port-a 20:00.3 1 freed"},
		}},
		{"unknown tag, wrong byte count, the peer's own ID", []step{
			{read(1, 5), FromPortA, "forward ok host 03:00.0 0"},
			{cplFor(self, 7, 4, 4, 0), FromHost, "drop unexpected-completion"},
			{cplFor(self, 0, 8, 8, 0), FromHost, "drop unexpected-completion"},
			{cplFor(peer, 0, 4, 4, 0), FromHost, "drop unexpected-completion"},
			{cplFor(self, 0, 4, 4, 0), FromHost, "forward ok port-a 20:00.3 5 freed"},
		}},
		{"a posted write teaches nothing", []step{
			{req(tlp.MWr, 0x1_0000_1000, "20:00.4", 1), FromPortA, "forward ok host 03:00.0 1"},
			{cplFor(self, 0, 4, 4, 0), FromHost, "drop unexpected-completion"},
		}},
	} {
		m := testManager(t, nil)
		for i, st := range tc.steps {
			var o Outcome
			m.Process(st.t, st.in, &o)
			got := fmt.Sprintf("%s %s", o.Action, o.Reason)
			if o.Action == Forward {
				got += fmt.Sprintf(" %s %s %d", o.Egress, o.Requester, o.Tag)
				if o.Freed {
					got += " freed"
				}
			}
			if got != st.want {
				t.Fatalf("%s, step %d: got %q, want %q", tc.name, i, got, st.want)
			}
		}
	}
}

// TestPortCompletionsMatchTheirRequest: a host's read leaves by a port
// under its proxy ID and a tag of that port's table (Issue); only a
// completion arriving on that port, for that tag and proxy ID, reaches
// the host, with the local requester and the host's own tag — one on the
// other port (a peer answering a request sent to another: forged), for a
// free tag or another proxy ID is unexpected. A link that goes down
// frees its port's tags.
func TestPortCompletionsMatchTheirRequest(t *testing.T) {
	m := testManager(t, nil)
	proxy := tlp.NewID(0x10, 0, 1)
	cpl := func(tag uint16, req tlp.ID) *tlp.TLP { return cplFor(req, tag, 4, 4, 0) }
	// The GPU (05:00.0) reads through the DMA window, out of port B.
	rd := req(tlp.MRd, bar2+4<<30+0x40, "05:00.0", 1)
	rd.Tag = 0x2A5
	var o Outcome
	m.Process(rd, FromHost, &o)
	if o.Action != Forward || o.Egress.Kind != ntb.EgressPortB || o.Requester != proxy {
		t.Fatalf("the read: %+v", o)
	}
	out := *rd
	o.Apply(&out)
	if !m.Issue(&out, 1) || out.Tag != 0 {
		t.Fatalf("Issue: tag %d", out.Tag)
	}
	for _, tc := range []struct {
		name string
		c    *tlp.TLP
		in   Ingress
		want string
	}{
		{"on the other port", cpl(0, proxy), FromPortA, "drop unexpected-completion"},
		{"for a free tag", cpl(1, proxy), FromPortB, "drop unexpected-completion"},
		{"for another proxy ID", cpl(0, tlp.NewID(0x10, 0, 0)), FromPortB, "drop unexpected-completion"},
		{"the answer", cpl(0, proxy), FromPortB, "forward ok host 05:00.0 677 freed"},
		{"the answer again", cpl(0, proxy), FromPortB, "drop unexpected-completion"},
	} {
		m.Process(tc.c, tc.in, &o)
		got := fmt.Sprintf("%s %s", o.Action, o.Reason)
		if o.Action == Forward {
			got += fmt.Sprintf(" %s %s %d", o.Egress, o.Requester, o.Tag)
			if o.Freed {
				got += " freed"
			}
		}
		if got != tc.want {
			t.Fatalf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	// Every tag out, then the link drops: the tags are free again.
	for i := range Tags {
		x := out
		if !m.Issue(&x, 1) {
			t.Fatalf("Issue %d failed", i)
		}
	}
	if x := out; m.Issue(&x, 1) {
		t.Fatal("Issue with every tag outstanding succeeded")
	}
	if x := out; !m.Issue(&x, 0) {
		t.Fatal("port A's tags are its own, but Issue failed there")
	}
	m.PortLinkDown(1)
	if x := out; !m.Issue(&x, 1) {
		t.Fatal("Issue after the link went down failed")
	}
}

// TestTagsRunOut: with every tag outstanding a peer's read waits
// (nothing counted) while its posted writes still reach the host, and the
// read gets the tag the first completion frees.
func TestTagsRunOut(t *testing.T) {
	m := testManager(t, nil)
	self := tlp.NewID(3, 0, 0)
	var o Outcome
	rd := req(tlp.MRd, 0x1_0000_1000, "20:00.3", 1)
	for i := range Tags {
		m.Process(rd, FromPortA, &o)
		if o.Action != Forward || o.Tag != uint16(i) {
			t.Fatalf("read %d: %+v", i, o)
		}
	}
	before := m.Count(OK)
	m.Process(rd, FromPortA, &o)
	if o.Action != Wait || m.Count(OK) != before || m.Outstanding() != Tags {
		t.Fatalf("read with no tag free: %+v (outstanding %d)", o, m.Outstanding())
	}
	m.Process(req(tlp.MWr, 0x1_0000_1000, "20:00.3", 4), FromPortB, &o)
	if o.Action != Forward || o.Egress.Kind != ntb.EgressHost {
		t.Fatalf("a posted write behind a read waiting for a tag: %+v", o)
	}
	m.Process(cplFor(self, 77, 4, 4, 0), FromHost, &o)
	if !o.Freed {
		t.Fatalf("completion: %+v", o)
	}
	m.Process(rd, FromPortA, &o)
	if o.Action != Forward || o.Tag != 77 {
		t.Fatalf("the waiting read, offered again: %+v", o)
	}
}

// TestRelay: a posted write from port A into a relay range goes to the
// host and, as a copy, out of port B if the requester may use port B;
// reads, other ports and other ranges are not relayed.
func TestRelay(t *testing.T) {
	relayed := func(c *Config) {
		c.Relay = []RelayConfig{{From: "port-a", Base: 0x1_0000_0000, Size: 1 << 20}}
		c.Access.Domains[2].Egress = []string{"host", "port-b"}
	}
	for _, tc := range []struct {
		name   string
		mod    func(*Config)
		t      *tlp.TLP
		in     Ingress
		second ntb.EgressKind
	}{
		{"write in range", relayed, req(tlp.MWr, 0x1_0000_1000, "20:00.1", 4), FromPortA, ntb.EgressPortB},
		{"write from the other port", relayed, req(tlp.MWr, 0x1_0000_1000, "20:00.1", 4), FromPortB, ntb.EgressNone},
		{"write past the range", relayed, req(tlp.MWr, 0x1_0010_0000, "20:00.1", 4), FromPortA, ntb.EgressNone},
		{"read in range", relayed, req(tlp.MRd, 0x1_0000_1000, "20:00.1", 4), FromPortA, ntb.EgressNone},
		{"requester may not use port B", func(c *Config) {
			relayed(c)
			c.Access.Domains[2].Egress = []string{"host"}
		}, req(tlp.MWr, 0x1_0000_1000, "20:00.1", 4), FromPortA, ntb.EgressNone},
	} {
		m := testManager(t, tc.mod)
		var o Outcome
		m.Process(tc.t, tc.in, &o)
		if o.Action != Forward || o.Egress.Kind != ntb.EgressHost || o.Second.Kind != tc.second {
			t.Errorf("%s: %+v", tc.name, o)
		}
		if tc.second != ntb.EgressNone && o.SecondAddress != tc.t.Address {
			t.Errorf("%s: copy to %#x, want the same address", tc.name, o.SecondAddress)
		}
		if strings.HasPrefix(tc.name, "requester") && m.Count(RelayDenied) != 1 {
			t.Errorf("%s: relay-denied count %d", tc.name, m.Count(RelayDenied))
		}
	}
	f, self := onic0(t)
	c := testConfig()
	c.Relay = []RelayConfig{{From: "port-c", Size: 1}}
	if _, err := New(c, f, self); err == nil || !strings.Contains(err.Error(), `relay[0].from: "port-c"`) {
		t.Errorf("bad relay port: %v", err)
	}
}

// TestKernelIn: posted writes from a port into a kernel_in range go to its
// slot at their offset in the range, if the security check lets the
// requester reach that slot; everything else goes to the host as before.
func TestKernelIn(t *testing.T) {
	steered := func(c *Config) {
		c.KernelIn = []KernelInConfig{{From: "port-a", Base: 0x2_0000_0000, Size: 1 << 20, Slot: 2},
			{From: "port-b", Base: 0x2_0000_0000, Size: 1 << 20, Slot: 2}}
		c.Access.Domains[2].Egress = []string{"host", "kernel:2"}
	}
	for _, tc := range []struct {
		name   string
		mod    func(*Config)
		t      *tlp.TLP
		in     Ingress
		action Action
		egress ntb.Egress
		addr   uint64
	}{
		{"write from port A", steered, req(tlp.MWr, 0x2_0000_1000, "20:00.1", 4), FromPortA, Forward, ntb.Egress{Kind: ntb.EgressKernel, Slot: 2}, 0x1000},
		{"write from port B", steered, req(tlp.MWr, 0x2_0000_1040, "20:00.1", 4), FromPortB, Forward, ntb.Egress{Kind: ntb.EgressKernel, Slot: 2}, 0x1040},
		{"write below the range", steered, req(tlp.MWr, 0x1_FFFF_F000, "20:00.1", 4), FromPortA, Forward, ntb.Egress{Kind: ntb.EgressHost}, 0x1_FFFF_F000},
		{"write past the range", steered, req(tlp.MWr, 0x2_0010_0000, "20:00.1", 4), FromPortA, Forward, ntb.Egress{Kind: ntb.EgressHost}, 0x2_0010_0000},
		{"read in range goes to the host", steered, req(tlp.MRd, 0x2_0000_1000, "20:00.1", 4), FromPortA, Forward, ntb.Egress{Kind: ntb.EgressHost}, 0x2_0000_1000},
		{"requester may not reach the slot", func(c *Config) {
			steered(c)
			c.Access.Domains[2].Egress = []string{"host"}
		}, req(tlp.MWr, 0x2_0000_1000, "20:00.1", 4), FromPortA, Drop, ntb.Egress{}, 0},
	} {
		m := testManager(t, tc.mod)
		var o Outcome
		m.Process(tc.t, tc.in, &o)
		if o.Action != tc.action || (tc.action == Forward && (o.Egress != tc.egress || o.Address != tc.addr)) {
			t.Errorf("%s: %+v", tc.name, o)
		}
		if tc.action == Drop && o.Reason != Denied {
			t.Errorf("%s: reason %v, want denied", tc.name, o.Reason)
		}
	}
	f, self := onic0(t)
	for _, tc := range []struct {
		k    KernelInConfig
		want string
	}{
		{KernelInConfig{From: "host", Size: 1}, `kernel_in[1].from: "host" must be port-a or port-b`},
		{KernelInConfig{From: "port-a", Base: 1 << 40}, "kernel_in[1].size: 0x0 at 0x10000000000 is empty"},
		{KernelInConfig{From: "port-a", Size: 1, Slot: 4}, "kernel_in[1].slot: 4 is not a kernel slot (0 to 3)"},
		{KernelInConfig{From: "port-a", Base: 0x2_000F_0000, Size: 1 << 20}, "kernel_in[1]: overlaps kernel_in[0]"},
	} {
		c := testConfig()
		c.KernelIn = []KernelInConfig{{From: "port-a", Base: 0x2_0000_0000, Size: 1 << 20}, tc.k}
		if _, err := New(c, f, self); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// TestHoldable: for a TLP failed because its port is down, Holdable says
// whether it would have gone out had the port been up (access check and
// proxy ID), without counting a denial; a forwarded TLP clears it.
func TestHoldable(t *testing.T) {
	m := testManager(t, nil)
	m.PortDown = [2]bool{true, true}
	var o Outcome
	// The host to its lent GPU's window (allowed) and past the first page
	// of LUT entry 511 (outside its range).
	for _, c := range []struct {
		addr uint64
		want bool
	}{{bar2 + 0x100, true}, {bar4 + 511<<16 + 8<<10, false}} {
		m.Process(req(tlp.MWr, c.addr, "00:00.0", 1), FromHost, &o)
		if o.Reason != PortDown || o.Holdable != c.want {
			t.Errorf("%#x: reason %v holdable %v, want port-down %v", c.addr, o.Reason, o.Holdable, c.want)
		}
	}
	if n := m.Count(PortDown); n != 2 {
		t.Errorf("port-down counted %d times, want 2", n)
	}
	for r := range acl.NumRules {
		if d := m.Denials(acl.Rule(r)); d != 0 {
			t.Errorf("a denial was counted (%v: %d): the check for holding is not one", acl.Rule(r), d)
		}
	}
	m.PortDown = [2]bool{}
	m.Process(req(tlp.MWr, bar2+0x100, "00:00.0", 1), FromHost, &o)
	if o.Action != Forward || o.Holdable {
		t.Errorf("forwarded: %+v", o)
	}
}

// TestMemorySpaceEnable: with the Command register's Memory Space Enable
// cleared the O-NIC decodes none of its BARs (PCIe Base §7.5.1.1.1): a
// register read and a window write are not for it (UR for the read, the
// write dropped); set again, they are.
func TestMemorySpaceEnable(t *testing.T) {
	m := testManager(t, nil)
	cmd := m.fn.Space.Read16(0x04)
	var o Outcome
	for _, tc := range []struct {
		cmd  uint16
		want [2]string
	}{
		{cmd &^ 2, [2]string{"complete not-for-us", "drop not-for-us"}},
		{cmd | 2, [2]string{"forward ok", "forward ok"}},
	} {
		m.fn.Space.Write(0x04, 2, uint32(tc.cmd))
		m.SyncBARs()
		for i, x := range []*tlp.TLP{req(tlp.MRd, bar0, "00:00.0", 1), req(tlp.MWr, bar2+0x40, "00:00.0", 1)} {
			m.Process(x, FromHost, &o)
			if got := fmt.Sprintf("%s %s", o.Action, o.Reason); got != tc.want[i] {
				t.Errorf("command %#04x, %v: %s, want %s", tc.cmd, x, got, tc.want[i])
			}
		}
	}
}

// TestCountsPerIngress: the manager counts each ingress's TLPs apart, as
// the card does (its host pipeline's COUNT_* registers, its port
// pipelines' port_in_count_*): the COUNT_* registers read the host's
// only, Count adds every ingress, and a register whose count passed
// 2^32-1 reads 0xFFFFFFFF, as the RTL's saturating counters do.
func TestCountsPerIngress(t *testing.T) {
	m := testManager(t, nil)
	regs := NewRegs(m, 512)
	var o Outcome
	m.Process(req(tlp.MWr, 0x1_0000_1000, "20:00.3", 4), FromPortA, &o)
	m.Process(req(tlp.MWr, 0x1_0000_2000, "20:00.3", 4), FromPortB, &o)
	m.Process(req(tlp.MWr, 0x1_0000_3000, "20:00.3", 4), FromPortB, &o)
	if o.Action != Forward {
		t.Fatalf("a peer's write to the host: %+v", o)
	}
	okReg := RegCount0 + 4*uint32(OK)
	if m.CountFrom(FromPortA, OK) != 1 || m.CountFrom(FromPortB, OK) != 2 || m.CountFrom(FromHost, OK) != 0 || m.Count(OK) != 3 {
		t.Fatalf("counts: host %d, A %d, B %d, all %d", m.CountFrom(FromHost, OK), m.CountFrom(FromPortA, OK), m.CountFrom(FromPortB, OK), m.Count(OK))
	}
	if v := regs.Read(okReg); v != 0 {
		t.Fatalf("COUNT_OK reads %d after three peers' writes and no host TLP", v)
	}
	m.Process(req(tlp.MWr, 0x40_0000_0000, "00:00.0", 4), FromHost, &o)
	if v := regs.Read(okReg); v != 1 || o.Action != Forward {
		t.Fatalf("COUNT_OK reads %d after one host write (%+v)", v, o)
	}
	m.counts[FromHost][OK] = 1<<32 + 5
	if v := regs.Read(okReg); v != 0xFFFFFFFF {
		t.Fatalf("COUNT_OK at 2^32+5 reads %#x", v)
	}
	if m.CountFrom(Ingress(7), OK) != 0 || m.DenialsFrom(Ingress(7), acl.NoRange) != 0 {
		t.Fatal("an ingress that does not exist has counts")
	}
}
