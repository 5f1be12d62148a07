package pcie4

import (
	"fmt"
	"slices"

	"onic/hdlgen/ir"
	"onic/pcie/pg213"
)

// field is the bits of v (a descriptor, or a tuser) where PG213's table
// puts f.
func field(m *ir.Module, v ir.Value, f pg213.Field) ir.Value {
	ir.Helper()
	return m.Slice(v, f.Lo, f.W)
}

// part is a value for a descriptor field.
type part struct {
	f pg213.Field
	v ir.Value
}

// pack builds a w-bit descriptor with each part's value in the bits
// PG213's table gives its field, and zeros in the rest. A value whose
// width is not its field's, or two parts that share a bit, are a mistake
// in the adapter: it panics.
func pack(m *ir.Module, w int, parts ...part) ir.Value {
	ir.Helper()
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b part) int { return b.f.Lo - a.f.Lo })
	var pieces []ir.Value
	top := w
	for _, p := range parts {
		if p.v.Width() != p.f.W || p.f.Lo+p.f.W > top {
			panic(fmt.Sprintf("pcie4: %s: a %d-bit value for bits %d+%d under bit %d", p.f.Name, p.v.Width(), p.f.Lo, p.f.W, top))
		}
		if gap := top - (p.f.Lo + p.f.W); gap > 0 {
			pieces = append(pieces, m.Const(gap, 0))
		}
		pieces = append(pieces, p.v)
		top = p.f.Lo
	}
	if top > 0 {
		pieces = append(pieces, m.Const(top, 0))
	}
	return m.Concat(pieces...)
}
