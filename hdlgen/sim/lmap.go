package sim

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"onic/hdlgen/ir"
)

// A linear map over GF(2) is what a CRC's next value is: each output bit
// the parity of the input (data and old remainder) under its own mask.
// Printed bit by bit, a 32-bit CRC over a 512-bit beat is 32 parities of
// nine masked words, about 700 instructions; printed as a byte table of
// the map (slicing-by-N in software CRCs), it is one lookup and one xor
// per input byte, about 270. GoSource finds such maps in the program
// (linearMaps) and prints them so; ParityTable fills the tables when the
// generated package starts.

// lmap is one concatenation printed through a table: the parts at the
// positions of bits (output bit -> mask words) are the parities of the
// value at x (nw words) under those masks.
type lmap struct {
	name string
	x    int32
	nw   int32
	t64  bool           // the table holds 64-bit entries (the concatenation is over 32 bits)
	bits [][]uint64     // output bit -> its mask (nil: not from the table)
	rows []int          // the input bytes some mask reads
	part map[int32]bool // the parts the table computes
}

// sameTable reports whether o's tables are lm's: the same entries, the
// same rows, the same masks.
func (lm *lmap) sameTable(o *lmap) bool {
	return lm.t64 == o.t64 && slices.Equal(lm.rows, o.rows) &&
		slices.EqualFunc(lm.bits, o.bits, func(a, b []uint64) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) })
}

// ParityTable fills t, the byte tables of a linear map over GF(2), for
// the code GoSource prints: t[r][b] has bit i set when byte b, placed at
// byte rows[r] of the input, has an odd number of ones under masks[i]
// (a nil mask: bit i stays clear). So the map of an input is the xor of
// t[r][input byte rows[r]] over the rows.
func ParityTable[T uint32 | uint64](t [][256]T, rows []int, masks [][]uint64) {
	for r, p := range rows {
		var basis [8]T // each bit of the byte alone
		for i, mk := range masks {
			if w := p / 8; w < len(mk) {
				b := mk[w] >> (8 * uint(p%8))
				for k := range 8 {
					if b>>uint(k)&1 != 0 {
						basis[k] |= T(1) << uint(i)
					}
				}
			}
		}
		t[r][0] = 0
		for b := 1; b < 256; b++ {
			t[r][b] = t[r][b&(b-1)] ^ basis[bits.TrailingZeros(uint(b))]
		}
	}
}

// linearMaps finds the one-word concatenations at least four of whose
// parts are parities of one value under constant masks, each parity and
// its and read by nothing else, and marks them to be printed through a
// table (lmap) when that costs fewer instructions; the parities and ands
// are then fused (not printed).
//
// Long: one compiler pass whose steps share its work lists and maps;
// pieces would pass them all back and forth.
func (g *gen) linearMaps(partOf func(int) int, readers map[int32][]int, elsewhere map[int32]bool) {
	s, m := g.s, g.s.m
	g.lmaps = map[int32]*lmap{}
	all := make([]int, len(s.prog))
	for k := range all {
		all[k] = k
	}
	prod := s.producers(all)            // a word -> the instruction computing it
	only := func(o int32, k int) bool { // o is read by instruction k alone
		r := readers[o]
		return !elsewhere[o] && len(r) == 1 && r[0] == k
	}
	type parity struct {
		x, nw    int32
		mask     []uint64
		red, and int
	}
	// parityOf: the parity part o of concatenation k, if it is one.
	parityOf := func(o int32, k int) (parity, bool) {
		rk, ok := prod[o]
		if !ok || !only(o, k) || partOf(rk) != partOf(k) {
			return parity{}, false
		}
		var andOff int32
		switch red := s.prog[rk]; {
		case red.op == ir.OpRedXor:
			andOff = red.a
		case red.op == opWide && m.Node(int(red.node)).Op == ir.OpRedXor:
			andOff = s.off[m.Node(int(red.node)).Args[0]]
		default:
			return parity{}, false
		}
		ak, ok := prod[andOff]
		if !ok || partOf(ak) != partOf(k) {
			return parity{}, false
		}
		and := s.prog[ak]
		for _, w := range s.dstWords(and) {
			if !only(w, rk) {
				return parity{}, false
			}
		}
		p := parity{red: rk, and: ak}
		switch {
		case and.op == ir.OpAnd:
			x, c := and.a, and.b
			if _, ok := g.konst[x]; ok {
				x, c = c, x
			}
			mk, ok := g.konst[c]
			_, both := g.konst[x]
			if _, f := g.fused[x]; !ok || both || f {
				return parity{}, false
			}
			p.x, p.nw, p.mask = x, 1, []uint64{mk}
		case and.op == opWide && m.Node(int(and.node)).Op == ir.OpAnd:
			if _, ok := g.fused[and.dst]; !ok {
				return parity{}, false
			}
			args := m.Node(int(and.node)).Args
			x, c := args[0], args[1]
			if m.Node(x).Op == ir.OpConst {
				x, c = c, x
			}
			if m.Node(c).Op != ir.OpConst || m.Node(x).Op == ir.OpConst {
				return parity{}, false
			}
			if _, ok := g.fused[s.off[x]]; ok {
				return parity{}, false
			}
			p.x, p.nw = s.off[x], s.nw[x]
			p.mask = make([]uint64, p.nw)
			copy(p.mask, m.Node(c).Const)
		default:
			return parity{}, false
		}
		return p, true
	}
	for k, in := range s.prog {
		if in.op != ir.OpConcat {
			continue
		}
		ps := s.parts[in.b : in.b+2*in.c]
		found := map[int32][]parity{} // by value
		at := map[int]int{}           // a parity's red instruction -> its bit
		pos := 0
		for j := len(ps) - 2; j >= 0; j -= 2 {
			if p, ok := parityOf(ps[j], k); ok && ps[j+1] == 1 {
				found[p.x] = append(found[p.x], p)
				at[p.red] = pos
			}
			pos += int(ps[j+1])
		}
		var best []parity
		for _, list := range found {
			if len(list) > len(best) || len(list) == len(best) && len(best) > 0 && list[0].x < best[0].x {
				best = list
			}
		}
		if len(best) < 4 {
			continue
		}
		lm := &lmap{x: best[0].x, nw: best[0].nw, t64: pos > 32, bits: make([][]uint64, pos), part: map[int32]bool{}}
		used := map[int]bool{}
		for _, p := range best {
			lm.bits[at[p.red]] = p.mask
			for w, mk := range p.mask {
				for b := range 8 {
					if mk>>(8*uint(b))&0xff != 0 {
						used[8*w+b] = true
					}
				}
			}
		}
		for r := range 8 * int(lm.nw) {
			if used[r] {
				lm.rows = append(lm.rows, r)
			}
		}
		// Each parity costs an and and an xor a word, its parity and its
		// place; each table row a shift, a lookup and an xor.
		if 3*len(lm.rows) >= len(best)*(2*int(lm.nw)+3) {
			continue
		}
		// Maps alike share their tables: the card's six 512-bit LCRCs
		// looked up six copies of the same 64 KB, more than the data
		// cache holds.
		if i := slices.IndexFunc(g.tables, lm.sameTable); i >= 0 {
			lm.name = g.tables[i].name
		} else {
			lm.name = fmt.Sprintf("%sP%d", g.typ, len(g.tables))
			g.tables = append(g.tables, lm)
		}
		g.lmaps[in.dst] = lm
		for _, p := range best {
			red, and := s.prog[p.red], s.prog[p.and]
			lm.part[red.dst] = true
			g.fused[red.dst] = int(red.node)
			g.fusedWord[red.dst] = int(red.node)
			if and.op != opWide {
				g.fused[and.dst] = int(and.node)
				g.fusedWord[and.dst] = int(and.node)
			}
		}
	}
}

// lmapTerms is the table lookups of lm, xored, as Go source.
func (g *gen) lmapTerms(lm *lmap) string {
	var t []string
	for r, p := range lm.rows {
		x := fmt.Sprintf("v[%d]", lm.x+int32(p/8))
		if lm.nw == 1 {
			x = g.ref(lm.x)
		}
		if sh := 8 * (p % 8); sh != 0 {
			x = fmt.Sprintf("%s>>%d", x, sh)
		}
		t = append(t, fmt.Sprintf("uint64(%s[%d][uint8(%s)])", lm.name, r, x))
	}
	return "(" + strings.Join(t, " ^ ") + ")"
}

// printTables prints the tables' declarations and the init that fills
// them.
func (g *gen) printTables() {
	if len(g.tables) == 0 {
		return
	}
	w := g.line
	for _, lm := range g.tables {
		typ := "uint32"
		if lm.t64 {
			typ = "uint64"
		}
		w("// %s is a linear map's byte tables (ParityTable).", lm.name)
		w("var %s [%d][256]%s", lm.name, len(lm.rows), typ)
		w("")
	}
	w("func init() {")
	for _, lm := range g.tables {
		var rows, masks []string
		for _, r := range lm.rows {
			rows = append(rows, fmt.Sprint(r))
		}
		for _, mk := range lm.bits {
			if mk == nil {
				masks = append(masks, "nil")
				continue
			}
			var ws []string
			for _, x := range mk {
				ws = append(ws, fmt.Sprintf("%#x", x))
			}
			masks = append(masks, "{"+strings.Join(ws, ", ")+"}")
		}
		w("%sParityTable(%s[:], []int{%s}, [][]uint64{\n%s,\n})", g.q, lm.name, strings.Join(rows, ", "), strings.Join(masks, ",\n"))
	}
	w("}")
	w("")
}
