// Package translate builds the O-NIC's direct-window address translation
// in hdlgen/ir from the same checked tables the emulator uses
// (pcie/ntb.Tables): one comparator per window on the BAR and the offset
// bits above the window's size, and the far-side address made by putting
// the window's translated base above the offset bits within it. Windows
// never overlap (ntb refuses that), so at most one matches.
package translate

import (
	"fmt"

	"onic/hdlgen/ir"
	"onic/pcie/ntb"
)

// Result is the translation of one address.
type Result struct {
	Found      ir.Value // 1: the address lies in a window
	Enabled    ir.Value // 1: and that window is enabled
	Index      ir.Value // the window's index in Tables.Windows order (6 bits)
	Egress     ir.Value // ntb.EgressKind (3 bits)
	Slot       ir.Value // kernel slot for kernel egress (8 bits)
	Translated ir.Value // the far-side address (64 bits)
}

// Windows builds the lookup of off (64 bits, the offset within BAR bar,
// 3 bits) in ws, a table from ntb.Tables.Windows. Window contents are
// constants of this design; reprogramming them at run time through
// AXI-Lite is still to come.
func Windows(m *ir.Module, bar, off ir.Value, ws []ntb.Window) (Result, error) {
	if bar.Width() != 3 || off.Width() != 64 {
		return Result{}, fmt.Errorf("translate: bar must be 3 bits and off 64, not %d and %d", bar.Width(), off.Width())
	}
	if len(ws) > 64 {
		return Result{}, fmt.Errorf("translate: %d windows; the index has 6 bits", len(ws))
	}
	zero := func(w int) ir.Value { return m.Const(w, 0) }
	r := Result{Found: zero(1), Enabled: zero(1), Index: zero(6), Egress: zero(3), Slot: zero(8), Translated: zero(64)}
	for k, w := range ws {
		sh := sizeShift(w.Size)
		hit := m.Eq(bar, m.Const(3, uint64(w.BAR)))
		if sh < 64 {
			hit = m.And(hit, m.Eq(m.Slice(off, sh, 64-sh), m.Const(64-sh, w.Offset>>sh)))
		}
		translated := m.Const(64, w.Translated)
		if sh > 0 {
			translated = m.Concat(m.Const(64-sh, w.Translated>>sh), m.Slice(off, 0, sh))
		}
		pick := func(cur ir.Value, v ir.Value) ir.Value { return m.Mux(hit, v, cur) }
		r.Found = pick(r.Found, m.Const(1, 1))
		r.Enabled = pick(r.Enabled, m.Const(1, b(w.Enabled)))
		r.Index = pick(r.Index, m.Const(6, uint64(k)))
		r.Egress = pick(r.Egress, m.Const(3, uint64(w.Egress.Kind)))
		r.Slot = pick(r.Slot, m.Const(8, uint64(w.Egress.Slot)))
		r.Translated = pick(r.Translated, translated)
	}
	return r, nil
}

// sizeShift is log2 of a window size (a power of two).
func sizeShift(size uint64) int {
	n := 0
	for size > 1 {
		size >>= 1
		n++
	}
	return n
}

func b(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
