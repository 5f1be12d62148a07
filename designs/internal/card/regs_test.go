package card

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"onic/designs/manager"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/pcie/pg213"
	"onic/testbenches/replay"
	"onic/testbenches/tools"
	"onic/tlp"
)

// barModel is the register BAR as the emulator's O-NIC has it
// (emu/cluster: regRead, regWrite): the manager's registers
// (pcie/manager.Regs), the MSI-X table (the PBA reads 0: nothing here
// raises an interrupt), and the slots' pages, which here are plain memory
// the test's AXI-Lite slave keeps too.
type barModel struct {
	regs  *pmgr.Regs
	msix  [16 * pcie.ONICMSIXVectors]byte
	slots map[uint64]uint32
}

func (b *barModel) word(off uint64) uint32 {
	switch {
	case off < manager.RegBARManagerEnd:
		return b.regs.Read(uint32(off))
	case off < manager.RegBARSlotsEnd:
		return b.slots[off]
	case off < manager.RegBARMSIXEnd:
		return binary.LittleEndian.Uint32(b.msix[off-manager.RegBARSlotsEnd:])
	}
	return 0
}

func (b *barModel) write(off uint64, v, mask uint32) {
	switch {
	case off < manager.RegBARManagerEnd:
		b.regs.Write(uint32(off), v, mask)
	case off < manager.RegBARSlotsEnd:
		b.slots[off] = b.slots[off]&^mask | v&mask
	case off < manager.RegBARMSIXEnd:
		w := b.msix[off-manager.RegBARSlotsEnd:]
		binary.LittleEndian.PutUint32(w, binary.LittleEndian.Uint32(w)&^mask|v&mask)
	}
}

// byteMask is the 32-bit mask of the bytes that strobes (or byte enables)
// select, as the emulator's register file applies them.
func byteMask(strb uint32) uint32 {
	var mask uint32
	for b := range 4 {
		if strb>>b&1 == 1 {
			mask |= 0xFF << (8 * b)
		}
	}
	return mask
}

// axilSlave is the test's AXI-Lite slave on the card's m_slot_axil_*: a
// memory that takes the address and the data when it likes (each on its
// own), answers after a random delay, and records what it was asked.
type axilSlave struct {
	r                *rand.Rand
	mem              map[uint64]uint32
	aw, w            bool // taken, for the write in progress
	awAddr           uint64
	wData, wStrb     uint32
	bPending, rPend  int // cycles until the response (0: none due)
	rAddr            uint64
	awReady, wReady  bool
	arReady          bool
	bValid, rValid   bool
	writes, reads    int
	rData            uint32
	responseDelayMax int // cycles
	readyProbability int // 1 in readyProbability cycles offers ready
	outstandingRead  bool
}

// drive sets the slave's outputs for this cycle.
func (s *axilSlave) drive(d *dut) {
	s.awReady = !s.aw && s.r.IntN(s.readyProbability) == 0
	s.wReady = !s.w && s.r.IntN(s.readyProbability) == 0
	s.arReady = !s.outstandingRead && s.r.IntN(s.readyProbability) == 0
	d.drive("m_slot_axil_awready", b2u(s.awReady))
	d.drive("m_slot_axil_wready", b2u(s.wReady))
	d.drive("m_slot_axil_bvalid", b2u(s.bValid))
	d.drive("m_slot_axil_bresp", 0)
	d.drive("m_slot_axil_arready", b2u(s.arReady))
	d.drive("m_slot_axil_rvalid", b2u(s.rValid))
	d.drive("m_slot_axil_rdata", uint64(s.rData))
	d.drive("m_slot_axil_rresp", 0)
}

// edge takes what the card did this cycle.
func (s *axilSlave) edge(d *dut) {
	if s.awReady && d.bit("m_slot_axil_awvalid") {
		s.aw, s.awAddr = true, d.get("m_slot_axil_awaddr")[0]
	}
	if s.wReady && d.bit("m_slot_axil_wvalid") {
		s.w, s.wData, s.wStrb = true, uint32(d.get("m_slot_axil_wdata")[0]), uint32(d.get("m_slot_axil_wstrb")[0])
	}
	if s.bValid && d.bit("m_slot_axil_bready") {
		s.bValid = false
	}
	if s.aw && s.w && !s.bValid && s.bPending == 0 {
		mask := byteMask(s.wStrb)
		s.mem[s.awAddr] = s.mem[s.awAddr]&^mask | s.wData&mask
		s.writes++
		s.aw, s.w = false, false
		s.bPending = 1 + s.r.IntN(s.responseDelayMax)
	}
	if s.bPending > 0 {
		if s.bPending--; s.bPending == 0 {
			s.bValid = true
		}
	}
	if s.rValid && d.bit("m_slot_axil_rready") {
		s.rValid, s.outstandingRead = false, false
	}
	if s.arReady && d.bit("m_slot_axil_arvalid") {
		s.rAddr, s.outstandingRead = d.get("m_slot_axil_araddr")[0], true
		s.rPend = 1 + s.r.IntN(s.responseDelayMax)
		s.reads++
	}
	if s.rPend > 0 {
		if s.rPend--; s.rPend == 0 {
			s.rValid, s.rData = true, s.mem[s.rAddr]
		}
	}
}

// TestRegisterBAR: host A reads and writes card A's register BAR through
// CQ — the manager's registers, the slots' pages (an AXI-Lite memory with
// random delays on m_slot_axil_*), the MSI-X table, the PBA and unmapped
// space, with random lengths (up to 40 DWs, across beats) and byte
// enables — and every completion on CC is the one the emulator's register
// BAR gives for the same requests (pcie/manager.Regs, one register access
// per DW, the MSI-X table kept on the card); the slots' pages end up
// holding what the model wrote.
func TestRegisterBAR(t *testing.T) {
	tools.Long(t)
	// onicA of the two-party scenario, its host's domain also allowed its
	// own O-NIC's registers (their offsets are the addresses checked) but
	// for a read-only page of the slots' and a write-only one, which the
	// requests hit too.
	cfg := config(t, 0)
	host := &cfg.Manager.Access.Domains[0]
	host.Egress = append(slices.Clone(host.Egress), "local")
	host.Ranges = append(slices.Clone(host.Ranges),
		acl.RangeConfig{Base: 0, Size: 0x3000, Read: true, Write: true},
		acl.RangeConfig{Base: 0x3000, Size: 0x1000, Read: true},
		acl.RangeConfig{Base: 0x4000, Size: 0x1000, Write: true},
		acl.RangeConfig{Base: 0x5000, Size: 0xB000, Read: true, Write: true})
	d, err := manager.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := PartsOf(d, testLink(t), onicFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	top := Build("onic_card", parts)
	a := newDUT(t, top)
	// The first recordCycles cycles, for the HDL replay at the end.
	const recordCycles = 1500
	rec := replay.New(top, a.Sim)
	self := tlp.NewID(0x01, 0, 0)
	a.drive("cfg_bus_number", uint64(self.Bus()))
	rec.Reset(true)
	a.Settle()
	if err := rec.Cycle(); err != nil {
		t.Fatal(err)
	}
	rec.Reset(false)
	a.SetReset(true)
	a.Step()
	a.SetReset(false)

	mdl, f := modelOf(t, cfg, self)
	mdl.PortDown = [2]bool{true, true} // neither optical port is connected
	model := &barModel{regs: pmgr.NewRegs(mdl, 512), slots: map[uint64]uint32{}}
	for v := range pcie.ONICMSIXVectors {
		model.msix[16*v+12] = 1 // Vector Control's Mask Bit is set at reset (PCIe Base §7.7.2)
	}
	regBAR := cfg.Manager.RegisterBAR
	r := rand.New(rand.NewPCG(7, 8))
	slave := &axilSlave{r: r, mem: map[uint64]uint32{}, responseDelayMax: 4, readyProbability: 2}

	// Offsets worth reaching: every register of the manager's map, the
	// slots' pages, the MSI-X table (and its last vector), the PBA, and
	// beyond.
	var regOffs []uint64
	for _, reg := range pmgr.RegisterMap(mdl.Tables().Windows(), len(mdl.Tables().LUT().Entries), mdl.Access().RuleSlots(), 512) {
		regOffs = append(regOffs, uint64(reg.Offset))
	}
	pick := func() uint64 {
		switch r.IntN(6) {
		case 0, 1:
			return regOffs[r.IntN(len(regOffs))]
		case 2:
			return manager.RegBARManagerEnd + uint64(r.IntN(manager.RegBARSlotsEnd-manager.RegBARManagerEnd))&^3
		case 3:
			return manager.RegBARSlotsEnd + uint64(r.IntN(manager.RegBARMSIXEnd-manager.RegBARSlotsEnd))&^3
		case 4:
			return pcie.ONICMSIXPBAOffset + uint64(r.IntN(64))&^3
		}
		return uint64(r.IntN(int(f.BARs[regBAR].Size))) &^ 3
	}

	var got, want []string
	var gotData, wantData [][]byte
	cycle := 0
	for _, in := range []string{"m_kernel_tlp_ready", "s_axis_rq_tready", "port_a_tx_ready", "port_b_tx_ready"} {
		a.drive(in, 1)
	}
	var ccPkt axisPacket
	ccReady := false
	collect := func() {
		if a.bit("s_axis_cc_tvalid") && ccReady {
			ccPkt.dws = keptDWs(ccPkt.dws, a.get("s_axis_cc_tdata"), a.get("s_axis_cc_tkeep")[0])
			if a.bit("s_axis_cc_tlast") {
				var c pg213.CC
				copy(c.Descriptor[:], ccPkt.dws[:12])
				c.Payload = ccPkt.dws[12:]
				x, err := c.TLP(self)
				if err != nil {
					t.Fatalf("CC: %v", err)
				}
				got = append(got, x.String())
				gotData = append(gotData, x.Data)
				ccPkt = axisPacket{}
			}
		}
	}
	// step ends a cycle whose inputs are driven and settled.
	step := func() {
		collect()
		slave.edge(a)
		if cycle < recordCycles {
			if err := rec.Cycle(); err != nil {
				t.Fatal(err)
			}
		}
		a.Step()
		cycle++
	}
	const requests = 160
	for n := range requests {
		k := []tlp.Kind{tlp.MWr, tlp.MRd}[r.IntN(2)]
		off := pick()
		length := 1 + r.IntN(3)
		if r.IntN(4) == 0 {
			length = 1 + r.IntN(40)
		}
		if off+4*uint64(length) > f.BARs[regBAR].Size {
			off = f.BARs[regBAR].Size - 4*uint64(length)
		}
		fm, typ, _ := tlp.FmtType(k, r.IntN(2) == 0, 0)
		x := tlp.TLP{Fmt: fm, Type: typ, Length: uint16(length), Tag: uint16(n), RequesterID: tlp.NewID(0, 0, 0),
			FirstBE: uint8(r.IntN(16)), LastBE: uint8(1 + r.IntN(15)), Address: bases[regBAR] + off}
		if length == 1 {
			x.LastBE = 0
		}
		if k.HasData() {
			x.Data = make([]byte, 4*length)
			for j := range x.Data {
				x.Data[j] = byte(r.Uint32())
			}
		}
		var o pmgr.Outcome
		mdl.Process(&x, pmgr.FromHost, &o)
		switch {
		case o.Action == pmgr.Forward && o.Egress.Kind == ntb.EgressLocal && k == tlp.MWr:
			for i := range length {
				be := uint8(0xF)
				switch {
				case i == 0:
					be = x.FirstBE
				case i == length-1:
					be = x.LastBE
				}
				model.write(o.Address+4*uint64(i), binary.LittleEndian.Uint32(x.Data[4*i:]), byteMask(uint32(be)))
			}
		case o.Action == pmgr.Forward && o.Egress.Kind == ntb.EgressLocal:
			data := make([]byte, 4*length)
			for i := range length {
				binary.LittleEndian.PutUint32(data[4*i:], model.word(o.Address+4*uint64(i)))
			}
			// Split at MPS (256, cfg_max_payload 1) as the emulator's
			// O-NIC splits.
			for _, c := range pcie.ReadCompletions(&x, self, data, 256) {
				want = append(want, c.String())
				wantData = append(wantData, c.Data)
			}
		case o.Action == pmgr.Complete:
			c := pcie.Completion(&x, self, o.Status, nil)
			want = append(want, c.String())
			wantData = append(wantData, nil)
		case o.Action == pmgr.Drop && k == tlp.MWr:
		default:
			t.Fatalf("request %d (%s at %#x): the model %+v", n, k, off, o)
		}

		// The request on CQ, beat by beat, then quiet until the card has
		// done it: the manager's counters, which reads may return, count
		// every request before the next comes.
		c, err := pg213.ToCQ(&x, regBAR, 16, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkt := append(c.Descriptor[:], c.Payload...)
		for o := 0; o < len(pkt); {
			end := min(o+64, len(pkt))
			offer := r.IntN(3) != 0
			a.drive("m_axis_cq_tvalid", b2u(offer))
			a.drive("m_axis_cq_tdata", words(pkt[o:end], 512)...)
			a.drive("m_axis_cq_tkeep", 1<<((end-o+3)/4)-1)
			a.drive("m_axis_cq_tlast", b2u(end == len(pkt)))
			a.drive("m_axis_cq_tuser", uint64(c.FirstBE)|uint64(c.LastBE)<<8, 0, 0)
			slave.drive(a)
			ccReady = r.IntN(3) != 0
			a.drive("s_axis_cc_tready", b2u(ccReady))
			a.Settle()
			if offer && a.bit("m_axis_cq_tready") {
				o = end
			}
			step()
		}
		a.drive("m_axis_cq_tvalid", 0)
		for q := 0; q < 60+12*length; q++ {
			slave.drive(a)
			ccReady = r.IntN(3) != 0
			a.drive("s_axis_cc_tready", b2u(ccReady))
			a.Settle()
			step()
		}
		if len(got) != len(want) {
			t.Fatalf("request %d (%s %d DWs at %#x): %d completions on CC, want %d", n, k, length, off, len(got), len(want))
		}
	}
	for i := range want {
		if got[i] != want[i] || !bytes.Equal(gotData[i], wantData[i]) {
			t.Errorf("completion %d:\n got  %s % x\n want %s % x", i, got[i], gotData[i], want[i], wantData[i])
		}
	}
	if fmt.Sprint(slave.mem) != fmt.Sprint(model.slots) {
		t.Errorf("the slots' pages:\n got  %v\n want %v", slave.mem, model.slots)
	}
	if slave.writes < 20 || slave.reads < 20 {
		t.Errorf("the slots' pages saw %d writes and %d reads: too few to test them", slave.writes, slave.reads)
	}
	t.Logf("%d requests, %d completions, %d slot writes and %d reads, %d cycles", requests, len(got), slave.writes, slave.reads, cycle)
	// The card's Verilog, replayed with the first cycles' inputs, does
	// what the IR simulation did, in Icarus and in Verilator.
	replay.Verify(t, rec)
}

// TestCardDescription: through the whole card's cfg_ext_* ports (the
// PCIE4 block's configuration extend interface), configuration reads of
// the user extended space answer with the O-NIC's description
// capability the emulator's function holds, and a read below it (the
// block's own space) is not answered.
func TestCardDescription(t *testing.T) {
	d := newDUT(t, fullCard(t, "onic_card", 0, testLink(t)))
	d.SetReset(true)
	d.Step()
	d.SetReset(false)
	want, err := pg213.UserExtended(onicFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	if want[0]&0xFFFF != pcie.ExtCapVSEC {
		t.Fatalf("the function's user extended space starts %#08x, not a VSEC", want[0])
	}
	for reg := pg213.ExtFirstReg - 1; reg < pg213.ExtFirstReg+8; reg++ {
		d.drive("cfg_ext_read_received", 1)
		d.drive("cfg_ext_register_number", uint64(reg))
		d.Step()
		d.drive("cfg_ext_read_received", 0)
		valid := d.bit("cfg_ext_read_data_valid")
		if valid != pg213.InUserExtended(reg) {
			t.Fatalf("read of Dword %#x: valid %v", reg, valid)
		}
		if valid && uint32(d.get("cfg_ext_read_data")[0]) != want[reg-pg213.ExtFirstReg] {
			t.Fatalf("Dword %#x: card %#08x, want %#08x", reg, d.get("cfg_ext_read_data")[0], want[reg-pg213.ExtFirstReg])
		}
		d.Step()
		if d.bit("cfg_ext_read_data_valid") {
			t.Fatalf("read of Dword %#x answered twice", reg)
		}
	}
}
