package cosim

import (
	"flag"
	"testing"

	"onic/designs/manager"
	"onic/emu/scenario"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/testbenches/tools"
	"onic/tlp"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "run only this seed (a failing test prints the command line)")
	tlpsFlag  = flag.Int("tlps", 400, "TLPs per seed")
	seedsFlag = flag.Int("seeds", 8, "seeds per configuration for the IR simulation (make soak raises it)")
	hdlFlag   = flag.Int("hdl-seeds", 1, "seeds per configuration replayed in Icarus and Verilator")
)

// benches are the configurations under test: the default scenario's
// O-NIC on a 512-bit path, and richConfig on a 256-bit one, under the
// fail policy and (rich-hold) under hold.
func benches(t testing.TB) map[string]*Bench {
	hold := richBench(t)
	hold.Config.Hold = true
	b, err := NewBench(hold.Config, hold.fn)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Bench{"default": defaultBench(t, 512), "rich": richBench(t), "rich-hold": b}
}

// richBench is richConfig on a 256-bit path, with the stand-ins of
// richStandIns.
func richBench(t testing.TB) *Bench {
	t.Helper()
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	c := manager.Config{Manager: richConfig(), DataWidth: 256, BARs: f.MemorySizes(), StandIns: richStandIns(t)}
	b, err := NewBench(c, f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// richStandIns are two lent devices' stand-ins: a GPU behind port A with
// two BARs, which the host domain may reach, and an NVMe drive behind
// port B whose BAR it may reach in part (the rest is denied). Both have
// an MSI-X table and an MSI window to rewrite it through: the GPU's
// leads to a lender-side region above 4 GiB, the drive's below.
func richStandIns(t testing.TB) []manager.StandIn {
	t.Helper()
	dev := func(name string, id uint16, class uint32, sizes map[int]uint64, msix pcie.MSIXConfig) *pcie.Function {
		var bars [6]pcie.BAR
		for k, size := range sizes {
			bars[k] = pcie.BAR{Kind: pcie.BARMem64, Size: size, Prefetchable: k == 2}
		}
		f, err := pcie.NewEndpoint(pcie.Config{Name: name, VendorID: 0x10de, DeviceID: id, Class: class, SubsystemVendorID: 0x10de, SubsystemID: 0x1234, BARs: bars})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.AddMSIX(msix); err != nil {
			t.Fatal(err)
		}
		return f.StandIn(name + "-stand-in")
	}
	return []manager.StandIn{
		{Port: "port-a", Function: dev("gpu", 0x1db4, 0x030200, map[int]uint64{0: 1 << 20, 2: 64 << 10},
			pcie.MSIXConfig{Vectors: 16, TableBAR: 0, TableOffset: 0x8_0000, PBABAR: 0, PBAOffset: 0x9_0000}),
			Remote: [6]uint64{0: 1<<32 + 1<<20, 2: 0x2_0000_0000 + 64<<10},
			MSI:    &pmgr.MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0x4_0010_0000}},
		{Port: "port-b", Function: dev("nvme", 0xa808, 0x010802, map[int]uint64{2: 32 << 20},
			pcie.MSIXConfig{Vectors: 33, TableBAR: 2, TableOffset: 0x2008, PBABAR: 2, PBAOffset: 0x3000}),
			Remote: [6]uint64{2: 0x9000_0000},
			MSI:    &pmgr.MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0xB000_0000}},
	}
}

// bench generates c on an O-NIC function like the emulator's.
func bench(t testing.TB, mc pmgr.Config, width int) *Bench {
	t.Helper()
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	c := manager.Config{Manager: mc, DataWidth: width, BARs: f.MemorySizes()}
	b, err := NewBench(c, f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seeds lists the seeds to run: -seed alone, or first, first+1, ...
func seeds(first uint64, n int) []uint64 {
	if *seedFlag != 0 {
		return []uint64{*seedFlag}
	}
	var s []uint64
	for i := range n {
		s = append(s, first+uint64(i))
	}
	return s
}

// TestCosim drives random streams through the IR simulation of each
// configuration's manager and checks every TLP out, and the counters,
// against the emulator's manager model.
func TestCosim(t *testing.T) {
	all := benches(t)
	for _, name := range []string{"default", "rich", "rich-hold"} {
		b := all[name]
		forged, held := 0, 0
		standIn, breach := map[string]int{}, map[string]int{}
		for _, seed := range seeds(1000, *seedsFlag) {
			st := b.Generate(seed, *tlpsFlag)
			forged += sourceInvalid(b, st)
			held += b.held(st)
			b.standInOutcomes(st, standIn)
			breachOutcomes(b, st, breach)
			tr, err := b.Run(st, 1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			r, err := b.Check(st, tr)
			if err != nil {
				t.Fatalf("%s: %v\n(re-run: go test ./testbenches/cosim -run TestCosim/ -seed %d)", name, err, seed)
			}
			t.Logf("%s seed %d: %d TLPs in %d cycles (offer %d%%, ready %v%%), out %v, %d register reads",
				name, seed, r.TLPs, len(tr.Inputs), st.Offer, st.Ready, r.Packets, r.Reads)
		}
		if name == "rich" && forged == 0 {
			t.Errorf("%s: no TLP carried a forged requester ID (source-invalid): the stimulus misses source validation", name)
		}
		if name == "rich" {
			// AtomicOps need both rights, and each multicast copy is
			// checked on its own (issue 42): the streams must reach both.
			t.Logf("%s: atomics and multicast copies by the model's outcome: %v", name, breach)
			for _, want := range []string{"atomic-allowed", "atomic-read-denied", "atomic-write-denied", "copy-made", "copy-refused"} {
				if breach[want] == 0 {
					t.Errorf("%s: no TLP had outcome %s: the stimulus misses it", name, want)
				}
			}
		}
		if name != "default" {
			// The stand-ins' BARs: forwarded out of either port (MSI-X table
			// writes among them, their addresses rewritten), denied, and
			// failed with the port down, no proxy ID or an MSI-X address the
			// window cannot carry, as the model decides.
			t.Logf("%s: requests for the stand-ins' BARs by the model's outcome: %v", name, standIn)
			for _, want := range []string{"port-a", "port-b", "msix-rewritten", "denied", "port-down", "no-proxy-id", "msix-address"} {
				if standIn[want] == 0 {
					t.Errorf("%s: no request for a stand-in's BAR had outcome %s: the stimulus misses it", name, want)
				}
			}
		}
		if name == "rich-hold" {
			if held == 0 {
				t.Errorf("%s: no TLP was held for a down port: the stimulus misses the hold policy", name)
			}
			t.Logf("%s: %d TLPs held for a down port", name, held)
		}
	}
}

// standInOutcomes tallies into n the model's outcomes for st's requests
// to a stand-in's BAR: the port they leave by, or why they fail.
func (b *Bench) standInOutcomes(st *Stimulus, n map[string]int) {
	b.walk(st, func(_ int, op *Op, o *pmgr.Outcome) error {
		if op.Fn == 0 || op.Bar == 7 {
			return nil
		}
		switch {
		case o.Action == pmgr.Forward:
			n[o.Egress.String()]++
			if o.Rewrite.Mask != 0 {
				n["msix-rewritten"]++
			}
		case o.Reason == pmgr.Denied:
			n["denied"]++
		case o.Reason == pmgr.PortDown:
			n["port-down"]++
		case o.Reason == pmgr.NoProxyID:
			n["no-proxy-id"]++
		default:
			n[o.Reason.String()]++
		}
		return nil
	})
}

// breachOutcomes tallies into n the model's outcomes for st's AtomicOps
// (allowed, or denied for the read or the write right) and for its
// multicast copies (made, or refused by the access check).
func breachOutcomes(b *Bench, st *Stimulus, n map[string]int) {
	mdl := b.model()
	var o pmgr.Outcome
	for i := range st.Ops {
		op := &st.Ops[i]
		if op.Kind == OpPortDown {
			mdl.PortDown = [2]bool{op.Data&1 != 0, op.Data&2 != 0}
		}
		if op.Kind != OpTLP {
			continue
		}
		refused := mdl.Count(pmgr.RelayDenied)
		mdl.Process(op.TLP, pmgr.FromHost, &o)
		switch {
		case mdl.Count(pmgr.RelayDenied) > refused:
			n["copy-refused"]++
		case o.Action == pmgr.Forward && o.Second.Kind != ntb.EgressNone:
			n["copy-made"]++
		}
		if op.TLP.Kind().Class() != tlp.ClassAtomic {
			continue
		}
		switch {
		case o.Action == pmgr.Forward:
			n["atomic-allowed"]++
		case o.Deny == acl.ReadDenied:
			n["atomic-read-denied"]++
		case o.Deny == acl.WriteDenied:
			n["atomic-write-denied"]++
		}
	}
}

// sourceInvalid is how many of st's TLPs the model refuses as carrying a
// requester ID that may not come from the host link.
func sourceInvalid(b *Bench, st *Stimulus) int {
	mdl := b.model()
	var o pmgr.Outcome
	for i := range st.Ops {
		if op := &st.Ops[i]; op.Kind == OpTLP {
			mdl.Process(op.TLP, pmgr.FromHost, &o)
		}
	}
	return int(mdl.Denials(acl.SourceInvalid))
}

// TestCosimHDL replays IR-simulation runs into the emitted Verilog under
// Icarus and Verilator: both must log exactly the same transfers on the
// same cycles, and their logs pass the same check against the model.
func TestCosimHDL(t *testing.T) {
	tools.Long(t)
	iverilog, vvp := tools.Require(t, "iverilog"), tools.Require(t, "vvp")
	verilator := tools.Require(t, "verilator")
	all := benches(t)
	for _, name := range []string{"default", "rich", "rich-hold"} {
		b := all[name]
		for _, seed := range seeds(2000, *hdlFlag) {
			st := b.Generate(seed, *tlpsFlag)
			tr, err := b.Run(st, 1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := b.Testbench(dir, tr); err != nil {
				t.Fatal(err)
			}
			for _, tool := range []string{"icarus", "verilator"} {
				var log []string
				if tool == "icarus" {
					log, err = Icarus(dir, iverilog, vvp)
				} else {
					log, err = Verilator(dir, verilator)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := SameLog(tool, tr.Log, log); err != nil {
					t.Fatalf("%s seed %d: %v", name, seed, err)
				}
				r, err := b.Check(st, &Trace{Log: log})
				if err != nil {
					t.Fatalf("%s under %s: %v\n(re-run: go test ./testbenches/cosim -run TestCosimHDL -seed %d)", name, tool, err, seed)
				}
				t.Logf("%s seed %d under %s: %d TLPs, %d cycles, %d transfers logged, out %v", name, seed, tool, r.TLPs, len(tr.Inputs), len(log), r.Packets)
			}
		}
	}
}

// defaultBench is the manager of the default scenario's first O-NIC.
func defaultBench(t testing.TB, width int) *Bench {
	return bench(t, scenario.TwoParty().ONICs[0].Manager, width)
}

// richConfig uses every kind of table entry: windows to both ports (with
// and without a 4-GiB crossing in the translation), a kernel slot and
// local registers, a disabled window, failover and multicast windows, a
// LUT with entries of every egress and unmapped ones, a requester-ID
// table, domains with partial, read-only and write-only ranges, egress
// limits, CA for denials, multicast copies the domain may make only
// in part, and four access rule slots (the only grants a
// tenant domain has).
func richConfig() pmgr.Config {
	return pmgr.Config{
		Translation: ntb.Config{
			MaxWindows: 16, KernelSlots: 4,
			Windows: []ntb.WindowConfig{
				{Name: "far-memory", BAR: 2, Offset: 0, Size: 1 << 30, Egress: "port-a", Translated: 1 << 32},
				{Name: "low-memory", BAR: 2, Offset: 1 << 30, Size: 64 << 20, Egress: "port-b", Translated: 0x8000_0000},
				{Name: "kernel", BAR: 2, Offset: 0x4400_0000, Size: 1 << 20, Egress: "kernel:2"},
				{Name: "regs", BAR: 2, Offset: 0x4410_0000, Size: 64 << 10, Egress: "local", Translated: 0x1_0000},
				{Name: "parked", BAR: 2, Offset: 0x4420_0000, Size: 64 << 10, Egress: "port-a", Translated: 0x7000_0000, Disabled: true},
				{Name: "multipath", BAR: 2, Offset: 0x4500_0000, Size: 16 << 20, Egress: "port-a", Translated: 0x2_0000_0000,
					FailoverEgress: "port-b", FailoverTranslated: 0x9000_0000},
				{Name: "multicast", BAR: 2, Offset: 0x4600_0000, Size: 1 << 20, Egress: "port-b", Translated: 0x3_0000_0000,
					FailoverEgress: "port-a", FailoverTranslated: 0xA000_0000, Multicast: true},
			},
			LUT: ntb.LUTConfig{BAR: 4, Offset: 0x10_0000, Entries: 48, EntrySize: 64 << 10, Map: []ntb.LUTEntryConfig{
				{Index: 0, Egress: "port-a", Translated: 0x4_0000_0000},
				{Index: 1, Egress: "port-b", Translated: 0xB000_0000},
				{Index: 5, Egress: "kernel:1", Translated: 0x20_0000},
				{Index: 6, Egress: "local", Translated: 0},
				{Index: 47, Egress: "port-a", Translated: 0xFFFF_0000},
			}},
			RID: ntb.RIDConfig{ProxyBase: "10:00.0", Map: []string{"00:00.0", "01:00.0", "02:00.3", "03:00.1"}},
		},
		Access: acl.Config{DenyStatus: "CA", RuleSlots: 4, Domains: []acl.DomainConfig{
			{Name: "host", Requesters: []string{"00:00.0-00:1f.7"}, Ingress: []string{"host"}, Egress: []string{"port-a", "port-b", "kernel:2", "kernel:1", "local"},
				Ranges: []acl.RangeConfig{
					{Base: 1 << 32, Size: 512 << 20, Read: true, Write: true},
					{Base: 0x8000_0000, Size: 64 << 20, Read: true},
					{Base: 0, Size: 4 << 20, Read: true, Write: true},
					{Base: 0x2_0000_0000, Size: 16 << 20, Read: true, Write: true},
					{Base: 0x9000_0000, Size: 16 << 20, Read: true, Write: true},
					{Base: 0x3_0000_0000, Size: 1 << 20, Write: true},
					// The multicast window's copies: only the first half's
					// are made (pcie/manager checks each copy on its own).
					{Base: 0xA000_0000, Size: 512 << 10, Write: true},
					{Base: 0x4_0000_0000, Size: 64 << 10, Read: true, Write: true},
					{Base: 0xB000_0000, Size: 64 << 10, Write: true},
				}},
			{Name: "devices", Requesters: []string{"01:00.0-02:00.7"}, Ingress: []string{"host"}, Egress: []string{"port-b", "local"},
				Ranges: []acl.RangeConfig{{Base: 0x8000_0000, Size: 64 << 20, Write: true}, {Base: 0, Size: 64 << 10, Read: true}}},
			{Name: "tenant", Requesters: []string{"03:00.0-03:00.7"}, Ingress: []string{"host"}, Egress: []string{"port-a", "port-b", "local"}}, // rule slots only
			// The peers behind the ports: their IDs on the host link are
			// forged (source-invalid), whatever the ranges would allow.
			{Name: "peer-a", Requesters: []string{"20:00.0-20:00.7"}, Ingress: []string{"port-a"}, Egress: []string{"port-a", "host", "local"},
				Ranges: []acl.RangeConfig{{Base: 1 << 32, Size: 512 << 20, Read: true, Write: true}, {Base: 0, Size: 4 << 20, Read: true, Write: true}}},
			{Name: "peer-b", Requesters: []string{"30:00.0-30:00.7"}, Ingress: []string{"port-b"}, Egress: []string{"port-b", "host", "local"},
				Ranges: []acl.RangeConfig{{Base: 0x9000_0000, Size: 16 << 20, Read: true, Write: true}}},
		}},
	}
}
