package kernels

import (
	"fmt"

	"onic/hdlgen/ir"
)

// Elem is the type of the elements a kernel's streams carry, packed
// little-endian into the beat: element i of a beat is bits
// [i*Bits+Bits-1 : i*Bits] of tdata (bytes in AXI-Stream order). Floating
// point types are bit patterns; their arithmetic is IR integer operations
// defined once in this package and used by the RTL and the simulator
// alike.
type Elem struct {
	Name   string // "int32", "bf16", ...
	Bits   int    // 8, 16 or 32
	Signed bool   // two's complement integers (and fixed point)
	Float  bool   // an IEEE 754 binary32 or bfloat16 bit pattern
	Frac   int    // fixed point: bits after the binary point (see Fixed)
}

// Fixed is the signed fixed-point type Qm.n (Arm's convention): m
// integer bits including the sign, n fraction bits, m+n of 8, 16 or 32;
// the element x stands for x / 2^n.
func Fixed(m, n int) Elem {
	return Elem{Name: fmt.Sprintf("q%d.%d", m, n), Bits: m + n, Signed: true, Frac: n}
}

// The element types.
var (
	U8    = Elem{Name: "u8", Bits: 8} // bytes, for kernels over a byte stream
	Int8  = Elem{Name: "int8", Bits: 8, Signed: true}
	Int16 = Elem{Name: "int16", Bits: 16, Signed: true}
	Int32 = Elem{Name: "int32", Bits: 32, Signed: true}
	BF16  = Elem{Name: "bf16", Bits: 16, Float: true}
	FP32  = Elem{Name: "fp32", Bits: 32, Float: true}
)

// Bytes is the element's size in bytes.
func (e Elem) Bytes() int { return e.Bits / 8 }

// String returns the element type's name.
func (e Elem) String() string { return e.Name }

// minMax are the most negative and most positive values of a w-bit two's
// complement number, as w-bit patterns.
func minMax(w int) (lo, hi uint64) {
	return 1 << (w - 1), 1<<(w-1) - 1
}

// AddSat is a+b for signed w-bit a and b, saturating at the type's
// limits instead of wrapping: the sum is formed in w+1 bits, and when its
// top two bits differ it did not fit, and the limit on the side of its
// sign is taken.
func AddSat(m *ir.Module, a, b ir.Value) ir.Value {
	w := a.Width()
	s := m.Add(m.Sext(a, w+1), m.Sext(b, w+1))
	sign, top := m.Slice(s, w, 1), m.Slice(s, w-1, 1)
	lo, hi := minMax(w)
	limit := m.Mux(sign, m.Const(w, lo), m.Const(w, hi))
	return m.Mux(m.Ne(sign, top), limit, m.Slice(s, 0, w))
}

// MaxS is the larger of signed a and b; MinS the smaller.
func MaxS(m *ir.Module, a, b ir.Value) ir.Value { return m.Mux(m.LtS(a, b), b, a) }

// MinS is the smaller of signed a and b.
func MinS(m *ir.Module, a, b ir.Value) ir.Value { return m.Mux(m.LtS(a, b), a, b) }

// FP32ToBF16 converts an IEEE 754 binary32 bit pattern to bfloat16 with
// round-to-nearest-even: add 0x7FFF plus the lowest kept bit, keep the top
// 16 bits. Infinities and values that round past the largest finite
// bfloat16 come out as infinity by the same carry; a NaN stays a NaN (its
// payload's top bits kept, the quiet bit set) instead of rounding into
// infinity. Subnormals round like any other value.
func FP32ToBF16(m *ir.Module, x ir.Value) ir.Value {
	exp, mant := m.Slice(x, 23, 8), m.Slice(x, 0, 23)
	nan := m.And(m.Eq(exp, m.Const(8, 0xFF)), m.Ne(mant, m.Const(23, 0)))
	bias := m.Add(m.Const(32, 0x7FFF), m.Zext(m.Slice(x, 16, 1), 32))
	rounded := m.Slice(m.Add(x, bias), 16, 16)
	quiet := m.Or(m.Slice(x, 16, 16), m.Const(16, 0x0040))
	return m.Mux(nan, quiet, rounded)
}

// BF16ToFP32 widens a bfloat16 bit pattern to binary32: exact, the low
// 16 bits zero.
func BF16ToFP32(m *ir.Module, x ir.Value) ir.Value { return m.Concat(x, m.Const(16, 0)) }

// check says whether a value has the element's width.
func (e Elem) check(v ir.Value) error {
	if v.Width() != e.Bits {
		return fmt.Errorf("the value returned is %d bits; an %s element is %d", v.Width(), e.Name, e.Bits)
	}
	return nil
}
