package kernels

import (
	"math"

	"onic/hdlgen/ir"
)

// The built-in elementwise kernels. Beats are 512 bits on the input side,
// the width of the manager's data path.
func init() {
	MustRegister(CRC32C(false, 64), CRC32C(true, 64), must(Filter(DefaultFilter, 64)),
		must(BlockSum(Fixed(8, 24))), Scale(0x18000), must(Histogram(DefaultHist, 64)))
	MustRegister(
		&Kernel{Name: "sum-int32", Version: "1.0.0", Doc: "elementwise sum of two int32 streams, wrapping (an allreduce step across the two ports)",
			In: Int32, Lanes: 16, Inputs: 2,
			Lane: func(m *ir.Module, in []ir.Value) ir.Value { return m.Add(in[0], in[1]) },
			Ref:  func(in []uint64) uint64 { return uint64(uint32(int32(in[0]) + int32(in[1]))) }},
		satSum(Int16, 32), satSum(Int8, 64),
		&Kernel{Name: "max-int32", Version: "1.0.0", Doc: "elementwise maximum of two int32 streams",
			In: Int32, Lanes: 16, Inputs: 2,
			Lane: func(m *ir.Module, in []ir.Value) ir.Value { return MaxS(m, in[0], in[1]) },
			Ref:  func(in []uint64) uint64 { return uint64(uint32(max(int32(in[0]), int32(in[1])))) }},
		&Kernel{Name: "min-int32", Version: "1.0.0", Doc: "elementwise minimum of two int32 streams",
			In: Int32, Lanes: 16, Inputs: 2,
			Lane: func(m *ir.Module, in []ir.Value) ir.Value { return MinS(m, in[0], in[1]) },
			Ref:  func(in []uint64) uint64 { return uint64(uint32(min(int32(in[0]), int32(in[1])))) }},
		&Kernel{Name: "fp32-to-bf16", Version: "1.0.0", Doc: "convert fp32 to bf16, round to nearest even, NaN kept a (quiet) NaN",
			In: FP32, Out: BF16, Lanes: 16, Inputs: 1,
			Lane: func(m *ir.Module, in []ir.Value) ir.Value { return FP32ToBF16(m, in[0]) },
			Ref:  func(in []uint64) uint64 { return uint64(refBF16(uint32(in[0]))) }},
		&Kernel{Name: "bf16-to-fp32", Version: "1.0.0", Doc: "widen bf16 to fp32 (exact)",
			In: BF16, Out: FP32, Lanes: 32, Inputs: 1,
			Lane: func(m *ir.Module, in []ir.Value) ir.Value { return BF16ToFP32(m, in[0]) },
			Ref: func(in []uint64) uint64 {
				// Through float64 and back: exact for every bf16, NaNs
				// included (their payload sits in the kept bits).
				f := math.Float32frombits(uint32(in[0]) << 16)
				if f != f {
					return uint64(uint32(in[0]) << 16)
				}
				return uint64(math.Float32bits(float32(float64(f))))
			}},
	)
}

// DefaultFilter is the library's filter: 16-byte records (a timestamp
// and a reading, say) of which those whose 32-bit reading at offset 8 is
// at least 2^31 pass.
var DefaultFilter = FilterSpec{Field: Field{Record: 16, Offset: 8, Width: 4}, Op: "ge", Value: 0x8000_0000}

// DefaultHist is the library's histogram: 16-byte records counted into
// 256 bins by the top byte of the 16-bit field at offset 8.
var DefaultHist = HistSpec{Field: Field{Record: 16, Offset: 8, Width: 2}, Shift: 8, Bins: 256}

// must is k, for library kernels whose parameters are known good.
func must(k *Kernel, err error) *Kernel {
	if err != nil {
		panic(err)
	}
	return k
}

// satSum is the saturating sum of two streams of e, lanes to a beat.
func satSum(e Elem, lanes int) *Kernel {
	lo, hi := -int64(1)<<(e.Bits-1), int64(1)<<(e.Bits-1)-1
	mask := uint64(1)<<e.Bits - 1
	signed := func(v uint64) int64 { return int64(v<<(64-e.Bits)) >> (64 - e.Bits) }
	return &Kernel{Name: "sum-" + e.Name + "-sat", Version: "1.0.0",
		Doc: "elementwise sum of two " + e.Name + " streams, saturating at the type's limits",
		In:  e, Lanes: lanes, Inputs: 2,
		Lane: func(m *ir.Module, in []ir.Value) ir.Value { return AddSat(m, in[0], in[1]) },
		Ref: func(in []uint64) uint64 {
			return uint64(min(max(signed(in[0])+signed(in[1]), lo), hi)) & mask
		}}
}

// refBF16 is the reference fp32 -> bf16 conversion, by arithmetic rather
// than by bits: the value is rounded in float64 (which holds every fp32
// exactly) to a multiple of the bf16 quantum at its magnitude — 2^(e-7)
// for a normal number with exponent e, 2^-133 below 2^-126, where bf16
// is subnormal — with ties to even, and what does not fit becomes
// infinity. NaNs are kept NaNs with the quiet bit set.
func refBF16(x uint32) uint16 {
	f := float64(math.Float32frombits(x))
	switch {
	case math.IsNaN(f):
		return uint16(x>>16) | 0x0040
	case math.IsInf(f, 0) || f == 0:
		return uint16(x >> 16)
	}
	q := math.Ldexp(1, -133)
	if a := math.Abs(f); a >= math.Ldexp(1, -126) {
		_, e := math.Frexp(a) // a = frac * 2^e, frac in [0.5, 1)
		q = math.Ldexp(1, e-1-7)
	}
	r := math.RoundToEven(f/q) * q
	if math.Abs(r) >= math.Ldexp(1, 128) {
		return uint16(math.Float32bits(float32(math.Copysign(math.Inf(1), f))) >> 16)
	}
	bits := math.Float32bits(float32(r))
	if r == 0 {
		bits = x & 0x8000_0000 // a value rounded to zero keeps its sign
	}
	return uint16(bits >> 16)
}
