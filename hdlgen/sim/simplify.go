package sim

import (
	"slices"
	"strconv"
	"strings"

	"onic/hdlgen/ir"
)

// simplify returns a clone of m with its bit-level rewiring taken out:
// generated designs pack fields into a word and take them apart again
// (a lane's struct into a pipeline register, out of it into the next),
// and each slice and concatenation would otherwise cost an operation
// every cycle. Every node keeps its index and its value, so Value and the
// VCD still see every signal of m; only what computes it changes:
//
//   - a slice of a slice is one slice of the first operand;
//   - a slice of a concatenation that falls inside one part is a slice of
//     that part, and of a zero-extension inside its operand, a slice of
//     the operand;
//   - a slice of all of a value is that value (a wire, sharing its words);
//   - the parts of a concatenation that are adjacent slices of one value
//     (the most significant part just above the next) are one slice, and
//     a concatenation left with one part is that slice;
//   - an and with all ones, or an or or xor with zero, is the other
//     operand (a valid bit masked by a constant enable, say);
//   - a range check, !(a < lo) & (a < hi) with constant bounds, is one
//     comparison, a - lo < hi - lo (unsigned, wrapping): an address
//     window's or access range's test;
//   - a register loaded with a concatenation and read only through
//     slices inside its parts is a register per part (splitRegisters);
//   - an operation that repeats an earlier one (the same op, width and
//     operands, in either order for a commutative op) is a wire of the
//     earlier: generators decode the same header field for each of their
//     comparisons, and Go does not merge the loads of the repeats across
//     the stores between them.
//
// The reference simulator runs m as built, so the cross-checks hold this
// pass too.
func simplify(src *ir.Module) *ir.Module {
	m := src.Clone()
	for changed, split := true, true; changed; {
		changed = false
		for i := 0; i < m.Len(); i++ {
			switch m.Node(i).Op {
			case ir.OpSlice:
				changed = simplifySlice(m, i) || changed
			case ir.OpConcat:
				changed = simplifyConcat(m, i) || changed
			case ir.OpAnd, ir.OpOr, ir.OpXor:
				changed = simplifyIdentity(m, i) || changed
				changed = simplifyRange(m, i) || changed
			}
		}
		changed = shareRepeats(m) || changed
		if !changed && split { // (once the concatenations that load registers are simplified)
			split = splitRegisters(m)
			changed = split
		}
	}
	return m
}

// shareRepeats makes each pure operation that repeats an earlier one a
// wire of it (simplify); it reports whether it changed anything. Wires
// share their operand's words, so a repeat costs nothing. Registers,
// memories, instances, inputs and constants are never merged.
func shareRepeats(m *ir.Module) bool {
	seen := map[string]int{}
	changed := false
	var key strings.Builder
	args := make([]string, 0, 8)
	for i := 0; i < m.Len(); i++ {
		n := m.Node(i)
		switch n.Op {
		case ir.OpAdd, ir.OpSub, ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpNot, ir.OpEq, ir.OpNe, ir.OpLtU, ir.OpLtS,
			ir.OpMux, ir.OpSlice, ir.OpConcat, ir.OpZext, ir.OpSext, ir.OpRedOr, ir.OpRedAnd, ir.OpRedXor,
			ir.OpMul, ir.OpShl, ir.OpShr, ir.OpSar:
		default:
			continue
		}
		args = args[:0]
		for _, a := range n.Args {
			a = through(m, a)
			if c := m.Node(a); c.Op == ir.OpConst { // constants by value: each call to Const is a node of its own
				var b strings.Builder
				b.WriteString("k" + strconv.Itoa(c.W))
				for _, w := range c.Const {
					b.WriteString(":" + strconv.FormatUint(w, 16))
				}
				args = append(args, b.String())
				continue
			}
			args = append(args, strconv.Itoa(a))
		}
		switch n.Op {
		case ir.OpAdd, ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpEq, ir.OpNe, ir.OpMul:
			slices.Sort(args) // commutative
		}
		key.Reset()
		key.WriteString(strconv.Itoa(int(n.Op)))
		for _, v := range []int{n.W, n.Lo} {
			key.WriteByte(' ')
			key.WriteString(strconv.Itoa(v))
		}
		for _, a := range args {
			key.WriteByte(',')
			key.WriteString(a)
		}
		k := key.String()
		if j, ok := seen[k]; ok {
			n.Op, n.Args, n.Lo = ir.OpWire, []int{j}, 0
			changed = true
			continue
		}
		seen[k] = i
	}
	return changed
}

// through follows wires (and zero-extensions to the same width) to the
// node that computes i's value.
func through(m *ir.Module, i int) int {
	for {
		n := m.Node(i)
		if (n.Op != ir.OpWire && n.Op != ir.OpZext) || len(n.Args) == 0 || n.Args[0] < 0 || m.Node(n.Args[0]).W != n.W {
			return i
		}
		i = n.Args[0]
	}
}

// simplifySlice rewrites slice i by the rules of simplify; it reports
// whether it changed anything.
func simplifySlice(m *ir.Module, i int) bool {
	n := m.Node(i)
	a := through(m, n.Args[0])
	an := m.Node(a)
	switch an.Op {
	case ir.OpSlice:
		n.Args[0], n.Lo = an.Args[0], n.Lo+an.Lo
		return true
	case ir.OpZext:
		if y := an.Args[0]; n.Lo+n.W <= m.Node(y).W {
			n.Args[0] = y
			return true
		}
	case ir.OpConcat:
		pos := an.W
		for _, p := range an.Args {
			pos -= m.Node(p).W
			if pos <= n.Lo && n.Lo+n.W <= pos+m.Node(p).W {
				n.Args[0], n.Lo = p, n.Lo-pos
				return true
			}
		}
	}
	if n.Lo == 0 && n.W == m.Node(n.Args[0]).W {
		n.Op, n.Lo = ir.OpWire, 0
		return true
	}
	return false
}

// run is bits [lo, lo+w) of node src.
type run struct{ src, lo, w int }

// simplifyConcat merges the adjacent slices among concatenation i's parts
// (simplify); it reports whether it changed anything.
func simplifyConcat(m *ir.Module, i int) bool {
	n := m.Node(i)
	var runs []run
	var merged []bool
	for _, p := range n.Args {
		r := run{through(m, p), 0, m.Node(p).W}
		if pn := m.Node(r.src); pn.Op == ir.OpSlice {
			r = run{through(m, pn.Args[0]), pn.Lo, pn.W}
		}
		if k := len(runs) - 1; k >= 0 && runs[k].src == r.src && runs[k].lo == r.lo+r.w {
			runs[k] = run{r.src, r.lo, runs[k].w + r.w}
			merged[k] = true
			continue
		}
		runs = append(runs, r)
		merged = append(merged, false)
	}
	if len(runs) == len(n.Args) {
		return false
	}
	if len(runs) == 1 {
		r := runs[0]
		n.Op, n.Args, n.Lo = ir.OpSlice, []int{r.src}, r.lo
		if r.lo == 0 && r.w == m.Node(r.src).W {
			n.Op, n.Lo = ir.OpWire, 0
		}
		return true
	}
	args := make([]int, 0, len(runs))
	k := 0 // the next original part
	for j, r := range runs {
		if !merged[j] {
			args = append(args, n.Args[k])
			k++
			continue
		}
		for used := 0; used < r.w; k++ {
			used += m.Node(n.Args[k]).W
		}
		if r.lo == 0 && r.w == m.Node(r.src).W {
			args = append(args, r.src)
		} else {
			args = append(args, m.Append(ir.Node{Op: ir.OpSlice, W: r.w, Args: []int{r.src}, Lo: r.lo}))
		}
	}
	n.Args = args
	return true
}

// simplifyIdentity makes and i (or, xor) a wire of its operand when the
// other is the constant that leaves it unchanged (simplify).
func simplifyIdentity(m *ir.Module, i int) bool {
	n := m.Node(i)
	for k, c := range n.Args {
		cn := m.Node(through(m, c))
		if cn.Op != ir.OpConst {
			continue
		}
		identity := true
		for j, word := range cn.Const {
			want := uint64(0)
			if n.Op == ir.OpAnd {
				want = ^uint64(0)
				if r := n.W - 64*j; r < 64 {
					want = 1<<uint(r) - 1
				}
			}
			if word != want {
				identity = false
			}
		}
		if identity {
			n.Op, n.Args = ir.OpWire, []int{n.Args[1-k]}
			return true
		}
	}
	return false
}

// simplifyRange makes and i, of !(a < lo) and a < hi (unsigned, lo <= hi
// constants, in either order), the comparison a - lo < hi - lo
// (simplify). For a below lo the difference wraps to 2^w - (lo - a),
// which is at least hi - lo since hi < 2^w, so the two agree.
func simplifyRange(m *ir.Module, i int) bool {
	n := m.Node(i)
	if n.Op != ir.OpAnd || n.W != 1 {
		return false
	}
	// below: the value and constant of a one-word a < c, if x is one.
	below := func(x int) (a, c int, ok bool) {
		l := m.Node(through(m, x))
		if l.Op != ir.OpLtU || m.Node(l.Args[0]).W > 64 {
			return 0, 0, false
		}
		c = through(m, l.Args[1])
		return through(m, l.Args[0]), c, m.Node(c).Op == ir.OpConst
	}
	for k := range 2 {
		not := m.Node(through(m, n.Args[k]))
		if not.Op != ir.OpNot {
			continue
		}
		a, lo, ok1 := below(not.Args[0])
		b, hi, ok2 := below(n.Args[1-k])
		if !ok1 || !ok2 || a != b {
			continue
		}
		l, h := m.Node(lo).Const[0], m.Node(hi).Const[0]
		if l > h {
			continue
		}
		w, pos := m.Node(a).W, n.Pos
		d := m.Append(ir.Node{Op: ir.OpSub, W: w, Args: []int{a, lo}, Pos: pos})
		span := m.Append(ir.Node{Op: ir.OpConst, W: w, Const: []uint64{h - l}, Pos: pos})
		n = m.Node(i) // (Append may move the nodes)
		n.Op, n.Args = ir.OpLtU, []int{d, span}
		return true
	}
	return false
}
