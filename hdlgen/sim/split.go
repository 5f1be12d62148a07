package sim

import "onic/hdlgen/ir"

// splitRegisters replaces each register that is loaded with a
// concatenation and read only through slices, each inside one part, by a
// register per part (the same enable, reset kind and reset bits); the
// register's node becomes the concatenation of the new ones, so its value
// is what it was, and simplify then has every slice read its part's
// register directly. Registers that copy such a register whole (the
// later stages a lane's fields pass through unchanged) are split the same
// way, part for part. Generated pipelines pack a lane's fields into one
// stage register and take them apart in the next stage: packed, each
// stage cost a shift and an or per field to pack and a shift and a mask
// per field to unpack. It reports whether it split any. A register an
// output port reads, or read whole (other than by such a copy) or across
// parts, stays as it is.
//
// Long: one compiler pass whose steps share its work lists and maps;
// pieces would pass them all back and forth.
func splitRegisters(m *ir.Module) bool {
	n0 := m.Len()
	readers := make([][]int, n0)
	for i := range n0 {
		for _, a := range m.Node(i).Args {
			if a >= 0 {
				readers[a] = append(readers[a], i)
			}
		}
	}
	ported := map[int]bool{}
	for _, p := range m.Ports() {
		ported[p.Node] = true
	}
	// effective appends the readers of i, through wires and zero-extensions
	// of its width; it reports false if a port reads i or one of those.
	var effective func(i int, out *[]int) bool
	effective = func(i int, out *[]int) bool {
		if ported[i] {
			return false
		}
		for _, j := range readers[i] {
			if n := m.Node(j); (n.Op == ir.OpWire || n.Op == ir.OpZext) && n.W == m.Node(i).W {
				if !effective(j, out) {
					return false
				}
				continue
			}
			*out = append(*out, j)
		}
		return true
	}
	done := make([]bool, n0)
	changed := false
	for i := range n0 {
		r := m.Node(i)
		if done[i] || r.Op != ir.OpReg || len(r.Args) == 0 || r.Args[0] < 0 {
			continue
		}
		c := m.Node(through(m, r.Args[0]))
		if c.Op != ir.OpConcat || len(c.Args) < 2 || c.W != r.W {
			continue
		}
		parts := append([]int(nil), c.Args...)
		lo := make([]int, len(parts)) // each part's lowest bit in the register
		at := r.W
		for k, p := range parts {
			at -= m.Node(p).W
			lo[k] = at
		}
		// members: the register, then the registers copying a member;
		// src: which member each copies.
		members, src := []int{i}, map[int]int{}
		var spans []int // the slices reading a member, for each member
		ok := true
		for q := 0; q < len(members) && ok; q++ {
			mb := members[q]
			var rs []int
			ok = effective(mb, &rs) && len(rs) > 0
			spans = append(spans, -1-mb) // (the member the slices after it read)
			for _, j := range rs {
				n := m.Node(j)
				switch {
				case n.Op == ir.OpSlice:
					spans = append(spans, j)
				case n.Op == ir.OpReg && j < n0 && !done[j] && j != i && n.W == r.W && len(n.Args) > 0 &&
					n.Args[0] >= 0 && through(m, n.Args[0]) == mb && !(len(n.Args) > 1 && n.Args[1] == mb):
					if _, seen := src[j]; !seen {
						members, src[j] = append(members, j), mb
					}
				default:
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		regs := map[int][]int{} // a member -> its part registers
		for _, mb := range members {
			old := *m.Node(mb)
			done[mb] = true
			rs := make([]int, len(parts))
			for k, p := range parts {
				w := m.Node(p).W
				next := p
				if mb != i {
					next = regs[src[mb]][k]
				}
				n := ir.Node{Op: ir.OpReg, W: w, Args: []int{next}, Reset: bitsOf(old.Reset, lo[k], w),
					Async: old.Async, NoReset: old.NoReset, Pos: old.Pos, Drive: old.Drive}
				if len(old.Args) > 1 {
					n.Args = append(n.Args, old.Args[1])
				}
				rs[k] = m.Append(n) // (m's nodes may move: pointers into them are stale from here)
			}
			regs[mb] = rs
			*m.Node(mb) = ir.Node{Op: ir.OpConcat, W: old.W, Args: rs, Name: old.Name, Pos: old.Pos}
		}
		// A slice across parts becomes the concatenation of its pieces of
		// the part registers (a slice inside one part simplify takes on).
		var of []int
		for _, j := range spans {
			if j < 0 {
				of = regs[-1-j]
				continue
			}
			sl := *m.Node(j)
			if partHolding(lo, parts, m, &sl) >= 0 {
				continue
			}
			var pieces []int
			for k, p := range parts {
				a, b := max(sl.Lo, lo[k]), min(sl.Lo+sl.W, lo[k]+m.Node(p).W)
				if a < b {
					pieces = append(pieces, m.Append(ir.Node{Op: ir.OpSlice, W: b - a, Lo: a - lo[k], Args: []int{of[k]}, Pos: sl.Pos}))
				}
			}
			*m.Node(j) = ir.Node{Op: ir.OpConcat, W: sl.W, Args: pieces, Name: sl.Name, Pos: sl.Pos}
		}
		changed = true
	}
	return changed
}

// partHolding is the part (of the concatenation whose parts start at bits lo)
// that slice s falls inside, or -1.
func partHolding(lo, parts []int, m *ir.Module, s *ir.Node) int {
	for k, p := range parts {
		if lo[k] <= s.Lo && s.Lo+s.W <= lo[k]+m.Node(p).W {
			return k
		}
	}
	return -1
}

// bitsOf is bits [lo, lo+w) of the little-endian words x, as words.
func bitsOf(x []uint64, lo, w int) []uint64 {
	out := make([]uint64, (w+63)/64)
	for b := range w {
		if k := lo + b; k/64 < len(x) && x[k/64]>>(uint(k)%64)&1 != 0 {
			out[b/64] |= 1 << (uint(b) % 64)
		}
	}
	return out
}
