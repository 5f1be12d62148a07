package pcie4

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/testbenches/verilator"
	"onic/tlp"
)

func ccModule(t testing.TB) *ir.Module {
	m := ir.NewModule("onic_pcie4_cc")
	CC(m)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCCAgainstModel: random completions of every kind, offered in the
// manager's stream format with random gaps and backpressure, leave as CC
// packets that the pcie/pg213 model reads back as the same completions,
// with is_sop, is_eop and the last DW's index in tuser on the right
// beats.
func TestCCAgainstModel(t *testing.T) {
	self := tlp.NewID(0x42, 0, 0)
	r := rand.New(rand.NewPCG(6, 6))
	kinds := []tlp.Kind{tlp.Cpl, tlp.CplD, tlp.CplLk, tlp.CplDLk}
	var want []tlp.TLP
	type beat struct {
		hdr      []uint64
		data     []byte
		keep     uint64
		sop, eop bool
	}
	var in []beat
	for i := range 500 {
		k := kinds[i%len(kinds)]
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), AT: uint8(r.IntN(4)), EP: r.IntN(4) == 0,
			Tag: uint16(r.IntN(256)), RequesterID: tlp.ID(r.Uint32()), CompleterID: self, Status: tlp.Status(r.IntN(8)),
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
		want = append(want, x)
		enc, err := x.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		var h [16]byte
		copy(h[4:], enc[:12]) // 96 bits, DW0 on top
		hdr := []uint64{binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[:8])}
		n := max(1, (len(x.Data)+63)/64)
		for b := range n {
			lo, hi := min(64*b, len(x.Data)), min(64*b+64, len(x.Data))
			in = append(in, beat{hdr, x.Data[lo:hi], 1<<((hi-lo)/4) - 1, b == 0, b == n-1})
		}
	}
	s := newBench(t, ccModule(t))
	var got []tlp.TLP
	var pkt []byte
	bi := 0
	for cycle := 0; cycle < 40*len(in) && len(got) < len(want); cycle++ {
		offer := bi < len(in) && r.IntN(4) != 0
		if offer {
			b := in[bi]
			s.set("tlp_hdr", b.hdr...)
			s.set("tlp_data", words(b.data, 512)...)
			s.set("tlp_keep", b.keep)
			s.set("tlp_sop", b2u(b.sop))
			s.set("tlp_eop", b2u(b.eop))
		}
		s.set("tlp_valid", b2u(offer))
		ready := r.IntN(3) != 0
		s.set("s_axis_cc_tready", b2u(ready))
		s.Settle()
		if offer && s.get("tlp_ready")[0] == 1 {
			bi++
		}
		if s.get("s_axis_cc_tvalid")[0] == 1 && ready {
			keep, user := s.get("s_axis_cc_tkeep")[0], s.get("s_axis_cc_tuser")
			last := s.get("s_axis_cc_tlast")[0] == 1
			sopBit, eopBit, ptr := user[0]&1 == 1, user[0]>>6&1 == 1, int(user[0]>>8&15)
			if sopBit != (len(pkt) == 0) || eopBit != last || last && ptr != bits.Len64(keep)-1 || user[0]>>12 != 0 || user[1] != 0 {
				t.Fatalf("completion %d: tuser %x (sop %v eop %v ptr %d) with keep %04x, last %v", len(got), user, sopBit, eopBit, ptr, keep, last)
			}
			pkt = dws(pkt, s.bytes("s_axis_cc_tdata"), keep)
			if last {
				var c pg213.CC
				copy(c.Descriptor[:], pkt[:12])
				c.Payload = pkt[12:]
				x, err := c.TLP(self)
				if err != nil {
					t.Fatalf("completion %d: %v", len(got), err)
				}
				got = append(got, x)
				pkt = nil
			}
		}
		s.Step()
	}
	if len(got) != len(want) {
		t.Fatalf("%d of %d completions came out", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("completion %d:\n got %s\nwant %s", i, got[i].String(), want[i].String())
		}
	}
}

// TestCCLint: the adapter is clean under Verilator -Wall.
func TestCCLint(t *testing.T) { verilator.Lint(t, ccModule(t)) }
