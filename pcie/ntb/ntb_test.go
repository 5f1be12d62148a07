package ntb

import (
	"strings"
	"testing"

	"onic/tlp"
)

var bars = [6]uint64{0: 64 << 10, 2: 16 << 30, 4: 32 << 20}

func mustBuild(t testing.TB, c Config) *Tables {
	t.Helper()
	tab, err := Build(c, bars)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestConfigErrors(t *testing.T) {
	w := func(mod func(*WindowConfig)) Config {
		c := WindowConfig{Name: "w", BAR: 2, Offset: 0, Size: 1 << 20, Egress: "port-a", Translated: 0x100000}
		mod(&c)
		return Config{Windows: []WindowConfig{c}}
	}
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"size not power of two", w(func(c *WindowConfig) { c.Size = 3 << 20 }), "windows[0].size: 0x300000 must be a power of two of at least 4 KiB"},
		{"size too small", w(func(c *WindowConfig) { c.Size = 2048 }), "windows[0].size"},
		{"misaligned offset", w(func(c *WindowConfig) { c.Offset = 0x80000 }), "windows[0].offset: 0x80000 is not aligned"},
		{"misaligned translation", w(func(c *WindowConfig) { c.Translated = 0x1000 }), "windows[0].translated: 0x1000 is not aligned"},
		{"outside BAR", w(func(c *WindowConfig) { c.Offset = 16 << 30 }), "lies outside BAR2"},
		{"no such BAR", w(func(c *WindowConfig) { c.BAR = 1 }), "windows[0].bar: 1 is not a memory BAR"},
		{"unknown egress", w(func(c *WindowConfig) { c.Egress = "port-c" }), `windows[0].egress: "port-c" is not port-a, port-b, kernel:N, local or host`},
		{"kernel slot out of range", w(func(c *WindowConfig) { c.Egress = "kernel:4" }), "kernel slot must be 0 to 3"},
		{"failover to a kernel", w(func(c *WindowConfig) { c.FailoverEgress = "kernel:0" }), "must be the two different optical ports"},
		{"failover to the same port", w(func(c *WindowConfig) { c.FailoverEgress = "port-a" }), "must be the two different optical ports"},
		{"multicast without second port", w(func(c *WindowConfig) { c.Multicast = true }), "multicast window needs the second port"},
		{"failover misaligned", w(func(c *WindowConfig) { c.FailoverEgress = "port-b"; c.FailoverTranslated = 0x800 }), "failover_translated"},
		{"overlap", Config{Windows: []WindowConfig{
			{Name: "a", BAR: 2, Offset: 0, Size: 1 << 21, Egress: "port-a"},
			{Name: "b", BAR: 2, Offset: 1 << 20, Size: 1 << 20, Egress: "port-b"},
		}}, "windows[1]: BAR2 0x100000-0x1fffff overlaps windows[0] (a)"},
		{"too many windows", Config{Windows: make([]WindowConfig, 7)}, "windows: 7 windows, the hardware has 6"},
		{"max_windows", Config{MaxWindows: 65}, "max_windows: 65"},
		{"LUT entry out of range", Config{LUT: LUTConfig{BAR: 4, Entries: 512, EntrySize: 64 << 10,
			Map: []LUTEntryConfig{{Index: 512, Egress: "port-a"}}}}, "lut.map[0].index: 512 is out of range (the LUT has 512 entries)"},
		{"LUT entry twice", Config{LUT: LUTConfig{BAR: 4, Map: []LUTEntryConfig{{Index: 3, Egress: "port-a"}, {Index: 3, Egress: "port-b"}}}}, "lut.map[1].index: entry 3 is already mapped"},
		{"LUT too big", Config{LUT: LUTConfig{BAR: 4, Entries: 512, EntrySize: 128 << 10}}, "do not fit BAR4"},
		{"LUT entries", Config{LUT: LUTConfig{BAR: 4, Entries: 600}}, "lut.entries: 600 must be 1 to 512"},
		{"LUT entry size", Config{LUT: LUTConfig{BAR: 4, EntrySize: 5000}}, "lut.entry_size"},
		{"LUT misaligned translation", Config{LUT: LUTConfig{BAR: 4, Map: []LUTEntryConfig{{Index: 0, Egress: "port-a", Translated: 0x1000}}}}, "lut.map[0].translated"},
		{"LUT egress", Config{LUT: LUTConfig{BAR: 4, Map: []LUTEntryConfig{{Index: 0, Egress: "nowhere"}}}}, "lut.map[0].egress"},
		{"LUT overlaps window", Config{Windows: []WindowConfig{{Name: "x", BAR: 4, Size: 1 << 20, Egress: "port-a"}}, LUT: LUTConfig{BAR: 4, Entries: 512}}, "lut: BAR4 0x0-0x1ffffff overlaps window x"},
		{"RID without proxy base", Config{RID: RIDConfig{Map: []string{"00:00.0"}}}, "rid.proxy_base: required"},
		{"RID bad ID", Config{RID: RIDConfig{ProxyBase: "10:00.0", Map: []string{"zz"}}}, "rid.map[0]"},
		{"RID twice", Config{RID: RIDConfig{ProxyBase: "10:00.0", Map: []string{"01:00.0", "01:00.0"}}}, "rid.map[1]: 01:00.0 is mapped twice"},
		{"RID past the end", Config{RID: RIDConfig{ProxyBase: "ff:1f.7", Entries: 2}}, "runs past ff:1f.7"},
		{"RID entries", Config{RID: RIDConfig{Entries: 513}}, "rid.entries: 513"},
	} {
		_, err := Build(tc.c, bars)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func testTables(t testing.TB) *Tables {
	return mustBuild(t, Config{
		Windows: []WindowConfig{
			{Name: "gpu", BAR: 2, Offset: 0, Size: 4 << 30, Egress: "port-a", Translated: 0x50_0000_0000},
			{Name: "dma", BAR: 2, Offset: 4 << 30, Size: 1 << 30, Egress: "port-b", Translated: 0x8000_0000},
			{Name: "mc", BAR: 2, Offset: 0x1_4000_0000, Size: 16 << 20, Egress: "port-a", Translated: 0x10_0000_0000,
				FailoverEgress: "port-b", FailoverTranslated: 0x20_0000_0000, Multicast: true},
			{Name: "fo", BAR: 2, Offset: 0x1_4100_0000, Size: 16 << 20, Egress: "port-a", Translated: 0x30_0000_0000,
				FailoverEgress: "port-b", FailoverTranslated: 0x31_0000_0000},
			{Name: "k1", BAR: 2, Offset: 0x1_4200_0000, Size: 1 << 20, Egress: "kernel:1"},
			{Name: "off", BAR: 2, Offset: 0x1_4300_0000, Size: 64 << 10, Egress: "port-a", Disabled: true},
		},
		LUT: LUTConfig{BAR: 4, Map: []LUTEntryConfig{{Index: 0, Egress: "port-b", Translated: 0x7000_0000}, {Index: 511, Egress: "port-a", Translated: 0x9000_0000}}},
		RID: RIDConfig{ProxyBase: "10:00.0", Map: []string{"00:00.0", "05:00.0"}},
	})
}

func TestLookup(t *testing.T) {
	tab := testTables(t)
	up := [2]bool{}
	for _, tc := range []struct {
		name     string
		bar      int
		off      uint64
		down     [2]bool
		found    bool
		enabled  bool
		egress   string
		xlated   uint64
		second   string
		secondAt uint64
	}{
		{"first byte of a window", 2, 0, up, true, true, "port-a", 0x50_0000_0000, "none", 0},
		{"last byte of a window", 2, 4<<30 - 1, up, true, true, "port-a", 0x50_FFFF_FFFF, "none", 0},
		{"first byte of the next", 2, 4 << 30, up, true, true, "port-b", 0x8000_0000, "none", 0},
		{"gap between windows", 2, 0x1_4400_0000, up, false, false, "none", 0, "none", 0},
		{"one past the last window", 2, 0x1_4301_0000, up, false, false, "none", 0, "none", 0},
		{"past the end of the BAR", 2, 16 << 30, up, false, false, "none", 0, "none", 0},
		{"another BAR", 0, 0, up, false, false, "none", 0, "none", 0},
		{"disabled window", 2, 0x1_4300_0010, up, true, false, "port-a", 0x10, "none", 0},
		{"kernel window", 2, 0x1_4200_0040, up, true, true, "kernel:1", 0x40, "none", 0},
		{"multicast", 2, 0x1_4000_0040, up, true, true, "port-a", 0x10_0000_0040, "port-b", 0x20_0000_0040},
		{"failover, port A up", 2, 0x1_4100_0100, up, true, true, "port-a", 0x30_0000_0100, "none", 0},
		{"failover, port A down", 2, 0x1_4100_0100, [2]bool{true, false}, true, true, "port-b", 0x31_0000_0100, "none", 0},
		{"LUT first entry", 4, 0x10, up, true, true, "port-b", 0x7000_0010, "none", 0},
		{"LUT last byte", 4, 32<<20 - 1, up, true, true, "port-a", 0x9000_FFFF, "none", 0},
		{"LUT unmapped entry", 4, 5 << 16, up, true, false, "none", 0, "none", 0},
	} {
		var h Hit
		tab.Lookup(tc.bar, tc.off, tc.down, &h)
		if h.Found() != tc.found || h.Enabled() != tc.enabled || h.Egress.String() != tc.egress ||
			(tc.enabled && h.Translated != tc.xlated) || h.Second.String() != tc.second || h.SecondAddr != tc.secondAt {
			t.Errorf("%s: got %+v", tc.name, h)
		}
	}
	// The LUT can be reprogrammed at run time; the window enable too.
	if err := tab.SetLUTEntry(5, LUTEntry{Enabled: true, Egress: Egress{Kind: EgressPortA}, Translated: 0xA000_0000}); err != nil {
		t.Fatal(err)
	}
	var h Hit
	if tab.Lookup(4, 5<<16|0x20, up, &h); !h.Enabled() || !h.LUT() || h.Translated != 0xA000_0020 || h.Index != 5 {
		t.Errorf("after SetLUTEntry: %+v", h)
	}
	if err := tab.SetLUTEntry(512, LUTEntry{}); err == nil {
		t.Error("SetLUTEntry(512) accepted")
	}
	if err := tab.SetLUTEntry(1, LUTEntry{Translated: 0x10}); err == nil {
		t.Error("misaligned LUT base accepted")
	}
	tab.SetWindowEnabled(0, false)
	if tab.Lookup(2, 0, up, &h); h.Enabled() {
		t.Error("window still enabled")
	}
}

func TestRIDTable(t *testing.T) {
	tab := testTables(t)
	for local, proxy := range map[string]string{"00:00.0": "10:00.0", "05:00.0": "10:00.1"} {
		l, _ := tlp.ParseID(local)
		p, ok := tab.ProxyID(l)
		if !ok || p.String() != proxy {
			t.Errorf("ProxyID(%s) = %s %v, want %s", local, p, ok, proxy)
		}
		back, ok := tab.LocalID(p)
		if !ok || back != l {
			t.Errorf("LocalID(%s) = %s %v, want %s", p, back, ok, local)
		}
	}
	if _, ok := tab.ProxyID(tlp.NewID(6, 0, 0)); ok {
		t.Error("an unmapped requester got a proxy ID")
	}
	for _, p := range []tlp.ID{tlp.NewID(0x10, 0, 2), tlp.NewID(0x0F, 0x1F, 7)} {
		if _, ok := tab.LocalID(p); ok {
			t.Errorf("LocalID(%s) found an unmapped proxy", p)
		}
	}
}

func TestLookupAllocs(t *testing.T) {
	tab := testTables(t)
	var h Hit
	if a := testing.AllocsPerRun(100, func() {
		tab.Lookup(2, 0x1_4000_0040, [2]bool{}, &h)
		tab.Lookup(4, 0x10, [2]bool{}, &h)
		_, _ = tab.ProxyID(0)
	}); a != 0 {
		t.Errorf("lookups made %.1f allocs, want 0", a)
	}
}

// table64 has 64 direct windows of 64 MiB in a 4 GiB BAR.
func table64(b *testing.B) *Tables {
	var ws []WindowConfig
	for i := 0; i < 64; i++ {
		ws = append(ws, WindowConfig{BAR: 2, Offset: uint64(i) << 26, Size: 1 << 26, Egress: "port-a", Translated: uint64(i+1) << 32})
	}
	tab, err := Build(Config{MaxWindows: 64, Windows: ws}, [6]uint64{2: 4 << 30})
	if err != nil {
		b.Fatal(err)
	}
	return tab
}

// BenchmarkLookup64Windows looks up addresses spread over all 64 windows.
func BenchmarkLookup64Windows(b *testing.B) {
	tab := table64(b)
	var offs [256]uint64
	for i := range offs {
		offs[i] = uint64(i*37%64)<<26 | uint64(i*4096)
	}
	b.ReportAllocs()
	i := 0
	var sink uint64
	var h Hit
	for b.Loop() {
		tab.Lookup(2, offs[i&255], [2]bool{}, &h)
		sink += h.Translated
		i++
	}
	_ = sink
}

// BenchmarkLookupLUT512 looks up addresses spread over a 512-entry LUT.
func BenchmarkLookupLUT512(b *testing.B) {
	var m []LUTEntryConfig
	for i := 0; i < 512; i++ {
		m = append(m, LUTEntryConfig{Index: i, Egress: "port-b", Translated: uint64(i) << 20})
	}
	tab, err := Build(Config{LUT: LUTConfig{BAR: 4, Map: m}}, bars)
	if err != nil {
		b.Fatal(err)
	}
	var offs [256]uint64
	for i := range offs {
		offs[i] = uint64(i*131%512)<<16 | uint64(i*64)
	}
	b.ReportAllocs()
	i := 0
	var sink uint64
	var h Hit
	for b.Loop() {
		tab.Lookup(4, offs[i&255], [2]bool{}, &h)
		sink += h.Translated
		i++
	}
	_ = sink
}

func TestFloor(t *testing.T) {
	keys := []uint64{10, 20, 20, 30}
	for _, tc := range []struct {
		k    uint64
		want int
	}{{0, -1}, {9, -1}, {10, 0}, {15, 0}, {20, 2}, {29, 2}, {30, 3}, {1 << 63, 3}} {
		if got := Floor(keys, tc.k); got != tc.want {
			t.Errorf("Floor(%d) = %d, want %d", tc.k, got, tc.want)
		}
	}
	if Floor(nil, 5) != -1 {
		t.Error("Floor of no keys")
	}
}
