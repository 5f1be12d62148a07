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

func rqModule(t testing.TB) *ir.Module {
	m := ir.NewModule("onic_pcie4_rq")
	RQ(m)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRQAgainstModel: random memory, I/O and atomic requests offered in
// the manager's stream format with random gaps and backpressure leave as
// RQ packets that the pcie/pg213 model reads back (byte enables from
// tuser) as the same requests, with is_sop, is_eop and the last DW's
// index on the right beats — under the block's own requester ID: the
// descriptor leaves Requester ID Enable clear, as an endpoint's must.
func TestRQAgainstModel(t *testing.T) {
	blockID := tlp.NewID(0x42, 0, 0) // the bus the block captured, device 0, function 0
	r := rand.New(rand.NewPCG(5, 5))
	kinds := []tlp.Kind{tlp.MRd, tlp.MWr, tlp.MRdLk, tlp.IORd, tlp.IOWr, tlp.FetchAdd, tlp.Swap, tlp.CAS}
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
		addr := uint64(r.Uint32()) &^ 3
		if k != tlp.IORd && k != tlp.IOWr && r.IntN(2) == 0 {
			addr = r.Uint64()&^3 | 1<<38
		}
		f, typ, _ := tlp.FmtType(k, addr > 0xFFFF_FFFF, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), AT: uint8(r.IntN(4)), EP: r.IntN(5) == 0,
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
		w := x
		w.RequesterID = blockID
		want = append(want, w)
		enc, err := x.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		var h [16]byte
		copy(h[:], enc[:x.HeaderLen()])
		hdr := []uint64{binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[:8])}
		n := max(1, (len(x.Data)+63)/64)
		for b := range n {
			lo, hi := min(64*b, len(x.Data)), min(64*b+64, len(x.Data))
			in = append(in, beat{hdr, x.Data[lo:hi], 1<<((hi-lo)/4) - 1, b == 0, b == n-1})
		}
	}
	s := newBench(t, rqModule(t))
	var got []tlp.TLP
	var pkt []byte
	var fbe, lbe uint8
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
		s.set("s_axis_rq_tready", b2u(ready))
		s.Settle()
		if offer && s.get("tlp_ready")[0] == 1 {
			bi++
		}
		if s.get("s_axis_rq_tvalid")[0] == 1 && ready {
			keep, user := s.get("s_axis_rq_tkeep")[0], s.get("s_axis_rq_tuser")
			last := s.get("s_axis_rq_tlast")[0] == 1
			u := user[0]
			sopBit, eopBit, ptr := u>>20&1 == 1, u>>26&1 == 1, int(u>>28&15)
			if sopBit != (len(pkt) == 0) || eopBit != last || last && ptr != bits.Len64(keep)-1 || u>>32 != 0 || user[1] != 0 || user[2] != 0 {
				t.Fatalf("request %d: tuser %x with keep %04x, last %v", len(got), user, keep, last)
			}
			if sopBit {
				fbe, lbe = uint8(u&15), uint8(u>>8&15)
			}
			pkt = dws(pkt, s.bytes("s_axis_rq_tdata"), keep)
			if last {
				var q pg213.RQ
				copy(q.Descriptor[:], pkt[:16])
				q.FirstBE, q.LastBE, q.Payload = fbe, lbe, pkt[16:]
				x, err := q.TLP(blockID)
				if err != nil {
					t.Fatalf("request %d: %v", len(got), err)
				}
				got = append(got, x)
				pkt = nil
			}
		}
		s.Step()
	}
	if len(got) != len(want) {
		t.Fatalf("%d of %d requests came out", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("request %d:\n got %s\nwant %s", i, got[i].String(), want[i].String())
		}
	}
}

// TestRQLint: the adapter is clean under Verilator -Wall.
func TestRQLint(t *testing.T) { verilator.Lint(t, rqModule(t)) }
