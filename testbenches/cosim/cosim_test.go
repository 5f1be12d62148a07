package cosim

import (
	"flag"
	"testing"

	"onic/emu/cluster"
	"onic/hdlgen/manager"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
)

var (
	seedFlag = flag.Uint64("seed", 0, "run only this seed")
	tlpsFlag = flag.Int("tlps", 400, "TLPs per seed")
)

// defaultBench is the manager of the default scenario's first O-NIC.
func defaultBench(t testing.TB, width int) *Bench {
	t.Helper()
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	c := manager.Config{Manager: cluster.TwoParty().ONICs[0].Manager, DataWidth: width}
	for i, b := range f.BARs {
		if b.Kind == pcie.BARMem32 || b.Kind == pcie.BARMem64 {
			c.BARs[i] = b.Size
		}
	}
	b, err := NewBench(c, f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCosimSim(t *testing.T) {
	b := defaultBench(t, 512)
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	}
	for _, seed := range seeds {
		st := b.Generate(seed, *tlpsFlag)
		tr, err := b.Run(st, 200000)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Check(st, tr)
		if err != nil {
			t.Fatalf("%v (re-run: go test ./testbenches/cosim -run TestCosimSim -seed %d)", err, seed)
		}
		t.Logf("seed %d: %d TLPs in %d cycles, out %v, %d register reads", seed, r.TLPs, len(tr.Inputs), r.Packets, r.Reads)
	}
}

// richConfig uses every kind of table entry: windows to both ports (with
// and without a 4-GiB crossing in the translation), a kernel slot and
// local registers, a disabled window, failover and multicast windows, a
// LUT with entries of every egress and unmapped ones, a requester-ID
// table, domains with partial, read-only and write-only ranges, egress
// limits, and CA for denials.
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
			RID: ntb.RIDConfig{ProxyBase: "10:00.0", Map: []string{"00:00.0", "01:00.0", "02:00.3"}},
		},
		Access: acl.Config{DenyStatus: "CA", Domains: []acl.DomainConfig{
			{Name: "host", Requesters: []string{"00:00.0-00:1f.7"}, Egress: []string{"port-a", "port-b", "kernel:2", "kernel:1", "local"},
				Ranges: []acl.RangeConfig{
					{Base: 1 << 32, Size: 512 << 20, Read: true, Write: true},
					{Base: 0x8000_0000, Size: 64 << 20, Read: true},
					{Base: 0, Size: 4 << 20, Read: true, Write: true},
					{Base: 0x2_0000_0000, Size: 16 << 20, Read: true, Write: true},
					{Base: 0x9000_0000, Size: 16 << 20, Read: true, Write: true},
					{Base: 0x3_0000_0000, Size: 1 << 20, Write: true},
					{Base: 0x4_0000_0000, Size: 64 << 10, Read: true, Write: true},
					{Base: 0xB000_0000, Size: 64 << 10, Write: true},
				}},
			{Name: "devices", Requesters: []string{"01:00.0-02:00.7"}, Egress: []string{"port-b", "local"},
				Ranges: []acl.RangeConfig{{Base: 0x8000_0000, Size: 64 << 20, Write: true}, {Base: 0, Size: 64 << 10, Read: true}}},
		}},
	}
}

func TestCosimSimRich(t *testing.T) {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	c := manager.Config{Manager: richConfig(), DataWidth: 256}
	for i, b := range f.BARs {
		if b.Kind == pcie.BARMem32 || b.Kind == pcie.BARMem64 {
			c.BARs[i] = b.Size
		}
	}
	b, err := NewBench(c, f)
	if err != nil {
		t.Fatal(err)
	}
	seeds := []uint64{11, 12, 13, 14, 15, 16, 17, 18}
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	}
	for _, seed := range seeds {
		st := b.Generate(seed, *tlpsFlag)
		tr, err := b.Run(st, 200000)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Check(st, tr)
		if err != nil {
			t.Fatalf("%v (re-run: go test ./testbenches/cosim -run TestCosimSimRich -seed %d)", err, seed)
		}
		t.Logf("seed %d: %d TLPs in %d cycles, out %v, %d register reads", seed, r.TLPs, len(tr.Inputs), r.Packets, r.Reads)
	}
}
