package kernels

import (
	"math"
	"math/rand/v2"

	"onic/hdlgen/ir"
)

// The quantiser of the library: bf16 to MXINT8, the 8-bit integer format
// of the Open Compute Project's Microscaling (MX) specification v1.0. We
// chose a quantiser over a streaming top-k because it is what ML users
// put on the wire: it halves the bytes of bf16 gradients and activations
// at a bounded, well-understood error, the format is standardised and
// read natively by recent accelerators, and it is stateless per block so
// it runs at line rate; a top-k needs the whole tensor's order (state
// across the stream, a data-dependent output) and is usually paired with
// error feedback kept on the worker.
//
// A block is the 32 bf16 elements of a 64-byte beat; it leaves as 33
// bytes: a shared scale (E8M0: 2^(s-127)) and 32 int8 elements standing
// for q/64 * scale. The scale is the exponent of the block's largest
// magnitude, so the elements are that magnitude's binade in 1.6 fixed
// point; elements are rounded to nearest even and saturated to ±127. A
// block holding an infinity or NaN gets the NaN scale 0xFF and zero
// elements. One deviation from the letter of MX: a block whose largest
// magnitude is subnormal (or zero) gets scale 2^-126, not the exponent of
// its leading bit — those values are below bf16's normal range, and it
// saves a leading-zero counter per lane. A partial last beat makes a
// partial block: the scale byte, then its elements.
func init() {
	MustRegister(&Kernel{Name: "quantize-mxint8", Version: "1.0.0",
		Doc:    "quantise bf16 to MXINT8 (OCP Microscaling): 32 elements share a power-of-two scale; 64 bytes in, 33 out",
		Params: []Param{{"block", "32"}},
		In:     BF16, Out: U8, Lanes: 32, OutLanes: 33, Inputs: 1,
		Body:      mxint8Body,
		RefPacket: mxint8Ref,
		Sample:    mxint8Sample,
	})
}

// mxint8Body quantises one beat: the largest exponent over the present
// lanes (a subnormal counting as exponent 1, without its implicit bit),
// then each lane's 8-bit significand shifted right by how far its
// exponent is below that, plus one, rounded to nearest even. Five
// pipeline stages (in one cycle it was 108 LUT levels): the first three
// and then the last two levels of the tree of compares that finds the
// largest exponent; each lane's shift amount; the shift with its guard
// and sticky bits; the rounding, saturation and sign.
func mxint8Body(s *Step) {
	m, in := s.M, s.In[0]
	const lanes = 32
	type lane struct{ sign, exp, sig, present ir.Value }
	ls := make([]lane, lanes)
	gated := make([]ir.Value, lanes)
	for l := range ls {
		x := m.Slice(in.Data, 16*l, 16)
		e := m.Slice(x, 7, 8)
		normal := m.Ne(e, m.Const(8, 0))
		present := m.Slice(in.Keep, 2*l, 1)
		ee := m.Mux(normal, e, m.Const(8, 1))
		ls[l] = lane{sign: m.Slice(x, 15, 1), exp: ee, sig: m.Concat(normal, m.Slice(x, 0, 7)), present: present}
		gated[l] = m.Mux(present, ee, m.Const(8, 0))
	}
	maxima := func(vs []ir.Value, levels int) []ir.Value {
		for range levels {
			var next []ir.Value
			for i := 0; i+1 < len(vs); i += 2 {
				next = append(next, m.Mux(m.LtU(vs[i], vs[i+1]), vs[i+1], vs[i]))
			}
			vs = next
		}
		return vs
	}
	// carry passes the lanes' fields and the beat's end into stage k.
	last := in.Last
	carry := func(k int) {
		last = s.Stage(k, last)
		for l := range ls {
			f := s.Stage(k, m.Concat(ls[l].present, ls[l].sign, ls[l].exp, ls[l].sig))
			ls[l] = lane{present: m.Slice(f, 17, 1), sign: m.Slice(f, 16, 1), exp: m.Slice(f, 8, 8), sig: m.Slice(f, 0, 8)}
		}
	}
	part := maxima(gated, 3) // 32 -> 4
	for i := range part {
		part[i] = s.Stage(1, part[i])
	}
	carry(1)
	top := s.Stage(2, maxima(part, 2)[0]) // the block's exponent
	carry(2)
	// Stage 4: each lane shifted right by dc, with its guard bit
	// (the last bit shifted out) and sticky bit (any below it).
	type shifted struct{ q0, guard, sticky, sign, present ir.Value }
	sh := make([]shifted, lanes)
	// Stage 3: each lane's shift, dc (1..9): one more than how far its
	// exponent is below the block's.
	dcs := make([]ir.Value, lanes)
	for l := range ls {
		d := m.Add(m.Sub(m.Zext(top, 9), m.Zext(ls[l].exp, 9)), m.Const(9, 1))
		dcs[l] = s.Stage(3, m.Mux(m.LtU(d, m.Const(9, 10)), m.Slice(d, 0, 4), m.Const(4, 9)))
	}
	top = s.Stage(3, top)
	carry(3)
	for l := range ls {
		ln, dc := ls[l], dcs[l]
		sig := m.Zext(ln.sig, 16)
		q0 := m.Slice(m.Shr(sig, dc), 0, 8)
		g1 := m.Sub(dc, m.Const(4, 1))
		guard := m.Slice(m.Shr(sig, g1), 0, 1)
		below := m.Sub(m.Shl(m.Const(16, 1), g1), m.Const(16, 1)) // bits under the guard
		sticky := m.RedOr(m.And(sig, below))
		f := s.Stage(4, m.Concat(ln.present, ln.sign, guard, sticky, q0))
		sh[l] = shifted{present: m.Slice(f, 11, 1), sign: m.Slice(f, 10, 1), guard: m.Slice(f, 9, 1), sticky: m.Slice(f, 8, 1), q0: m.Slice(f, 0, 8)}
	}
	top3, last3 := s.Stage(4, top), s.Stage(4, last)
	special := m.Eq(top3, m.Const(8, 0xFF))
	data := []ir.Value{}
	keep := []ir.Value{}
	for l := lanes - 1; l >= 0; l-- {
		ln := sh[l]
		// Round to nearest, ties to even.
		up := m.And(ln.guard, m.Or(ln.sticky, m.Slice(ln.q0, 0, 1)))
		q := m.Add(m.Zext(ln.q0, 9), m.Zext(up, 9))
		qc := m.Mux(m.LtU(q, m.Const(9, 128)), m.Slice(q, 0, 8), m.Const(8, 127))
		v := m.Mux(ln.sign, m.Sub(m.Const(8, 0), qc), qc)
		data = append(data, m.Mux(special, m.Const(8, 0), v))
		keep = append(keep, ln.present)
	}
	data = append(data, top3)
	keep = append(keep, sh[0].present)
	s.Out = Beat{Data: m.Concat(data...), Keep: m.Concat(keep...), Last: last3}
}

// mxint8Ref is the quantiser by arithmetic: per block of up to 32
// elements, the scale exponent X = floor(log2(largest magnitude)), at
// least -126; elements round(v * 2^(6-X)) to nearest even, clamped to
// ±127.
func mxint8Ref(in [][]byte) ([]byte, error) {
	p := in[0]
	n := len(p) / 2
	var out []byte
	for b := 0; b < n; b += 32 {
		var vs []float64
		for e := b; e < min(b+32, n); e++ {
			vs = append(vs, float64(math.Float32frombits(uint32(p[2*e])<<16|uint32(p[2*e+1])<<24)))
		}
		amax, special := 0.0, false
		for _, v := range vs {
			special = special || math.IsNaN(v) || math.IsInf(v, 0)
			amax = math.Max(amax, math.Abs(v))
		}
		if special {
			out = append(out, 0xFF)
			out = append(out, make([]byte, len(vs))...)
			continue
		}
		x := -126
		if amax != 0 {
			_, e := math.Frexp(amax) // amax = f * 2^e, f in [0.5, 1)
			x = max(e-1, -126)
		}
		out = append(out, byte(x+127))
		for _, v := range vs {
			q := math.RoundToEven(math.Ldexp(v, 6-x))
			out = append(out, byte(int8(math.Max(-127, math.Min(127, q)))))
		}
	}
	return out, nil
}

// mxint8Sample makes bf16 packets whose blocks mix magnitudes within a
// dozen binades of each other (random bit patterns would put almost every
// element far below its block's largest), with zeros, subnormals,
// infinities and NaNs now and then.
func mxint8Sample(rng *rand.Rand, n int) [][]byte {
	var p []byte
	ed := edges(BF16)
	base := 0
	for e := range n {
		if e%32 == 0 {
			base = rng.IntN(256)
		}
		x := uint64(rng.Uint32()&0x807F) | uint64(max(base-rng.IntN(12), 0))<<7
		if rng.IntN(24) == 0 {
			x = ed[rng.IntN(len(ed))]
		}
		p = putLE(p, x, 2)
	}
	return [][]byte{p}
}
