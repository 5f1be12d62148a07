package kernels

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"

	"onic/hdlgen/ir"
)

// CRC-32C (Castagnoli), the checksum of iSCSI, SCTP, ext4 and NVMe/TCP's
// data digest: reflected polynomial 0x82F63B78, register preset to all
// ones, result inverted, appended least significant byte first.
const (
	crc32cPoly = 0x82F63B78
	crc32cInit = 0xFFFF_FFFF
)

// crcBytes advances a reflected CRC-32C register over b, bit by bit: the
// definition the hardware's XOR matrices are derived from (and tested
// against hash/crc32).
func crcBytes(c uint32, b []byte) uint32 {
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crc32cPoly
			} else {
				c >>= 1
			}
		}
	}
	return c
}

// crcMatrix is the CRC register after n bytes as a linear function of the
// register before and the bytes: for each result bit, the mask of input
// bits (register in bits 0-31, byte i's bits at 32+8i) whose XOR it is.
func crcMatrix(n int) [32][]uint64 {
	w := 32 + 8*n
	var masks [32][]uint64
	for j := range masks {
		masks[j] = make([]uint64, (w+63)/64)
	}
	data := make([]byte, n)
	for i := range w {
		var c uint32
		clear(data)
		if i < 32 {
			c = 1 << i
		} else {
			data[(i-32)/8] = 1 << ((i - 32) % 8)
		}
		c = crcBytes(c, data)
		for j := range 32 {
			if c>>j&1 == 1 {
				masks[j][i/64] |= 1 << (i % 64)
			}
		}
	}
	return masks
}

// crcStep is the register c advanced over the n bytes of data (8n bits),
// one XOR tree per result bit.
func crcStep(m *ir.Module, c, data ir.Value, n int) ir.Value {
	in := m.Concat(data, c)
	masks := crcMatrix(n)
	bits := make([]ir.Value, 32)
	for j := range 32 {
		bits[31-j] = m.RedXor(m.And(in, m.ConstWords(in.Width(), masks[j])))
	}
	return m.Concat(bits...)
}

// byteMask widens a keep mask to a mask of data bits.
func byteMask(m *ir.Module, keep ir.Value) ir.Value {
	var bits []ir.Value
	for i := keep.Width() - 1; i >= 0; i-- {
		b := m.Slice(keep, i, 1)
		bits = append(bits, m.Concat(b, b, b, b, b, b, b, b))
	}
	return m.Concat(bits...)
}

// crcBody is the CRC kernels' body, pipelined so that no cycle folds more
// than a chunk or two of a beat (in one cycle the fold of a partial beat
// was 19 LUT levels).
//
// Stage 0 keeps the CRC register across a packet's full beats: one
// 64-byte step a cycle, the only feedback loop. Every beat also goes down
// the pipeline with the register as it was before the beat, where the
// fold of its kept bytes (taken in chunks of 64, 32, ..., 1 bytes, each
// applied when its last byte is kept and then shifted out; at most two
// chunks per stage) gives the register after it. For a packet's last beat
// that is the CRC: the trailer, or, for a check, the comparison with the
// residue, a stage later. A partial beat that is not the last (rare: a
// producer's choice) cannot be stepped in one cycle: the body holds its
// input until that beat's fold comes out of the pipeline and loads it into
// the register. Stage 0 also decides the trailer's steps (a last beat
// with no room for it is stepped twice), from the count of kept bytes.
func crcBody(s *Step, check bool, tb int, residue uint32) {
	m, in := s.M, s.In[0]
	nb := in.Keep.Width()
	reg := m.Reg("crc", 32, crc32cInit)
	wait := m.Reg("crc_wait", 1, 0) // a partial beat's fold is on its way back
	s.Hold = wait
	full := m.Slice(in.Keep, nb-1, 1)
	partial := m.And(m.Not(full), m.Not(in.Last)) // a partial beat, not the last
	n := keepCount(m, in.Keep)
	// The trailer's steps: a last beat whose trailer spills is stepped
	// twice, first for its own bytes (Again), then for the spill.
	spill := m.LtU(m.Const(8, uint64(nb-tb)), m.Zext(n, 8))
	tail := m.Reg("tail", 1, 0)
	m.SetNext(tail, m.Not(tail))
	m.SetEnable(tail, m.And(s.Go(), m.Or(tail, m.And(in.Last, spill))))
	first := m.And(in.Last, m.And(spill, m.Not(tail)))
	s.Again = first
	// What travels with the beat: the register before it, the beat, and
	// the decisions made for it here.
	c, data, keep, last := reg, in.Data, in.Keep, in.Last
	ctl := m.Concat(partial, tail, first, s.First(), n)
	k := 0
	next := func() {
		k++
		c, data, keep, last, ctl = s.Stage(k, c), s.Stage(k, data), s.Stage(k, keep), s.Stage(k, last), s.Stage(k, ctl)
	}
	next()
	fold, fdata, fkeep := c, data, keep
	for i, chunk := 0, nb; chunk >= 1; i, chunk = i+1, chunk/2 {
		if i == 1 || i == 3 || i == 5 { // the 64, 32+16, 8+4, 2+1-byte chunks per stage
			k++
			fold, fdata, fkeep = s.Stage(k, fold), s.Stage(k, fdata), s.Stage(k, fkeep)
			data, keep, last, ctl = s.Stage(k, data), s.Stage(k, keep), s.Stage(k, last), s.Stage(k, ctl)
		}
		taken := m.Slice(fkeep, chunk-1, 1)
		fold = m.Mux(taken, crcStep(m, fold, m.Slice(fdata, 0, 8*chunk), chunk), fold)
		if chunk == nb {
			fkeep = m.Mux(taken, m.Const(nb, 0), fkeep)
		} else if chunk > 1 {
			fdata = m.Mux(taken, m.Zext(m.Slice(fdata, 8*chunk, 8*(nb-chunk)), 8*nb), fdata)
			fkeep = m.Mux(taken, m.Zext(m.Slice(fkeep, chunk, nb-chunk), nb), fkeep)
		}
	}
	next()
	fold = s.Stage(k, fold) // the register after the beat
	// A partial beat that is not the last: its fold is the register's
	// next value, loaded as the beat leaves the last stage.
	cTail, cFirst, cPktFirst := m.Slice(ctl, 9, 1), m.Slice(ctl, 8, 1), m.Slice(ctl, 7, 1)
	cn := m.Slice(ctl, 0, 7)
	load := m.And(m.And(s.Live(k+1), s.Advance()), m.Slice(s.Stage(k+1, ctl), 10, 1))
	step := crcStep(m, reg, in.Data, nb)
	m.SetNext(reg, m.Mux(load, s.Stage(k+1, fold), m.Mux(in.Last, m.Const(32, crc32cInit), step)))
	m.SetEnable(reg, m.Or(load, m.And(s.Next(), m.Not(partial))))
	m.SetNext(wait, m.Not(load))
	m.SetEnable(wait, m.Or(load, m.And(s.Next(), partial)))
	var trailer ir.Value
	if check {
		// At least four bytes: a later beat, or a first with four.
		long := m.Or(m.Not(cPktFirst), m.Slice(keep, 3, 1))
		good := m.And(long, m.Eq(fold, m.Const(32, uint64(residue))))
		trailer = m.Zext(m.Not(good), 8)
	} else {
		trailer = m.Xor(fold, m.Const(32, crc32cInit))
	}
	// The last stage: the beat with the trailer after its kept bytes.
	k++
	trailer, cn, cTail, cFirst = s.Stage(k, trailer), s.Stage(k, cn), s.Stage(k, cTail), s.Stage(k, cFirst)
	data, keep, last = s.Stage(k, data), s.Stage(k, keep), s.Stage(k, last)
	w := 8 * (nb + tb)
	all := m.Or(m.Zext(m.And(data, byteMask(m, keep)), w), m.Shl(m.Zext(trailer, w), m.Concat(cn, m.Const(3, 0))))
	allKeep := m.Or(m.Zext(keep, nb+tb), m.Shl(m.Const(nb+tb, 1<<tb-1), cn))
	beatData := m.Mux(last, m.Slice(all, 0, 8*nb), data)
	beatKeep := m.Mux(last, m.Slice(allKeep, 0, nb), keep)
	spillData := m.Zext(m.Slice(all, 8*nb, 8*tb), 8*nb)
	spillKeep := m.Zext(m.Slice(allKeep, nb, tb), nb)
	s.Out = Beat{
		Data: m.Mux(cTail, spillData, beatData),
		Keep: m.Mux(cTail, spillKeep, beatKeep),
		Last: m.And(last, m.Not(cFirst)),
	}
}

// keepCount is the number of kept bytes of a prefix keep mask (7 bits
// for 64 bytes), by the same chunks as the fold: the chunks taken are its
// binary digits.
func keepCount(m *ir.Module, keep ir.Value) ir.Value {
	nb := keep.Width()
	var count []ir.Value
	for chunk := nb; chunk >= 1; chunk /= 2 {
		taken := m.Slice(keep, chunk-1, 1)
		count = append(count, taken)
		if chunk == nb {
			keep = m.Mux(taken, m.Const(nb, 0), keep)
		} else if chunk > 1 {
			keep = m.Mux(taken, m.Zext(m.Slice(keep, chunk, nb-chunk), nb), keep)
		}
	}
	return m.Concat(count...)
}

// CRC32C makes a kernel over a byte stream (one input, beats of beat
// bytes, kept bytes a prefix of each beat) that either appends the
// packet's CRC-32C after its last byte (check false), or checks a packet
// that ends in its CRC-32C and appends one verdict byte (check true): 0
// when the CRC is right, 1 when it is wrong or the packet is shorter than
// a CRC. The data passes through unchanged; the result costs one extra
// beat only when the last beat has no room for it.
func CRC32C(check bool, beat int) *Kernel {
	name, doc, tb := "crc32c-append", "append the packet's CRC-32C (iSCSI, NVMe/TCP digest)", 4
	if check {
		name, doc, tb = "crc32c-check", "check the CRC-32C at the packet's end and append a verdict byte (0 good, 1 bad)", 1
	}
	// The register after a packet and its own CRC: the same for every
	// packet, so a check compares with it.
	residue := crcBytes(crc32cInit, binary.LittleEndian.AppendUint32(nil, crc32.Checksum(nil, crc32.MakeTable(crc32.Castagnoli))))
	return &Kernel{Name: name, Version: "1.0.0", Doc: doc,
		Params: []Param{{"beat_bytes", fmt.Sprint(beat)}},
		In:     U8, Lanes: beat, Inputs: 1,
		Body: func(s *Step) { crcBody(s, check, tb, residue) },
		RefPacket: func(in [][]byte) ([]byte, error) {
			p := in[0]
			out := append([]byte{}, p...)
			tab := crc32.MakeTable(crc32.Castagnoli)
			if !check {
				return binary.LittleEndian.AppendUint32(out, crc32.Checksum(p, tab)), nil
			}
			if len(p) >= 4 && crc32.Checksum(p[:len(p)-4], tab) == binary.LittleEndian.Uint32(p[len(p)-4:]) {
				return append(out, 0), nil
			}
			return append(out, 1), nil
		},
		Sample: func(rng *rand.Rand, n int) [][]byte {
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			if check && n >= 4 && rng.IntN(4) != 0 { // mostly right CRCs, some flipped bits
				binary.LittleEndian.PutUint32(p[n-4:], crc32.Checksum(p[:n-4], crc32.MakeTable(crc32.Castagnoli)))
				if rng.IntN(3) == 0 {
					p[rng.IntN(n)] ^= 1 << rng.IntN(8)
				}
			}
			return [][]byte{p}
		},
	}
}
