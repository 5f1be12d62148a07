package sim

import (
	"math/bits"

	"onic/hdlgen/ir"
)

// topMask clears the bits of d above width.
func topMask(d []uint64, width int) {
	if r := width % 64; r != 0 {
		d[len(d)-1] &= 1<<r - 1
	}
}

// bitsAt reads 64 bits of src starting at bit pos (zeros past its end).
func bitsAt(src []uint64, pos int) uint64 {
	q, r := pos/64, uint(pos%64)
	var lo, hi uint64
	if q < len(src) {
		lo = src[q]
	}
	if q+1 < len(src) {
		hi = src[q+1]
	}
	if r == 0 {
		return lo
	}
	return lo>>r | hi<<(64-r)
}

// signBit is bit width-1 of a.
func signBit(a []uint64, width int) uint64 { return a[(width-1)/64] >> uint((width-1)%64) & 1 }

// cmpU compares a and b (equal lengths) as unsigned numbers.
func cmpU(a, b []uint64) int {
	for k := len(a) - 1; k >= 0; k-- {
		if a[k] != b[k] {
			if a[k] < b[k] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// amount reads a shift amount, saturated to limit.
func amount(a []uint64, limit int) int {
	for _, x := range a[1:] {
		if x != 0 {
			return limit
		}
	}
	if a[0] >= uint64(limit) {
		return limit
	}
	return int(a[0])
}

// evalWide evaluates node i, an operation with an operand or a result of
// more than 64 bits, word by word.
func (s *Sim) evalWide(i int) {
	m := s.m
	n := m.Node(i)
	d := s.get(i)
	a := s.get(n.Args[0])
	switch n.Op {
	case ir.OpMux:
		if a[0] != 0 {
			copy(d, s.get(n.Args[1]))
		} else {
			copy(d, s.get(n.Args[2]))
		}
	case ir.OpSlice:
		for j := range d {
			d[j] = bitsAt(a, n.Lo+64*j)
		}
		topMask(d, n.W)
	case ir.OpConcat:
		clear(d)
		pos := n.W
		for _, p := range n.Args {
			pw := m.Node(p).W
			pos -= pw
			orAt(d, s.get(p), pw, pos)
		}
	default:
		var b []uint64
		if len(n.Args) > 1 {
			b = s.get(n.Args[1])
		}
		WideOp(n.Op, d, a, b, m.Node(n.Args[0]).W, n.W)
	}
}

// orAt ors the pw-bit value src into d at bit pos (d's bits there are
// zero).
func orAt(d, src []uint64, pw, pos int) {
	for b := 0; b < pw; b += 64 {
		chunk := bitsAt(src, b)
		if pw-b < 64 {
			chunk &= 1<<uint(pw-b) - 1
		}
		q, r := (pos+b)/64, uint((pos+b)%64)
		d[q] |= chunk << r
		if r != 0 && q+1 < len(d) {
			d[q+1] |= chunk >> (64 - r)
		}
	}
}

// WideOp computes d = op(a, b) over words, least significant first, for
// the operations whose result is a function of their operands' values
// alone (not mux, slice or concatenation): aw is a's width, w the
// result's. Values keep the bits above their width zero, and so does
// WideOp. It is the interpreter's multi-word evaluator, exported for the
// simulators GoSource generates.
func WideOp(op ir.Op, d, a, b []uint64, aw, w int) {
	switch op {
	case ir.OpWire, ir.OpZext:
		clear(d)
		copy(d, a)
	case ir.OpAdd, ir.OpSub:
		var c uint64
		for j := range d {
			if op == ir.OpAdd {
				d[j], c = bits.Add64(a[j], b[j], c)
			} else {
				d[j], c = bits.Sub64(a[j], b[j], c)
			}
		}
	case ir.OpAnd:
		for j := range d {
			d[j] = a[j] & b[j]
		}
	case ir.OpOr:
		for j := range d {
			d[j] = a[j] | b[j]
		}
	case ir.OpXor:
		for j := range d {
			d[j] = a[j] ^ b[j]
		}
	case ir.OpNot:
		for j := range d {
			d[j] = ^a[j]
		}
	case ir.OpEq, ir.OpNe, ir.OpLtU, ir.OpLtS:
		c := cmpU(a, b)
		var r bool
		switch op {
		case ir.OpEq:
			r = c == 0
		case ir.OpNe:
			r = c != 0
		case ir.OpLtU:
			r = c < 0
		default:
			sa, sb := signBit(a, aw), signBit(b, aw)
			r = sa > sb || sa == sb && c < 0
		}
		d[0] = b2u(r)
	case ir.OpSext:
		clear(d)
		copy(d, a)
		if signBit(a, aw) == 1 {
			for bit := aw; bit < w; bit++ {
				d[bit/64] |= 1 << uint(bit%64)
			}
		}
	case ir.OpRedOr, ir.OpRedAnd, ir.OpRedXor:
		ones := 0
		any := false
		for _, x := range a {
			ones += bits.OnesCount64(x)
			any = any || x != 0
		}
		switch op {
		case ir.OpRedOr:
			d[0] = b2u(any)
		case ir.OpRedAnd:
			d[0] = b2u(ones == aw)
		default:
			d[0] = uint64(ones & 1)
		}
	case ir.OpMul:
		clear(d)
		for x := range a {
			var carry uint64
			for y := range b {
				if x+y >= len(d) {
					break
				}
				hi, lo := bits.Mul64(a[x], b[y])
				var c1, c2 uint64
				d[x+y], c1 = bits.Add64(d[x+y], lo, 0)
				d[x+y], c2 = bits.Add64(d[x+y], carry, 0)
				carry = hi + c1 + c2
			}
			if x+len(b) < len(d) {
				d[x+len(b)] += carry
			}
		}
	case ir.OpShl, ir.OpShr, ir.OpSar:
		sh := amount(b, w)
		fill := uint64(0)
		if op == ir.OpSar && signBit(a, w) == 1 {
			fill = ^uint64(0)
		}
		for j := range d {
			switch op {
			case ir.OpShl:
				// bit k of d is bit k-sh of a
				if lo := 64*j - sh; lo >= 0 {
					d[j] = bitsAt(a, lo)
				} else if lo > -64 {
					d[j] = bitsAt(a, 0) << uint(-lo)
				} else {
					d[j] = 0
				}
			default:
				d[j] = bitsAt(a, 64*j+sh)
				// bits that came from beyond a's width take the fill
				if over := 64*j + sh + 64 - w; over > 0 {
					if over >= 64 {
						d[j] = fill
					} else {
						d[j] = d[j]&(^uint64(0)>>uint(over)) | fill<<uint(64-over)
					}
				}
			}
		}
	}
	topMask(d, w)
}
