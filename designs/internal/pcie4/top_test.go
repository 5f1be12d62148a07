package pcie4

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/designs/manager"
	"onic/emu/scenario"
	"onic/hdlgen/sim"
	"onic/pcie"
	"onic/pcie/pg213"
	"onic/testbenches/verilator"
	"onic/tlp"
)

func defaultManager(t testing.TB) *manager.Design {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	d, err := manager.Build(manager.Config{Manager: scenario.TwoParty().ONICs[0].Manager, BARs: f.MemorySizes()})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// stream collects the TLPs leaving one output stream of a simulation.
type stream struct {
	cur  []byte
	tlps []string
}

func (st *stream) beat(hdr []byte, sop, eop bool, data []byte, keep uint64, prefix string) {
	if sop {
		st.cur = append([]byte(prefix), hdr...)
	}
	for d := range 16 {
		if keep>>d&1 == 1 {
			st.cur = append(st.cur, data[4*d:4*d+4]...)
		}
	}
	if eop {
		st.tlps = append(st.tlps, fmt.Sprintf("%x", st.cur))
	}
}

// TestHostTopAgainstManager: the manager behind the PCIE4 completer
// adapters does what the manager alone does. The same random requests
// (into the default O-NIC's windows and anywhere in its BARs, so they are
// forwarded, refused or completed with UR/CA) go into the top as CQ
// packets made by the pcie/pg213 model and into the manager as its host
// stream, with random gaps; every TLP leaving either on each output, and
// every completion (read back from CC through the model), is the same.
func TestHostTopAgainstManager(t *testing.T) {
	d := defaultManager(t)
	top := HostTop("onic_host_top", d.Module)
	if err := top.Check(); err != nil {
		t.Fatal(err)
	}
	ts, err := sim.New(top)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := sim.New(d.Module)
	if err != nil {
		t.Fatal(err)
	}
	self := tlp.NewID(0x42, 0, 0)
	r := rand.New(rand.NewPCG(8, 8))
	type req struct {
		x   tlp.TLP
		bar int
	}
	var reqs []req
	for i := range 300 {
		k := []tlp.Kind{tlp.MWr, tlp.MRd}[i%2]
		bar, off := r.IntN(6), uint64(r.IntN(1<<20))&^3
		if len(d.Windows) > 0 && r.IntN(2) == 0 {
			w := d.Windows[r.IntN(len(d.Windows))]
			bar, off = w.BAR, w.Offset+uint64(r.IntN(int(min(w.Size, 1<<20))))&^3
		}
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, Length: uint16(1 + r.IntN(24)), Tag: uint16(r.IntN(256)),
			RequesterID: tlp.NewID(uint8(r.IntN(2)), 0, 0), FirstBE: 0xF, LastBE: 0xF, Address: off}
		if x.Length == 1 {
			x.LastBE = 0
		}
		if k.HasData() {
			x.Data = make([]byte, 4*int(x.Length))
			for j := range x.Data {
				x.Data[j] = byte(r.Uint32())
			}
		}
		reqs = append(reqs, req{x, bar})
	}
	set := func(s *sim.Sim, name string, v ...uint64) {
		if err := s.SetWords(name, v); err != nil {
			t.Fatal(err)
		}
	}
	get := func(s *sim.Sim, name string) []uint64 {
		v, err := s.GetWords(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	bytesOf := func(w []uint64) []byte {
		b := make([]byte, 8*len(w))
		for j := range w {
			binary.LittleEndian.PutUint64(b[8*j:], w[j])
		}
		return b
	}
	hdrOf := func(w []uint64, n int) []byte { // DW0 on top, PCIe byte order
		var b [16]byte
		binary.BigEndian.PutUint64(b[:], w[1])
		binary.BigEndian.PutUint64(b[8:], w[0])
		return b[16-n:]
	}
	outs := []string{"m_port_a", "m_port_b", "m_kernel", "m_local"}
	run := func(s *sim.Sim, viaCQ bool) map[string]*stream {
		got := map[string]*stream{"cpl": {}}
		for _, o := range outs {
			got[o] = &stream{}
		}
		set(s, "self_id", uint64(self))
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
		// The packets to offer, beat by beat.
		type beat struct{ set func() }
		var beats []beat
		for _, q := range reqs {
			q := q
			if viaCQ {
				c, err := pg213.ToCQ(&q.x, q.bar, 20, 0)
				if err != nil {
					t.Fatal(err)
				}
				pkt := append(c.Descriptor[:], c.Payload...)
				for off := 0; off < len(pkt); off += 64 {
					end := min(off+64, len(pkt))
					chunk, last := pkt[off:end], end == len(pkt)
					beats = append(beats, beat{func() {
						set(s, "m_axis_cq_tdata", words(chunk, 512)...)
						set(s, "m_axis_cq_tkeep", 1<<((len(chunk)+3)/4)-1)
						set(s, "m_axis_cq_tlast", b2u(last))
						set(s, "m_axis_cq_tuser", uint64(c.FirstBE)|uint64(c.LastBE)<<8, 0, 0)
					}})
				}
				continue
			}
			enc, _ := q.x.AppendBinary(nil)
			hl := q.x.HeaderLen()
			var h [16]byte
			copy(h[:], enc[:hl])
			hw := []uint64{binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[:8])}
			n := max(1, (len(q.x.Data)+63)/64)
			for b := range n {
				lo, hi := min(64*b, len(q.x.Data)), min(64*b+64, len(q.x.Data))
				chunk, sop, eop := q.x.Data[lo:hi], b == 0, b == n-1
				beats = append(beats, beat{func() {
					set(s, "s_host_tlp_hdr", hw...)
					set(s, "s_host_tlp_bar", uint64(q.bar))
					set(s, "s_host_tlp_data", words(chunk, 512)...)
					set(s, "s_host_tlp_keep", 1<<(len(chunk)/4)-1)
					set(s, "s_host_tlp_sop", b2u(sop))
					set(s, "s_host_tlp_eop", b2u(eop))
				}})
			}
		}
		validName, readyName := "s_host_tlp_valid", "s_host_tlp_ready"
		if viaCQ {
			validName, readyName = "m_axis_cq_tvalid", "m_axis_cq_tready"
		}
		rng := rand.New(rand.NewPCG(9, 9))
		bi := 0
		var cc []byte
		for cycle := 0; cycle < 60*len(beats); cycle++ {
			offer := bi < len(beats) && rng.IntN(3) != 0
			if offer {
				beats[bi].set()
			}
			set(s, validName, b2u(offer))
			for _, o := range outs {
				set(s, o+"_tlp_ready", 1)
			}
			if viaCQ {
				set(s, "s_axis_cc_tready", 1)
			} else {
				set(s, "m_cpl_tlp_ready", 1)
			}
			s.Settle()
			if offer && get(s, readyName)[0] == 1 {
				bi++
			}
			for _, o := range outs {
				if get(s, o+"_tlp_valid")[0] != 1 {
					continue
				}
				prefix := ""
				if o == "m_kernel" {
					prefix = fmt.Sprintf("slot%d:", get(s, "m_kernel_slot")[0])
				}
				hw := get(s, o+"_tlp_hdr")
				var hb [16]byte
				binary.BigEndian.PutUint64(hb[:], hw[1])
				binary.BigEndian.PutUint64(hb[8:], hw[0])
				hl := tlp.Header(hb[:]).HeaderLen()
				got[o].beat(hb[:hl], get(s, o+"_tlp_sop")[0] == 1, get(s, o+"_tlp_eop")[0] == 1,
					bytesOf(get(s, o+"_tlp_data")), get(s, o+"_tlp_keep")[0], prefix)
			}
			if viaCQ && get(s, "s_axis_cc_tvalid")[0] == 1 {
				keep := get(s, "s_axis_cc_tkeep")[0]
				raw := bytesOf(get(s, "s_axis_cc_tdata"))
				for dw := range 16 {
					if keep>>dw&1 == 1 {
						cc = append(cc, raw[4*dw:4*dw+4]...)
					}
				}
				if get(s, "s_axis_cc_tlast")[0] == 1 {
					var c pg213.CC
					copy(c.Descriptor[:], cc[:12])
					c.Payload = cc[12:]
					x, err := c.TLP(self)
					if err != nil {
						t.Fatal(err)
					}
					got["cpl"].tlps = append(got["cpl"].tlps, x.String())
					cc = nil
				}
			}
			if !viaCQ && get(s, "m_cpl_tlp_valid")[0] == 1 {
				var x tlp.TLP
				if err := x.Decode(hdrOf(get(s, "m_cpl_tlp_hdr"), 12)); err != nil {
					t.Fatal(err)
				}
				got["cpl"].tlps = append(got["cpl"].tlps, x.String())
			}
			s.Step()
		}
		if bi != len(beats) {
			t.Fatalf("only %d of %d beats were taken", bi, len(beats))
		}
		return got
	}
	a, b := run(ts, true), run(ms, false)
	total := 0
	for name, sa := range a {
		sb := b[name]
		if len(sa.tlps) != len(sb.tlps) {
			t.Fatalf("%s: %d TLPs through the top, %d from the manager alone", name, len(sa.tlps), len(sb.tlps))
		}
		for i := range sa.tlps {
			if sa.tlps[i] != sb.tlps[i] {
				t.Fatalf("%s TLP %d:\n top     %s\n manager %s", name, i, sa.tlps[i], sb.tlps[i])
			}
		}
		total += len(sa.tlps)
	}
	if total < len(reqs)/2 || len(a["cpl"].tlps) == 0 || len(a["m_port_a"].tlps)+len(a["m_port_b"].tlps) == 0 {
		t.Fatalf("too little came out: %d TLPs, %d completions, %d to the ports", total, len(a["cpl"].tlps), len(a["m_port_a"].tlps)+len(a["m_port_b"].tlps))
	}
	t.Logf("%d TLPs and completions alike (%d completions, %d to port A, %d to port B, %d local, %d kernel)", total,
		len(a["cpl"].tlps), len(a["m_port_a"].tlps), len(a["m_port_b"].tlps), len(a["m_local"].tlps), len(a["m_kernel"].tlps))
}

// TestHostTopLint: the top and its modules are clean under Verilator -Wall.
func TestHostTopLint(t *testing.T) {
	verilator.Lint(t, HostTop("onic_host_top", defaultManager(t).Module))
}
