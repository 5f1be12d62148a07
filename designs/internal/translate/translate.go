// Package translate builds the O-NIC's direct-window address translation
// in hdlgen/ir from the same checked tables the emulator uses
// (pcie/ntb.Tables): one comparator per window on the BAR and the offset
// bits above the window's size, and the far-side address made by putting
// the window's translated base above the offset bits within it. Windows
// never overlap (ntb refuses that), so at most one matches, and the
// result is a one-hot selection (an OR tree) rather than a priority
// chain: its depth grows with the log of the number of windows.
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
	// The window's second port (failover or multicast copy).
	HasSecond        ir.Value // 1: the window names a second port
	Multicast        ir.Value // 1: writes go to both ports (else: failover)
	SecondEgress     ir.Value // ntb.EgressKind (3 bits) of the second port
	SecondTranslated ir.Value // the far-side address through it (64 bits)
}

// Windows builds the lookup of off (64 bits, the offset within BAR bar,
// 3 bits) in ws, a table from ntb.Tables.Windows. enabled has one bit
// per window (bit k for ws[k]), so software can turn windows on and off
// at run time (ntb.Tables.SetWindowEnabled); the rest of each window is
// a constant of the design.
func Windows(m *ir.Module, bar, off, enabled ir.Value, ws []ntb.Window) (Result, error) {
	if bar.Width() != 3 || off.Width() != 64 {
		return Result{}, fmt.Errorf("translate: bar must be 3 bits and off 64, not %d and %d", bar.Width(), off.Width())
	}
	if len(ws) > 64 {
		return Result{}, fmt.Errorf("translate: %d windows; the index has 6 bits", len(ws))
	}
	if len(ws) == 0 {
		zero := func(w int) ir.Value { return m.Const(w, 0) }
		return Result{Found: zero(1), Enabled: zero(1), Index: zero(6), Egress: zero(3), Slot: zero(8), Translated: zero(64),
			HasSecond: zero(1), Multicast: zero(1), SecondEgress: zero(3), SecondTranslated: zero(64)}, nil
	}
	if enabled.Width() != len(ws) {
		return Result{}, fmt.Errorf("translate: %d enable bits for %d windows", enabled.Width(), len(ws))
	}
	var hits []ir.Value
	var index, egress, slot, translated, second, multicast, secondEgress, secondAt []ir.Value
	for k, w := range ws {
		sh := sizeShift(w.Size)
		hit := m.Eq(bar, m.Const(3, uint64(w.BAR)))
		if sh < 64 {
			hit = m.And(hit, m.Eq(m.Slice(off, sh, 64-sh), m.Const(64-sh, w.Offset>>sh)))
		}
		hits = append(hits, m.Named(fmt.Sprintf("window%d_hit", k), hit))
		place := func(base uint64) ir.Value {
			if sh == 0 {
				return m.Const(64, base)
			}
			return m.Concat(m.Const(64-sh, base>>sh), m.Slice(off, 0, sh))
		}
		index = append(index, m.Const(6, uint64(k)))
		egress = append(egress, m.Const(3, uint64(w.Egress.Kind)))
		slot = append(slot, m.Const(8, uint64(w.Egress.Slot)))
		translated = append(translated, place(w.Translated))
		second = append(second, m.Const(1, b(w.Failover.Kind != ntb.EgressNone)))
		multicast = append(multicast, m.Const(1, b(w.Multicast)))
		secondEgress = append(secondEgress, m.Const(3, uint64(w.Failover.Kind)))
		secondAt = append(secondAt, place(w.FailoverAt))
	}
	ens := make([]ir.Value, len(ws))
	for k := range ws {
		ens[k] = m.Slice(enabled, k, 1)
	}
	return Result{
		Found: m.Any(hits...), Enabled: m.Pick(hits, ens), Index: m.Pick(hits, index),
		Egress: m.Pick(hits, egress), Slot: m.Pick(hits, slot), Translated: m.Pick(hits, translated),
		HasSecond: m.Pick(hits, second), Multicast: m.Pick(hits, multicast),
		SecondEgress: m.Pick(hits, secondEgress), SecondTranslated: m.Pick(hits, secondAt),
	}, nil
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

// ports lists r's fields with their port names, in a fixed order.
func (r *Result) ports() []struct {
	name string
	v    *ir.Value
} {
	return []struct {
		name string
		v    *ir.Value
	}{{"found", &r.Found}, {"enabled", &r.Enabled}, {"index", &r.Index}, {"egress", &r.Egress}, {"slot", &r.Slot},
		{"translated", &r.Translated}, {"has_second", &r.HasSecond}, {"multicast", &r.Multicast},
		{"second_egress", &r.SecondEgress}, {"second_translated", &r.SecondTranslated}}
}

// Module is the lookup of Windows as a module of its own, named name, to
// be used through Instance: inputs bar (3 bits), off (64) and, when there
// are windows, window_en (one bit per window); one output per Result
// field, in snake case (found, enabled, index, ..., second_translated).
func Module(name string, ws []ntb.Window) (*ir.Module, error) {
	m := ir.NewModule(name)
	m.Describe("bar", "The BAR a request hit and its offset in it.")
	m.Describe("window_en", "Each window's enable bit, as the window-enable registers hold them.")
	m.Describe("found", "Whether a window holds the offset and whether it is enabled; which window, its egress, kernel slot and translated address; a failover or multicast window's second egress and address.")
	bar, off := m.Input("bar", 3), m.Input("off", 64)
	var en ir.Value
	if len(ws) > 0 {
		en = m.Input("window_en", len(ws))
	}
	r, err := Windows(m, bar, off, en, ws)
	if err != nil {
		return nil, err
	}
	for _, p := range r.ports() {
		m.Output(p.name, *p.v)
	}
	return m, m.Check()
}

// Instance places sub, made by Module, in m as instance name and returns
// its outputs as a Result. enabled is the zero Value when sub has no
// windows.
func Instance(m *ir.Module, name string, sub *ir.Module, bar, off, enabled ir.Value) Result {
	in := map[string]ir.Value{"bar": bar, "off": off}
	if enabled.Width() > 0 {
		in["window_en"] = enabled
	}
	out := m.Instance(name, sub, in)
	var r Result
	for _, p := range r.ports() {
		*p.v = out[p.name]
	}
	return r
}
