package pcie4

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/testbenches/verilator"
	"onic/tlp"
)

func cqModule(t testing.TB) *ir.Module {
	m := ir.NewModule("onic_pcie4_cq")
	CQ(m)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	return m
}

// words packs little-endian bytes into 64-bit words, n bits in all.
func words(b []byte, n int) []uint64 {
	full := make([]byte, (n+63)/64*8)
	copy(full, b)
	w := make([]uint64, len(full)/8)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(full[8*i:])
	}
	return w
}

// TestCQAgainstModel: random requests of every kind CQ carries, turned
// into CQ packets by the pcie/pg213 model and driven into the adapter
// with random gaps and backpressure, leave as the manager's TLP stream:
// each header and payload, read back as a TLP, is the request itself,
// with the BAR and the function (0-3) the block matched.
func TestCQAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	kinds := []tlp.Kind{tlp.MRd, tlp.MWr, tlp.MRdLk, tlp.IORd, tlp.IOWr, tlp.FetchAdd, tlp.Swap, tlp.CAS}
	type want struct {
		enc     []byte
		bar, fn int
	}
	var wants []want
	var beats [][3]any // data bytes, keep, last + user
	for i := range 600 {
		k := kinds[i%len(kinds)]
		addr := uint64(r.Uint32()) &^ 3
		if k != tlp.IORd && k != tlp.IOWr && r.IntN(2) == 0 {
			addr = r.Uint64()&^3 | 1<<36
		}
		f, typ, _ := tlp.FmtType(k, addr > 0xFFFF_FFFF, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), AT: uint8(r.IntN(4)),
			Tag: uint16(r.IntN(256)), RequesterID: tlp.ID(r.Uint32()), FirstBE: uint8(r.IntN(16)), LastBE: uint8(r.IntN(16)), Address: addr}
		x.Length = uint16(1 + r.IntN(40))
		if r.IntN(20) == 0 {
			x.Length = 1024
		}
		if k == tlp.IORd || k == tlp.IOWr {
			x.Length = 1
		}
		if k.HasData() {
			x.Data = make([]byte, 4*int(x.Length))
			for j := range x.Data {
				x.Data[j] = byte(r.Uint32())
			}
		}
		bar, fn := r.IntN(6), r.IntN(4) // the O-NIC's function or a stand-in's
		c, err := pg213.ToCQ(&x, bar, 20, uint8(fn))
		if err != nil {
			t.Fatal(err)
		}
		enc, err := x.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		wants = append(wants, want{enc, bar, fn})
		pkt := append(c.Descriptor[:], c.Payload...)
		for off := 0; off < len(pkt); off += 64 {
			end := min(off+64, len(pkt))
			var keep uint64
			for d := 0; d < (end-off)/4; d++ {
				keep |= 1 << d
			}
			user := uint64(c.FirstBE) | uint64(c.LastBE)<<8
			beats = append(beats, [3]any{pkt[off:end], keep, [2]uint64{b2u(end == len(pkt)), user}})
		}
	}
	// Then at full rate, offered without a gap and never held back: the
	// adapter takes a beat every cycle, packets back to back.
	for _, full := range []bool{false, true} {
		s := newBench(t, cqModule(t))
		var got []want
		var cur []byte
		var curBAR, curFn int
		bi := 0
		for cycle := 0; cycle < 40*len(beats) && len(got) < len(wants); cycle++ {
			offer := bi < len(beats) && (full || r.IntN(4) != 0)
			if offer {
				b := beats[bi]
				lu := b[2].([2]uint64)
				s.set("m_axis_cq_tdata", words(b[0].([]byte), 512)...)
				s.set("m_axis_cq_tkeep", b[1].(uint64))
				s.set("m_axis_cq_tlast", lu[0])
				s.set("m_axis_cq_tuser", lu[1], 0, 0)
			} else {
				s.set("m_axis_cq_tdata", words(nil, 512)...) // nothing valid: garbage would do too
			}
			s.set("m_axis_cq_tvalid", b2u(offer))
			ready := full || r.IntN(3) != 0
			s.set("tlp_ready", b2u(ready))
			s.Settle()
			if offer && s.get("m_axis_cq_tready")[0] == 1 {
				bi++
			} else if offer && full {
				t.Fatalf("at full rate: beat %d of %d waited", bi, len(beats))
			}
			if s.get("tlp_valid")[0] == 1 && ready {
				hdrW := s.get("tlp_hdr")
				var hdr [16]byte
				binary.BigEndian.PutUint64(hdr[:], hdrW[1])
				binary.BigEndian.PutUint64(hdr[8:], hdrW[0])
				if s.get("tlp_sop")[0] == 1 {
					h := tlp.Header(hdr[:])
					cur = append([]byte(nil), hdr[:h.HeaderLen()]...)
					curBAR, curFn = int(s.get("tlp_bar")[0]), int(s.get("tlp_func")[0])
				}
				keep := s.get("tlp_keep")[0]
				cur = dws(cur, s.bytes("tlp_data"), keep)
				if s.get("tlp_eop")[0] == 1 {
					got = append(got, want{cur, curBAR, curFn})
				}
			}
			s.Step()
		}
		if len(got) != len(wants) {
			t.Fatalf("%d of %d requests came out", len(got), len(wants))
		}
		for i := range wants {
			if !bytes.Equal(got[i].enc, wants[i].enc) || got[i].bar != wants[i].bar || got[i].fn != wants[i].fn {
				var a, b tlp.TLP
				a.Decode(got[i].enc)
				b.Decode(wants[i].enc)
				t.Fatalf("request %d:\n got %s (function %d, BAR %d)\nwant %s (function %d, BAR %d)", i, a.String(), got[i].fn, got[i].bar, b.String(), wants[i].fn, wants[i].bar)
			}
		}
	}
}

// TestCQLint: the adapter is clean under Verilator -Wall.
func TestCQLint(t *testing.T) { verilator.Lint(t, cqModule(t)) }
