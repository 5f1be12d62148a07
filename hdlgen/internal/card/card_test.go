package card

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/emu/scenario"
	"onic/hdlgen/internal/optlink"
	"onic/hdlgen/internal/pcie4"
	"onic/hdlgen/ir"
	"onic/hdlgen/manager"
	"onic/hdlgen/sim"
	"onic/pcie"
	"onic/pcie/pg213"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// design builds O-NIC i of the two-party scenario's manager.
func design(t testing.TB, i int) *manager.Design {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	d, err := manager.Build(manager.Config{Manager: scenario.TwoParty().ONICs[i].Manager, BARs: manager.BARSizes(f)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testLink trains in tens of cycles.
func testLink(t testing.TB) *ir.Module {
	l, err := optlink.Module(optlink.Config{TrainCycles: 32, ReplayCycles: 400, LostCycles: 2000})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func cardTop(t testing.TB, name string, d *manager.Design, link *ir.Module) *ir.Module {
	top := Top(name, pcie4.HostTop(name+"_host", d.Module), link)
	if err := top.Check(); err != nil {
		t.Fatal(err)
	}
	return top
}

// dut is one simulated module with helpers that fail the test.
type dut struct {
	t testing.TB
	*sim.Sim
}

func newDUT(t testing.TB, m *ir.Module) *dut {
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return &dut{t, s}
}

func (d *dut) drive(name string, v ...uint64) {
	if err := d.Drive(name, v); err != nil {
		d.t.Fatal(err)
	}
}

func (d *dut) get(name string) []uint64 {
	v, err := d.GetWords(name)
	if err != nil {
		d.t.Fatal(err)
	}
	return v
}

func (d *dut) bit(name string) bool { return d.get(name)[0]&1 == 1 }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// words packs bytes into n bits of little-endian words.
func words(b []byte, n int) []uint64 {
	w := make([]uint64, n/64)
	var buf [64]byte
	copy(buf[:], b)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(buf[8*i:])
	}
	return w
}

// collector gathers the TLPs leaving a stream in the manager's format as
// "header|payload" hex strings.
type collector struct {
	cur  []byte
	hdr  string
	tlps []string
}

func (c *collector) take(d *dut, prefix string) {
	if !d.bit(prefix + "valid") {
		return
	}
	if d.bit(prefix + "sop") {
		h := d.get(prefix + "hdr")
		c.hdr, c.cur = fmt.Sprintf("%016x%016x", h[1], h[0]), nil
	}
	keep, data := d.get(prefix + "keep")[0], d.get(prefix+"data")
	for k := range 16 {
		if keep>>k&1 == 1 {
			c.cur = binary.LittleEndian.AppendUint32(c.cur, uint32(data[k/2]>>(32*(k%2))))
		}
	}
	if d.bit(prefix + "eop") {
		c.tlps = append(c.tlps, fmt.Sprintf("%s|%x", c.hdr, c.cur))
	}
}

// requests makes n random memory writes and reads into the design's
// windows (and anywhere in its BARs), as CQ packets, beat by beat.
func requests(t testing.TB, d *manager.Design, r *rand.Rand, n int) (cq [][]func(*dut), host [][]func(*dut)) {
	for i := range n {
		k := []tlp.Kind{tlp.MWr, tlp.MRd}[i%2]
		bar, off := r.IntN(6), uint64(r.IntN(1<<20))&^3
		if r.IntN(5) != 0 {
			w := d.Windows[r.IntN(len(d.Windows))]
			bar, off = w.BAR, w.Offset+uint64(r.IntN(int(min(w.Size, 1<<20))))&^3
		}
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, Length: uint16(1 + r.IntN(40)), Tag: uint16(r.IntN(256)),
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
		c, err := pg213.ToCQ(&x, bar, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkt := append(c.Descriptor[:], c.Payload...)
		var beats []func(*dut)
		for o := 0; o < len(pkt); o += 64 {
			end := min(o+64, len(pkt))
			chunk, last := pkt[o:end], end == len(pkt)
			beats = append(beats, func(s *dut) {
				s.drive("m_axis_cq_tdata", words(chunk, 512)...)
				s.drive("m_axis_cq_tkeep", 1<<((len(chunk)+3)/4)-1)
				s.drive("m_axis_cq_tlast", b2u(last))
				s.drive("m_axis_cq_tuser", uint64(c.FirstBE)|uint64(c.LastBE)<<8, 0, 0)
			})
		}
		cq = append(cq, beats)
		// The same request on the manager's own host stream.
		enc, _ := x.AppendBinary(nil)
		var h [16]byte
		copy(h[:], enc[:x.HeaderLen()])
		hw := []uint64{binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[:8])}
		nb := max(1, (len(x.Data)+63)/64)
		var hb []func(*dut)
		for b := range nb {
			lo, hi := min(64*b, len(x.Data)), min(64*b+64, len(x.Data))
			chunk, sop, eop := x.Data[lo:hi], b == 0, b == nb-1
			hb = append(hb, func(s *dut) {
				s.drive("s_host_tlp_hdr", hw...)
				s.drive("s_host_tlp_bar", uint64(bar))
				s.drive("s_host_tlp_data", words(chunk, 512)...)
				s.drive("s_host_tlp_keep", 1<<(len(chunk)/4)-1)
				s.drive("s_host_tlp_sop", b2u(sop))
				s.drive("s_host_tlp_eop", b2u(eop))
			})
		}
		host = append(host, hb)
	}
	return cq, host
}

// Two generated cards, their port A link layers joined back to back over
// a fibre that flips bits, port B never connected: requests from card A's
// host (as CQ packets) that its manager sends out of port A arrive on card
// B's port A exactly as the manager alone sends them, once each and in
// order, replays repairing the damage; port B stays down and the manager
// treats it as down.
func TestTwoCards(t *testing.T) {
	da, db := design(t, 0), design(t, 1)
	link := testLink(t)
	a := newDUT(t, cardTop(t, "onic_card_a", da, link))
	b := newDUT(t, cardTop(t, "onic_card_b", db, link))
	ref := newDUT(t, da.Module)
	self := uint64(tlp.NewID(0x42, 0, 0))
	for _, s := range []*dut{a, b, ref} {
		s.drive("self_id", self)
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
	}
	r := rand.New(rand.NewPCG(11, 12))
	cq, host := requests(t, da, r, 200)

	// The manager alone, with port A up and port B down, gives the TLPs
	// to expect on port A.
	var want collector
	ref.drive("port_down", 0b10)
	ref.drive("m_port_a_tlp_ready", 1)
	for _, o := range []string{"m_port_b", "m_kernel", "m_local", "m_cpl"} {
		ref.drive(o+"_tlp_ready", 1)
	}
	var flat []func(*dut)
	for _, h := range host {
		flat = append(flat, h...)
	}
	for i, cyc := 0, 0; cyc < 40*len(flat)+200; cyc++ {
		ref.drive("s_host_tlp_valid", b2u(i < len(flat)))
		if i < len(flat) {
			flat[i](ref)
		}
		ref.Settle()
		if i < len(flat) && ref.bit("s_host_tlp_ready") {
			i++
		}
		want.take(ref, "m_port_a_tlp_")
		ref.Step()
	}
	if len(want.tlps) < 20 {
		t.Fatalf("only %d of the requests go out of port A", len(want.tlps))
	}

	// The two cards: A's port A transmitter to B's port A receiver and
	// back, 12 cycles of fibre each way, one word in 60 with a bit
	// flipped; the requests start once A's port A is up.
	const delay = 12
	type word struct {
		data  []uint64
		ctl   bool
		valid bool
	}
	ab, ba := make([]word, delay), make([]word, delay)
	for i := range ab {
		ab[i].data, ba[i].data = make([]uint64, 8), make([]uint64, 8)
	}
	flips := 0
	var got collector
	var cqFlat []func(*dut)
	for _, c := range cq {
		cqFlat = append(cqFlat, c...)
	}
	bi, upAt := 0, -1
	for cyc := 0; cyc < 40000 && len(got.tlps) < len(want.tlps); cyc++ {
		in := [2]word{ba[cyc%delay], ab[cyc%delay]} // what arrives at A, at B
		for k, s := range []*dut{a, b} {
			s.drive("port_a_phy_up", 1)
			s.drive("port_b_phy_up", 0)
			s.drive("port_a_tx_ready", 1)
			s.drive("port_b_tx_ready", 1)
			s.drive("port_a_rx_data", in[k].data...)
			s.drive("port_a_rx_ctl", b2u(in[k].ctl))
			s.drive("port_a_rx_valid", b2u(in[k].valid))
			s.drive("s_axis_cc_tready", 1)
			for _, o := range []string{"port_a_in_tlp", "port_b_in_tlp", "m_kernel_tlp", "m_local_tlp"} {
				s.drive(o+"_ready", 1)
			}
		}
		offer := upAt >= 0 && bi < len(cqFlat) && r.IntN(3) != 0
		a.drive("m_axis_cq_tvalid", b2u(offer))
		if offer {
			cqFlat[bi](a)
		}
		b.drive("m_axis_cq_tvalid", 0)
		a.Settle()
		b.Settle()
		if offer && a.bit("m_axis_cq_tready") {
			bi++
		}
		if upAt < 0 && a.get("port_a_state")[0] == optlink.StateUp {
			upAt = cyc
		}
		got.take(b, "port_a_in_tlp_")
		for k, s := range []*dut{a, b} {
			w := word{data: append([]uint64(nil), s.get("port_a_tx_data")...), ctl: s.bit("port_a_tx_ctl"), valid: s.bit("port_a_tx_valid")}
			if w.valid && r.IntN(60) == 0 {
				w.data[r.IntN(8)] ^= 1 << r.IntN(64)
				flips++
			}
			if k == 0 {
				ab[cyc%delay] = w
			} else {
				ba[cyc%delay] = w
			}
		}
		if a.get("port_b_state")[0] != optlink.StateDown {
			t.Fatalf("cycle %d: port B, never connected, is in state %d", cyc, a.get("port_b_state")[0])
		}
		a.Step()
		b.Step()
	}
	if upAt < 0 || upAt > 300 {
		t.Fatalf("port A came up at cycle %d", upAt)
	}
	if len(got.tlps) != len(want.tlps) {
		t.Fatalf("%d TLPs arrived at card B, the manager sends %d", len(got.tlps), len(want.tlps))
	}
	for i := range want.tlps {
		if got.tlps[i] != want.tlps[i] {
			t.Fatalf("TLP %d at card B:\n %s\nthe manager sends\n %s", i, got.tlps[i], want.tlps[i])
		}
	}
	replays := a.get("port_a_replays")[0]
	t.Logf("%d TLPs through two cards, %d bits flipped, %d replays, %d CRC errors at B", len(got.tlps), flips, replays, b.get("port_a_crc_errors")[0])
	if replays == 0 || b.get("port_a_crc_errors")[0] == 0 {
		t.Fatal("no damage was caught and repaired: the test needs more flipped bits")
	}
}

func TestTopLint(t *testing.T) {
	l, err := optlink.Module(optlink.Config{})
	if err != nil {
		t.Fatal(err)
	}
	verilator.Lint(t, cardTop(t, "onic_card", design(t, 0), l))
}
