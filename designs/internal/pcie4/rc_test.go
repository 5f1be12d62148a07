package pcie4

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/testbenches/verilator"
	"onic/tlp"
)

func rcModule(t testing.TB) *ir.Module {
	m := ir.NewModule("onic_pcie4_rc")
	RC(m)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRCAgainstModel: random completions of every kind, made into RC
// packets by the pcie/pg213 model and offered with random gaps and
// backpressure, leave in the manager's stream format as the same
// completions, with the request-completed flag.
func TestRCAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	kinds := []tlp.Kind{tlp.Cpl, tlp.CplD, tlp.CplLk, tlp.CplDLk}
	var want []tlp.TLP
	var wantDone []bool
	var beats [][3]any
	for i := range 500 {
		k := kinds[i%len(kinds)]
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), EP: r.IntN(4) == 0,
			Tag: uint16(r.IntN(256)), RequesterID: tlp.ID(r.Uint32()), CompleterID: tlp.ID(r.Uint32()), Status: tlp.Status(r.IntN(8)),
			ByteCount: uint16(1 + r.IntN(4096)), LowerAddress: uint8(r.IntN(128))}
		if k.HasData() {
			x.Length = uint16(1 + r.IntN(40))
			if r.IntN(20) == 0 {
				x.Length = 1024
			}
			x.Data = make([]byte, 4*int(x.Length))
			for j := range x.Data {
				x.Data[j] = byte(r.Uint32())
			}
		}
		done := r.IntN(2) == 0
		c, err := pg213.ToRC(&x, r.Uint64(), done)
		if err != nil {
			t.Fatal(err)
		}
		want, wantDone = append(want, x), append(wantDone, done)
		pkt := append(c.Descriptor[:], c.Payload...)
		for off := 0; off < len(pkt); off += 64 {
			end := min(off+64, len(pkt))
			beats = append(beats, [3]any{pkt[off:end], uint64(1)<<((end-off+3)/4) - 1, end == len(pkt)})
		}
	}
	// Then at full rate, offered without a gap and never held back: the
	// adapter takes a beat every cycle, packets back to back.
	for _, full := range []bool{false, true} {
		s := newBench(t, rcModule(t))
		var got []tlp.TLP
		var gotDone []bool
		var cur []byte
		var curDone bool
		bi := 0
		for cycle := 0; cycle < 40*len(beats) && len(got) < len(want); cycle++ {
			offer := bi < len(beats) && (full || r.IntN(4) != 0)
			if offer {
				b := beats[bi]
				s.set("m_axis_rc_tdata", words(b[0].([]byte), 512)...)
				s.set("m_axis_rc_tkeep", b[1].(uint64))
				s.set("m_axis_rc_tlast", b2u(b[2].(bool)))
			}
			s.set("m_axis_rc_tvalid", b2u(offer))
			ready := full || r.IntN(3) != 0
			s.set("tlp_ready", b2u(ready))
			s.Settle()
			if offer && s.get("m_axis_rc_tready")[0] == 1 {
				bi++
			} else if offer && full {
				t.Fatalf("at full rate: beat %d of %d waited", bi, len(beats))
			}
			if s.get("tlp_valid")[0] == 1 && ready {
				if s.get("tlp_sop")[0] == 1 {
					hw := s.get("tlp_hdr")
					var h [16]byte
					binary.BigEndian.PutUint64(h[:], hw[1])
					binary.BigEndian.PutUint64(h[8:], hw[0])
					cur = append([]byte(nil), h[4:]...)
					curDone = s.get("tlp_done")[0] == 1
				}
				keep := s.get("tlp_keep")[0]
				cur = dws(cur, s.bytes("tlp_data"), keep)
				if s.get("tlp_eop")[0] == 1 {
					var x tlp.TLP
					if err := x.Decode(cur); err != nil {
						t.Fatalf("completion %d: %v (%x)", len(got), err, cur)
					}
					got, gotDone = append(got, x), append(gotDone, curDone)
				}
			}
			s.Step()
		}
		if len(got) != len(want) {
			t.Fatalf("%d of %d completions came out", len(got), len(want))
		}
		for i := range want {
			if got[i].String() != want[i].String() || gotDone[i] != wantDone[i] {
				t.Fatalf("completion %d (done %v, want %v):\n got %s\nwant %s", i, gotDone[i], wantDone[i], got[i].String(), want[i].String())
			}
		}
	}
}

// TestRCLint: the adapter is clean under Verilator -Wall.
func TestRCLint(t *testing.T) { verilator.Lint(t, rcModule(t)) }
