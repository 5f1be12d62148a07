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

// crcFold advances the register c over the kept bytes of a beat whose
// keep is a prefix (every kept byte before every absent one): the beat is
// taken in chunks of 64, 32, ..., 1 bytes, each chunk applied when its
// last byte is kept and then shifted out. The chunks applied are the
// binary digits of the number of kept bytes, which is returned too (7
// bits).
func crcFold(m *ir.Module, c, data, keep ir.Value) (ir.Value, ir.Value) {
	nb := keep.Width()
	var count []ir.Value
	for chunk := nb; chunk >= 1; chunk /= 2 {
		taken := m.Slice(keep, chunk-1, 1)
		c = m.Mux(taken, crcStep(m, c, m.Slice(data, 0, 8*chunk), chunk), c)
		count = append(count, taken)
		if chunk == nb {
			keep = m.Mux(taken, m.Const(nb, 0), keep)
		} else if chunk > 1 {
			data = m.Mux(taken, m.Zext(m.Slice(data, 8*chunk, 8*(nb-chunk)), 8*nb), data)
			keep = m.Mux(taken, m.Zext(m.Slice(keep, chunk, nb-chunk), nb), keep)
		}
	}
	return c, m.Concat(count...)
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

// appendTrailer makes the output of a stream kernel that passes its input
// through and appends a trailer of tb bytes after the packet's last byte:
// into the last beat when it has room, else into one more beat (the last
// input beat is then stepped twice, with Again). The input's keep must be
// a prefix; n is its count of kept bytes (7 bits, from crcFold). A
// non-zero pre (1 bit) marks a step that only looks at the beat: nothing
// is sent, the beat is kept and the trailer state does not move — a
// kernel that registers something before it can make the trailer uses it
// (pass ir.Value{} for none).
func appendTrailer(s *Step, trailer, n, pre ir.Value, tb int) {
	m, in := s.M, s.In[0]
	nb := in.Keep.Width()
	w := 8 * (nb + tb)
	data := m.Zext(m.And(in.Data, byteMask(m, in.Keep)), w)
	shift := m.Concat(n, m.Const(3, 0)) // n*8
	data = m.Or(data, m.Shl(m.Zext(trailer, w), shift))
	keep := m.Or(m.Zext(in.Keep, nb+tb), m.Shl(m.Const(nb+tb, 1<<tb-1), n))
	spill := m.RedOr(m.Slice(keep, nb, tb)) // the trailer runs into one more beat
	tail := m.Reg("tail", 1, 0)             // stepping the last beat the second time
	m.SetNext(tail, m.Not(tail))
	step := s.Go()
	if pre.Width() != 0 {
		step = m.And(step, m.Not(pre))
	}
	m.SetEnable(tail, m.And(step, m.Or(tail, m.And(in.Last, spill))))
	last := in.Last
	// A last beat whose trailer spills: first its own bytes, not last.
	first := m.And(in.Last, m.And(spill, m.Not(tail)))
	beatData := m.Mux(in.Last, m.Slice(data, 0, 8*nb), in.Data)
	beatKeep := m.Mux(in.Last, m.Slice(keep, 0, nb), in.Keep)
	spillData := m.Zext(m.Slice(data, 8*nb, 8*tb), 8*nb)
	spillKeep := m.Zext(m.Slice(keep, nb, tb), nb)
	s.Out = Beat{
		Data: m.Mux(tail, spillData, beatData),
		Keep: m.Mux(tail, spillKeep, beatKeep),
		Last: m.And(last, m.Not(first)),
	}
	s.Again = first
	if pre.Width() != 0 {
		s.Emit = m.Not(pre)
		s.Again = m.Or(first, pre)
	}
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
		Body: func(s *Step) {
			m, in := s.M, s.In[0]
			reg := m.Reg("crc", 32, crc32cInit)
			c, n := crcFold(m, reg, in.Data, in.Keep)
			m.SetNext(reg, m.Mux(in.Last, m.Const(32, crc32cInit), c))
			m.SetEnable(reg, s.Next())
			if !check {
				appendTrailer(s, m.Xor(c, m.Const(32, crc32cInit)), n, ir.Value{}, tb)
				return
			}
			// The last beat is stepped once more than it would be: the
			// first step only folds it into fin, the next compares fin
			// with the residue. The fold's XOR trees and the compare are
			// then two paths, not one (one cycle per packet; Yosys's abc
			// did not finish the single cone, and it would not meet the
			// port's clock).
			held := m.Reg("held", 1, 0) // the last beat is folded into fin
			pre := m.And(in.Last, m.Not(held))
			m.SetNext(held, m.Not(s.Next()))
			m.SetEnable(held, m.And(s.Go(), in.Last))
			fin := m.Reg("fin", 32, 0)
			m.SetNext(fin, c)
			m.SetEnable(fin, m.And(s.Go(), pre))
			// At least four bytes: a later beat, or a first with four.
			long := m.Or(m.Not(s.First()), m.Slice(in.Keep, 3, 1))
			good := m.And(long, m.Eq(fin, m.Const(32, uint64(residue))))
			appendTrailer(s, m.Zext(m.Not(good), 8), n, pre, tb)
		},
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
