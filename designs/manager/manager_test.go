package manager

import (
	"strings"
	"testing"

	"onic/hdlgen/sim"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

func defaultBARs(t testing.TB) [6]uint64 {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, pcie.DefaultONICWindowBytes)
	if err != nil {
		t.Fatal(err)
	}
	return f.MemorySizes()
}

// oneWindow is a manager with one window to port A and a LUT, so the
// latency test passes through every stage the tables use.
func oneWindow() pmgr.Config {
	return pmgr.Config{Translation: ntb.Config{
		Windows: []ntb.WindowConfig{{Name: "w", BAR: 2, Size: 1 << 20, Egress: "port-a", Translated: 1 << 32}},
		LUT:     ntb.LUTConfig{BAR: 4, Entries: 4, Map: []ntb.LUTEntryConfig{{Index: 1, Egress: "port-b", Translated: 0x10_0000}}},
		RID:     ntb.RIDConfig{ProxyBase: "10:00.0", Map: []string{"00:00.0"}},
	}, Access: acl.Config{Domains: []acl.DomainConfig{{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"},
		Ranges: []acl.RangeConfig{{Base: 1 << 32, Size: 1 << 20, Read: true, Write: true}}}}}}
}

// TestLatency: a TLP offered with every output ready leaves Depth cycles
// later, and a stream of single-beat TLPs is accepted one per cycle (II).
func TestLatency(t *testing.T) {
	d, err := Build(Config{Manager: oneWindow(), BARs: defaultBARs(t), DataWidth: 256})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(d.Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"m_port_a", "m_port_b", "m_kernel", "m_local", "m_cpl"} {
		s.Set(o+"_tlp_ready", 1)
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	for range 8 { // the LUT fills
		s.Step()
	}
	if v, _ := s.Get("s_host_tlp_ready"); v != 1 {
		t.Fatal("not ready after the LUT is filled")
	}
	w := tlp.TLP{RequesterID: 0, Address: 0x40_0000_1000, Length: 1, FirstBE: 0xF, Data: make([]byte, 4)}
	w.Fmt, w.Type, _ = tlp.FmtType(tlp.MWr, true, 0)
	raw, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var hi, lo uint64
	for i := range 8 {
		hi, lo = hi<<8|uint64(raw[i]), lo<<8|uint64(raw[8+i])
	}
	s.SetWords("s_host_tlp_hdr", []uint64{lo, hi})
	s.Set("s_host_tlp_bar", 2)
	s.Set("s_host_tlp_sop", 1)
	s.Set("s_host_tlp_eop", 1)
	s.Set("s_host_tlp_keep", 1)
	s.Set("s_host_tlp_valid", 1)
	const n = 10
	seen := 0
	for cyc := 0; cyc < 40; cyc++ {
		if cyc == n {
			s.Set("s_host_tlp_valid", 0)
		}
		if v, _ := s.Get("s_host_tlp_ready"); v != 1 && cyc < n {
			t.Fatalf("cycle %d: the input stalls with every output ready", cyc)
		}
		if v, _ := s.Get("m_port_a_tlp_valid"); v == 1 {
			if want := seen + d.Depth; cyc != want {
				t.Fatalf("TLP %d left on cycle %d, want %d (Depth %d)", seen, cyc, want, d.Depth)
			}
			seen++
		}
		s.Step()
	}
	if seen != n {
		t.Fatalf("%d of %d TLPs left", seen, n)
	}
	// The design keeps the contract the emulator times itself by.
	if d.II != pmgr.II || d.Depth != pmgr.Depth {
		t.Errorf("the design reports depth %d and II %d; pcie/manager's contract says %d and %d", d.Depth, d.II, pmgr.Depth, pmgr.II)
	}
}

// TestBuildErrors: bad configurations are one-line errors naming the field.
func TestBuildErrors(t *testing.T) {
	bars := defaultBARs(t)
	relay := oneWindow()
	relay.Relay = []pmgr.RelayConfig{{From: "port-c", Base: 0, Size: 4096}}
	steer := oneWindow()
	steer.KernelIn = []pmgr.KernelInConfig{{From: "port-a", Base: 0, Size: 4096, Slot: 9}}
	overlap := oneWindow()
	overlap.Translation.Windows = append(overlap.Translation.Windows, ntb.WindowConfig{Name: "x", BAR: 2, Size: 4096, Egress: "port-b"})
	for _, c := range []struct {
		c    Config
		want string
	}{
		{Config{Manager: oneWindow(), BARs: bars, DataWidth: 128}, "data_width: 128"},
		{Config{Manager: oneWindow(), BARs: bars, ClockMHz: -1}, "clock_mhz"},
		{Config{Manager: oneWindow(), BARs: [6]uint64{0, 0, 3 << 20}}, "bars[2]"},
		{Config{Manager: oneWindow(), BARs: [6]uint64{2: 1 << 30}}, "register_bar: 0"},
		{Config{Manager: relay, BARs: bars}, "relay[0].from"},
		{Config{Manager: steer, BARs: bars}, "kernel_in[0].slot"},
		{Config{Manager: overlap, BARs: bars}, "translation.windows[1]"},
	} {
		_, err := Build(c.c)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v", c.want, err)
		}
	}
}

// TestKindTable: the kind table classifies like the tlp package.
func TestKindTable(t *testing.T) {
	kt := KindTable()
	check := func(f tlp.Fmt, typ uint8, bit uint64, want bool) {
		if got := kt[int(f)<<5|int(typ)]&bit != 0; got != want {
			t.Errorf("fmt %03b type %05b bit %#x: %v, want %v", f, typ, bit, got, want)
		}
	}
	check(0b010, 0b00000, kMemAtomic|kData, true) // MWr 3DW
	check(0b000, 0b00001, kLock, true)            // MRdLk
	check(0b000, 0b00010, kMemAtomic, false)      // IORd
	check(0b000, 0b01010, kCpl, true)             // Cpl
	check(0b011, 0b01100, kNonPosted, true)       // FetchAdd 4DW
	check(0b001, 0b10000, kCfgMsg, true)          // Msg
	check(0b111, 0b11111, kMemAtomic|kCfgMsg|kCpl|kNonPosted|kData, false)
}

// TestRegisterMap: the access rule registers are in the map exactly when
// the configuration has rule slots, CAPS counts them, and the Go model
// of the block (pmgr.Regs) reads CAPS as the map has it and turns an
// ACL_COMMIT into the rule the emulator's check applies.
func TestRegisterMap(t *testing.T) {
	for _, slots := range []int{0, 3} {
		mc := oneWindow()
		mc.Access.RuleSlots = slots
		d, err := Build(Config{Manager: mc, BARs: defaultBARs(t), DataWidth: 256})
		if err != nil {
			t.Fatal(err)
		}
		regs := map[string]pmgr.Register{}
		for _, r := range d.Registers {
			regs[r.Name] = r
		}
		_, hasACL := regs["ACL_COMMIT"]
		if hasACL != (slots > 0) {
			t.Errorf("%d slots: ACL_COMMIT in the map is %v", slots, hasACL)
		}
		caps := regs["CAPS"].Reset
		if caps&0xFF != 1 || caps>>8&0x3FF != 4 || caps>>18&0x3F != uint32(slots) || caps>>24 != 8 {
			t.Errorf("%d slots: CAPS %#x", slots, caps)
		}
		mgr, err := pmgr.New(mc, mustONIC(t), 0x0300)
		if err != nil {
			t.Fatal(err)
		}
		m := pmgr.NewRegs(mgr, 256)
		if m.Read(pmgr.RegCaps) != caps || m.Read(pmgr.RegVersion) != pmgr.VersionValue || m.Read(pmgr.RegWinEnLo) != 1 {
			t.Errorf("%d slots: model reads CAPS %#x VERSION %#x WIN_EN_LO %#x", slots, m.Read(pmgr.RegCaps), m.Read(pmgr.RegVersion), m.Read(pmgr.RegWinEnLo))
		}
		// Grant the host read access to 0x2_0000_5000-0x2_0000_6fff through slot 2.
		for _, w := range [][2]uint32{{pmgr.RegACLIndex, 2}, {pmgr.RegACLBaseLo, 0x0000_5ABC}, {pmgr.RegACLBaseHi, 2}, {pmgr.RegACLPages, 2}, {pmgr.RegACLCtrl, 0b011}, {pmgr.RegACLCommit, 0}} {
			m.Write(w[0], w[1], 0xFFFF_FFFF)
		}
		portA := ntb.Egress{Kind: ntb.EgressPortA}
		v := mgr.Access().Check(0, acl.FromHost, 0x2_0000_6FFC, 4, acl.OpRead, portA)
		if want := map[bool]acl.Rule{false: acl.NoRange, true: acl.Allowed}[slots > 0]; v.Rule != want {
			t.Errorf("%d slots: after the commit a read in the rule is %s, want %s", slots, v.Rule, want)
		}
		if slots > 0 {
			if got := mgr.Access().RuleSlot(2); got.Base != 0x2_0000_5000 || got.Pages != 2 || !got.Read || got.Write || got.Domain != 0 {
				t.Errorf("slot 2 is %+v", got)
			}
			if m.Read(pmgr.RegACLBaseLo) != 0x5ABC || m.Read(pmgr.RegACLCtrl) != 0b011 {
				t.Error("the staging registers do not read back as written")
			}
			m.Write(pmgr.RegACLIndex, 7, 0xFFFF_FFFF) // past the slots
			m.Write(pmgr.RegACLCtrl, 0, 0x0000_00FF)
			m.Write(pmgr.RegACLCommit, 0, 0)
			if !mgr.Access().RuleSlot(2).Enabled {
				t.Error("a commit to index 7 changed slot 2")
			}
		} else if m.Read(pmgr.RegACLBaseLo) != 0 {
			t.Error("without slots, ACL_BASE_LO reads back a value")
		}
	}
}

func mustONIC(t testing.TB) *pcie.Function {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, pcie.DefaultONICWindowBytes)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
