package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"onic/hdlgen/ir"
)

// BlockSum makes the elementwise sum of two streams of 32-bit fixed-point
// blocks, the way in-network aggregation carries gradients (SwitchML,
// ATP: integers that the workers scale from floats, a block at a time).
// A block is a 64-byte beat: lane 0 holds the block's signed exponent E,
// lanes 1-15 fixed-point elements of type q, each standing for
// x / 2^q.Frac * 2^E. Two blocks with exponents Ea and Eb are aligned to
// the larger exponent (the other's elements shifted right arithmetically,
// by at most 31 bits: rounding toward minus infinity), summed saturating,
// and sent with that exponent; so workers need not agree on a scale.
func BlockSum(q Elem) (*Kernel, error) {
	name := "sum-" + q.Name + "-block"
	if q.Bits != 32 || !q.Signed {
		return nil, fmt.Errorf("kernel %s: in: element type %s is not a 32-bit fixed-point type", name, q)
	}
	const lanes = 16
	return &Kernel{Name: name, Version: "1.0.0",
		Doc:    "sum two streams of " + q.Name + " blocks with a per-block exponent in lane 0, aligning to the larger (allreduce of scaled gradients)",
		Params: []Param{{"element", q.Name}, {"block_elements", fmt.Sprint(lanes - 1)}},
		In:     q, Lanes: lanes, Inputs: 2,
		Body: func(s *Step) {
			// Two stages: the exponents' compare and the shift amounts,
			// registered with the beats; then the aligning shifts and the
			// saturating sums (one cycle for both was 24 LUT levels).
			m := s.M
			lane := func(b ir.Value, l int) ir.Value { return m.Slice(b, 32*l, 32) }
			ea, eb := lane(s.In[0].Data, 0), lane(s.In[1].Data, 0)
			aBig := m.Not(m.LtS(ea, eb))
			d := m.Mux(aBig, m.Sub(m.Sext(ea, 33), m.Sext(eb, 33)), m.Sub(m.Sext(eb, 33), m.Sext(ea, 33)))
			sh := m.Mux(m.LtU(d, m.Const(33, 31)), m.Slice(d, 0, 5), m.Const(5, 31))
			zero := m.Const(5, 0)
			shA, shB := s.Stage(1, m.Mux(aBig, zero, sh)), s.Stage(1, m.Mux(aBig, sh, zero))
			e := s.Stage(1, m.Mux(aBig, ea, eb))
			a, b := s.Stage(1, s.In[0].Data), s.Stage(1, s.In[1].Data)
			present := s.Stage(1, m.And(s.In[0].Keep, s.In[1].Keep))
			var data, keep []ir.Value
			for l := lanes - 1; l >= 0; l-- {
				v := e
				if l > 0 {
					v = AddSat(m, m.Sar(lane(a, l), shA), m.Sar(lane(b, l), shB))
				}
				data = append(data, v)
				p := m.Slice(present, 4*l, 1)
				keep = append(keep, p, p, p, p)
			}
			s.Out = Beat{Data: m.Concat(data...), Keep: m.Concat(keep...), Last: s.Stage(1, s.In[0].Last)}
		},
		RefPacket: func(in [][]byte) ([]byte, error) {
			a, b := in[0], in[1]
			for i, p := range in {
				if len(p)%4 != 0 {
					return nil, fmt.Errorf("kernel %s: input %d: %d bytes is not a whole number of %s elements", name, i, len(p), q)
				}
			}
			n := min(len(a), len(b)) / 4
			var out []byte
			var ea, eb int64
			for e := range n {
				x := int64(int32(binary.LittleEndian.Uint32(a[4*e:])))
				y := int64(int32(binary.LittleEndian.Uint32(b[4*e:])))
				if e%lanes == 0 { // a block's exponent
					ea, eb = x, y
					out = binary.LittleEndian.AppendUint32(out, uint32(max(ea, eb)))
					continue
				}
				if ea >= eb {
					y >>= min(ea-eb, 31)
				} else {
					x >>= min(eb-ea, 31)
				}
				out = binary.LittleEndian.AppendUint32(out, uint32(min(max(x+y, -1<<31), 1<<31-1)))
			}
			return out, nil
		},
		Sample: func(rng *rand.Rand, n int) [][]byte {
			// Exponents near each other (and sometimes far apart, or the
			// limits), elements random and edge values.
			var in [][]byte
			for range 2 {
				p := packet(rng, q, n)
				for e := 0; e < n; e += lanes {
					x := uint64(uint32(int32(rng.IntN(17) - 8)))
					if rng.IntN(8) == 0 {
						x = edges(Int32)[rng.IntN(len(edges(Int32)))]
					}
					binary.LittleEndian.PutUint32(p[4*e:], uint32(x))
				}
				in = append(in, p)
			}
			return in
		},
	}, nil
}

// Scale makes the elementwise product of an int32 stream and a constant
// factor in Q16.16 (factor/65536), rounded to nearest with ties toward
// plus infinity, and saturated to int32: the product is formed in 64 bits
// from one 32x32 unsigned multiply corrected for the signs.
func Scale(factor int32) *Kernel {
	c := uint64(uint32(factor))
	return &Kernel{Name: "scale-int32", Version: "1.0.0",
		Doc:    fmt.Sprintf("multiply int32 elements by %g (Q16.16 %#x), rounding to nearest, saturating", float64(factor)/65536, uint32(factor)),
		Params: []Param{{"factor_q16_16", fmt.Sprintf("%#x", uint32(factor))}},
		In:     Int32, Lanes: 16, Inputs: 1,
		// Four stages: the 16x16-bit partial products, each one DSP
		// slice's multiply, registered; their sum; the signed correction
		// and rounding; the saturation. (In one cycle it was 132 MHz by
		// the estimate, the 32x32 multiply a chain of DSP slices.)
		Body: func(s *Step) {
			m, in := s.M, s.In[0]
			const lanes = 16
			var data []ir.Value
			keep, last := in.Keep, in.Last
			for k := 1; k <= 4; k++ {
				keep, last = s.Stage(k, keep), s.Stage(k, last)
			}
			for l := lanes - 1; l >= 0; l-- {
				a := m.Slice(in.Data, 32*l, 32)
				// a*c unsigned, in 64 bits, from four 16x16 products.
				var parts []ir.Value
				for i := range 2 {
					for j := range 2 {
						cj := c >> (16 * j) & 0xFFFF
						if cj == 0 {
							continue
						}
						prod := s.Stage(1, m.Mul(m.Zext(m.Slice(a, 16*i, 16), 32), m.Const(32, cj)))
						parts = append(parts, m.Shl(m.Zext(prod, 64), m.Const(6, uint64(16*(i+j)))))
					}
				}
				p := m.Const(64, 0)
				for _, pt := range parts {
					p = m.Add(p, pt)
				}
				p = s.Stage(2, p)
				a2 := s.Stage(2, s.Stage(1, a))
				// Signed: subtract c*2^32 when a < 0, a*2^32 when c < 0.
				p = m.Sub(p, m.Mux(m.Slice(a2, 31, 1), m.Const(64, c<<32), m.Const(64, 0)))
				if factor < 0 {
					p = m.Sub(p, m.Concat(a2, m.Const(32, 0)))
				}
				r := s.Stage(3, m.SarC(m.Add(p, m.Const(64, 1<<15)), 16))
				// Fits in int32 when bits 63..31 are all the same.
				top := m.Slice(r, 31, 33)
				fits := s.Stage(4, m.Or(m.RedAnd(top), m.Not(m.RedOr(top))))
				r4 := s.Stage(4, m.Concat(m.Slice(r, 63, 1), m.Slice(r, 0, 32)))
				limit := m.Mux(m.Slice(r4, 32, 1), m.Const(32, 1<<31), m.Const(32, 1<<31-1))
				data = append(data, m.Mux(fits, m.Slice(r4, 0, 32), limit))
			}
			s.Out = Beat{Data: m.Concat(data...), Keep: keep, Last: last}
		},
		RefPacket: func(in [][]byte) ([]byte, error) {
			if len(in[0])%4 != 0 {
				return nil, fmt.Errorf("kernel scale-int32: %d bytes is not a whole number of int32 elements", len(in[0]))
			}
			var out []byte
			for i := 0; i < len(in[0]); i += 4 {
				p := int64(int32(binary.LittleEndian.Uint32(in[0][i:]))) * int64(factor)
				r := (p + 1<<15) >> 16
				out = binary.LittleEndian.AppendUint32(out, uint32(int32(min(max(r, -1<<31), 1<<31-1))))
			}
			return out, nil
		},
	}
}
