package translate

import (
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/pcie/ntb"
	"onic/testbenches/verilator"
)

// tables is a set of windows like an O-NIC's: several sizes in BAR2,
// one in BAR4, a disabled one, kernel and port egresses.
func tables(t testing.TB) *ntb.Tables {
	t.Helper()
	tab, err := ntb.Build(ntb.Config{MaxWindows: 8, Windows: []ntb.WindowConfig{
		{Name: "gpu", BAR: 2, Offset: 0, Size: 4 << 30, Egress: "port-a", Translated: 0x50_0000_0000},
		{Name: "dma", BAR: 2, Offset: 4 << 30, Size: 1 << 30, Egress: "port-b", Translated: 0x8000_0000},
		{Name: "kernel", BAR: 2, Offset: 0x1_4200_0000, Size: 1 << 20, Egress: "kernel:3"},
		{Name: "parked", BAR: 2, Offset: 0x1_4300_0000, Size: 64 << 10, Egress: "port-a", Translated: 0x7000_0000, Disabled: true},
		{Name: "small", BAR: 4, Offset: 0x3000, Size: 4 << 10, Egress: "port-b", Translated: 0xABCD_E000},
		{Name: "multipath", BAR: 2, Offset: 0x1_4400_0000, Size: 16 << 20, Egress: "port-a", Translated: 0x9000_0000,
			FailoverEgress: "port-b", FailoverTranslated: 0xA000_0000},
		{Name: "multicast", BAR: 2, Offset: 0x1_4600_0000, Size: 1 << 20, Egress: "port-b", Translated: 0x1_0000_0000,
			FailoverEgress: "port-a", FailoverTranslated: 0x2_0000_0000, Multicast: true},
	}}, [6]uint64{0, 0, 16 << 30, 0, 64 << 10, 0})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func module(t testing.TB, ws []ntb.Window) *ir.Module {
	m := ir.NewModule("window_lookup")
	r, err := Windows(m, m.Input("bar", 3), m.Input("off", 64), m.Input("en", len(ws)), ws)
	if err != nil {
		t.Fatal(err)
	}
	m.Output("found", r.Found)
	m.Output("enabled", r.Enabled)
	m.Output("index", r.Index)
	m.Output("egress", r.Egress)
	m.Output("slot", r.Slot)
	m.Output("translated", r.Translated)
	m.Output("has_second", r.HasSecond)
	m.Output("multicast", r.Multicast)
	m.Output("second_egress", r.SecondEgress)
	m.Output("second_translated", r.SecondTranslated)
	return m
}

// TestAgainstTables: on addresses in, around and between the windows, the
// RTL's lookup equals ntb.Tables.Lookup, the emulator's.
func TestAgainstTables(t *testing.T) {
	tab := tables(t)
	ws := tab.Windows()
	s, err := sim.New(module(t, ws))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	en := ntb.Enables(ws)
	for i := range 20000 {
		if rng.IntN(100) == 0 { // software turns a window on or off
			k := rng.IntN(len(ws))
			en ^= 1 << k
			tab.SetWindowEnabled(k, en>>k&1 != 0)
		}
		s.Set("en", en)
		bar := []int{2, 2, 2, 4, 4, 0, 3}[rng.IntN(7)]
		var off uint64
		switch w := ws[rng.IntN(len(ws))]; rng.IntN(4) {
		case 0: // inside a window
			off = w.Offset + rng.Uint64N(w.Size)
		case 1: // just around one
			off = w.Offset + w.Size - 2 + rng.Uint64N(4)
		case 2: // just below one
			off = w.Offset - 2 + rng.Uint64N(4)
		default:
			off = rng.Uint64N(32 << 30)
		}
		var h, down ntb.Hit
		tab.Lookup(bar, off, [2]bool{}, &h)
		tab.Lookup(bar, off, [2]bool{true, true}, &down)
		s.Set("bar", uint64(bar))
		s.Set("off", off)
		get := func(o string) uint64 { v, _ := s.Get(o); return v }
		if get("found") != b(h.Found()) {
			t.Fatalf("%d: BAR%d %#x: found %d, tables %v", i, bar, off, get("found"), h.Found())
		}
		if !h.Found() {
			continue
		}
		if get("enabled") != b(h.Enabled()) || get("index") != uint64(h.Index) || get("egress") != uint64(h.Egress.Kind) ||
			get("slot") != uint64(h.Egress.Slot) || get("translated") != h.Translated {
			t.Fatalf("%d: BAR%d %#x: RTL enabled %d index %d egress %d/%d %#x; tables %+v", i, bar, off,
				get("enabled"), get("index"), get("egress"), get("slot"), get("translated"), h)
		}
		// The second port: a multicast copy, or where the window fails
		// over to when its port is down.
		var wantEg, wantAt uint64
		switch {
		case h.Second.Kind != ntb.EgressNone:
			wantEg, wantAt = uint64(h.Second.Kind), h.SecondAddr
		case down.Egress != h.Egress:
			wantEg, wantAt = uint64(down.Egress.Kind), down.Translated
		}
		if get("has_second") != b(wantEg != 0) || get("multicast") != b(h.Second.Kind != ntb.EgressNone) ||
			get("second_egress") != wantEg || wantEg != 0 && get("second_translated") != wantAt {
			t.Fatalf("%d: BAR%d %#x: RTL second %d multicast %d egress %d at %#x; tables %+v / down %+v", i, bar, off,
				get("has_second"), get("multicast"), get("second_egress"), get("second_translated"), h, down)
		}
	}
}

// TestVerilog: the lookup is clean under Verilator -Wall.
func TestVerilog(t *testing.T) { verilator.Lint(t, module(t, tables(t).Windows())) }
