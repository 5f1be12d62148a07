// Package tlpstim makes stimulus for tests of the generated TLP
// pipelines: random TLPs as an optical port delivers them, and TLPs cut
// into beats of the stream the manager, the port pipeline, the link layer
// and the card pass TLPs on (a 128-bit header on every beat, 512 bits of
// data from byte 0, a keep bit per DW, start and end of packet).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package tlpstim

import (
	"encoding/binary"
	"math/rand/v2"

	"onic/tlp"
)

// Beat is one beat of a TLP on the stream.
type Beat struct {
	Hdr      []uint64 // two words, DW0 of the header on top
	Data     []uint64 // eight words
	Keep     uint64   // a bit per DW of Data
	SOP, EOP bool
}

// Beats cuts x into beats: the header on each, the payload 64 bytes a
// beat (a header-only TLP is one beat with nothing kept).
func Beats(x *tlp.TLP) ([]Beat, error) {
	b, err := x.MarshalBinary()
	if err != nil {
		return nil, err
	}
	hl := x.HeaderLen()
	var h [16]byte
	copy(h[:], b[:hl])
	hw := []uint64{binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[:8])}
	pay := b[hl:]
	nb := max(1, (len(pay)+63)/64)
	out := make([]Beat, 0, nb)
	for j := range nb {
		lo, hi := min(64*j, len(pay)), min(64*j+64, len(pay))
		var buf [64]byte
		copy(buf[:], pay[lo:hi])
		d := make([]uint64, 8)
		for w := range d {
			d[w] = binary.LittleEndian.Uint64(buf[8*w:])
		}
		out = append(out, Beat{Hdr: hw, Data: d, Keep: 1<<((hi-lo)/4) - 1, SOP: j == 0, EOP: j == nb-1})
	}
	return out, nil
}

// TLP decodes a TLP from the stream: its header words (as Beats gives
// them, DW0 on top) and the kept DWs of its payload, in order. The
// payload is taken only when the header's Fmt says one follows.
func TLP(hdr []uint64, payload []byte) (tlp.TLP, error) {
	var h [16]byte
	binary.BigEndian.PutUint64(h[:], hdr[1])
	binary.BigEndian.PutUint64(h[8:], hdr[0])
	n := 12
	if h[0]&0x20 != 0 { // Fmt: a 4 DW header
		n = 16
	}
	b := h[:n:n]
	if h[0]&0x40 != 0 { // Fmt: with data
		b = append(b, payload...)
	}
	var x tlp.TLP
	err := x.Decode(b)
	return x, err
}

// PortTLP is a random TLP as an optical port delivers it, the i-th of a
// run (its tag is i modulo 1024): by one of reqs, memory reads, writes
// and AtomicOps into a relayed range (0x1_0000_0000), a steered one
// (0x1_0020_0000), elsewhere in them and beyond; completions (from
// completer) for the O-NIC's proxy IDs 10:00.0 and 10:00.1 and for the
// root complex; configuration reads, messages and I/O writes.
func PortTLP(r *rand.Rand, i int, reqs []tlp.ID, completer tlp.ID) tlp.TLP {
	addrs := []uint64{0x100000000, 0x100200000, 0x100080000, 0x100380000, 0x200000000, 0x1000}
	x := tlp.TLP{Tag: uint16(i % 1024), RequesterID: reqs[r.IntN(len(reqs))], FirstBE: 0xF, LastBE: 0xF, TC: uint8(r.IntN(2))}
	addr := addrs[r.IntN(len(addrs))] + uint64(r.IntN(0x1000))&^3
	n := 1 + r.IntN(24)
	var k tlp.Kind
	switch c := r.IntN(20); {
	case c < 3:
		k = tlp.CplD
		x.RequesterID = []tlp.ID{tlp.NewID(0x10, 0, 0), tlp.NewID(0x10, 0, 1), tlp.NewID(0x00, 0, 0)}[r.IntN(3)]
		x.CompleterID, x.ByteCount, x.Status = completer, uint16(4*n), tlp.StatusSC
	case c < 4:
		k, x.RequesterID = tlp.Cpl, tlp.NewID(0x10, 0, 0)
		x.CompleterID, x.Status, x.ByteCount = completer, tlp.StatusUR, 4
	case c < 10:
		k = tlp.MWr
	case c < 15:
		k = tlp.MRd
	case c < 16:
		k, n = tlp.FetchAdd, 2
	case c < 17:
		k, n = tlp.CfgRd0, 1
	case c < 18:
		k, n = tlp.Msg, 0
	default:
		k, n, addr = tlp.IOWr, 1, 0x100
	}
	f, typ, _ := tlp.FmtType(k, addr >= 1<<32 && k.Class() != tlp.ClassIO, 0)
	x.Fmt, x.Type, x.Length = f, typ, uint16(n)
	if k.Class() == tlp.ClassMemory || k.Class() == tlp.ClassAtomic || k.Class() == tlp.ClassIO {
		x.Address = addr
	}
	if n == 1 {
		x.LastBE = 0
	}
	if k.HasData() {
		x.Data = make([]byte, 4*n)
		for j := range x.Data {
			x.Data[j] = byte(r.Uint32())
		}
	}
	if k.Class() == tlp.ClassCompletion && !k.HasData() {
		x.Length = 0
	}
	return x
}
