package sim

import (
	"fmt"
	"strings"

	"onic/hdlgen/ir"
)

// A ROM (ir.Module.ROM) is built as a tree of multiplexers over its
// index's bits, one per pair of words: the large preset's 512-entry
// translation table is 511 of them, evaluated every cycle its stage
// moves. Verilator turns the case statement the emitter prints for it
// into one load from a table; so do both simulators here. The tree's root
// (the multiplexer carrying ir.Table) is compiled as opTable, which reads
// only the index; the tree's other nodes are then dead logic, evaluated
// only when their values are asked for.

// opTable is a ROM's lookup: v[dst] = rom[v[a]], rom being Sim.roms[-2-c]
// (c is kept negative so that it reads as no operand).
const opTable = opSliceW + 1

// maxTableIndex is the widest index a ROM is looked up by (its table is
// padded with zeros to 2^width words, so the index needs no test).
const maxTableIndex = 12

// tableOf is node i's ROM, if it is the root of one that is looked up.
func tableOf(m *ir.Module, i int) *ir.Table {
	n := m.Node(i)
	if n.Op != ir.OpMux || n.Table == nil || n.W > 64 {
		return nil
	}
	if iw := m.Node(n.Table.Index).W; iw > maxTableIndex || len(n.Table.Words) > 1<<iw {
		return nil
	}
	return n.Table
}

// romWords is t's words padded with zeros to one per index value.
func romWords(m *ir.Module, t *ir.Table) []uint64 {
	w := make([]uint64, 1<<m.Node(t.Index).W)
	copy(w, t.Words)
	return w
}

// printROMs prints the generated code's ROM arrays.
func (g *gen) printROMs() {
	for k, words := range g.s.roms {
		var b strings.Builder
		for j, x := range words {
			if j%8 == 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%#x, ", x)
		}
		g.line("// %sR%d is a ROM's words, one per index value (opTable).", g.typ, k)
		g.line("var %sR%d = [%d]uint64{%s\n}", g.typ, k, len(words), b.String())
		g.line("")
	}
}
