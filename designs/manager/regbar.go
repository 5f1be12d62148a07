package manager

import (
	"math/bits"

	"onic/designs/internal/tlphdr"
	"onic/hdlgen/ir"
	"onic/pcie"
	"onic/tlp"
)

// The register BAR's map as the register block decodes it, by byte
// offset: the manager's AXI-Lite registers, the kernel slots' pages (their
// task shells and kernels, docs/kernels.md), the MSI-X table and its
// Pending Bit Array, the card's counters, and nothing else.
const (
	RegBARManagerEnd  = 0x1000                                             // [0, 0x1000): the manager's registers (m_axil_*)
	RegBARSlotsEnd    = pcie.ONICMSIXTableOffset                           // [0x1000, 0x8000): the slots' pages (m_slot_axil_*)
	RegBARMSIXEnd     = pcie.ONICMSIXTableOffset + 16*pcie.ONICMSIXVectors // the MSI-X table, 16 bytes a vector
	RegBARPBA         = pcie.ONICMSIXPBAOffset                             // the PBA: a bit a vector (msix_pending), read only
	RegBARPBAEnd      = pcie.ONICMSIXPBAOffset + 8*((pcie.ONICMSIXVectors+63)/64)
	RegBARCounters    = pcie.ONICCountersOffset // the card's counters, 4 bytes each (ctr_*)
	RegBARCountersEnd = pcie.ONICCountersEnd
	// CounterSlots is how many counters the counter region has room for.
	CounterSlots = (RegBARCountersEnd - RegBARCounters) / 4
)

// Register block states.
const (
	rbIdle   = iota // waiting for a TLP's first beat
	rbDecide        // its header is registered: a write, a read, or neither
	rbWrite         // a write's DWs, one register access each
	rbRead          // a read's DWs, one register access each
	rbSend          // a completion beat waits for m_cpl_tlp_ready
	rbDrain         // anything else: its beats are taken and have no effect
)

// BuildRegBlock generates the register block (<name>_regbar): what turns
// the TLPs the manager sends to m_local into register accesses, as the
// emulator's O-NIC does with its register BAR.
//
//   - A memory write (MWr) becomes one write per DW, at the DW's offset,
//     with the byte enables as strobes (the first DW's First DW BE, the
//     last's Last DW BE, all four between), even when none is set, as the
//     emulator's register file takes it.
//   - A memory read (MRd) becomes one read per DW; the data comes back as
//     successful CplDs on m_cpl_tlp_* (completer self_id), beat by beat,
//     split so that none carries more than the Max_Payload_Size the PCIe
//     block reports (max_payload: PG213's cfg_max_payload, 0 128 bytes to
//     3 1024): each completion but the last ends at an MPS-aligned
//     address, which is a Read Completion Boundary (PCIe §2.3.1.1), the
//     first's Byte Count and Lower Address from the byte enables
//     (§2.2.9), each later one's the bytes left and its first address.
//   - Everything else the manager hands to local registers (configuration
//     requests and messages, completions for the O-NIC itself, locked
//     reads and AtomicOps into the register BAR) is taken and dropped: the
//     emulator does the same.
//
// By offset: below RegBARManagerEnd the manager's AXI-Lite slave
// (m_axil_*, 12-bit addresses); up to RegBARSlotsEnd the kernel slots'
// pages (m_slot_axil_*, the BAR offset as a 16-bit address); then the
// MSI-X table, kept here (the PCIE4 block's "MSI-X External" mode, PG213:
// the table and PBA are the application's), which the card's interrupt
// controller reads through msix_rd_* and whose Vector Control Mask Bits
// (reset to 1, PCIe Base §7.7.2) it sees on msix_masked; at RegBARPBA the
// Pending Bits the controller keeps (msix_pending); from RegBARCounters the card's
// counters, read only: the block puts the counter's index on ctr_index
// and takes its value from ctr_rdata a cycle later (writes there are
// ignored); every other offset reads 0 and ignores writes. Both AXI-Lite masters keep AWVALID and WVALID up
// until each is taken and wait for the write response before the next
// access; a read waits for RVALID. Accesses go one at a time: registers
// are the slow path.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func BuildRegBlock(c Config) (*ir.Module, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	W := c.DataWidth
	K := W / 32
	jb := bits.Len(uint(K - 1)) // bits of a DW's index in a beat
	m := ir.NewModule(c.Name + "_regbar")
	m.Describe("self_id", "The O-NIC's routing ID: the completer ID of the block's completions.")
	m.Describe("s_tlp_", "Requests for the register BAR, from the host's and the ports' pipelines: a 128-bit header, the payload, keep, sop and eop.")
	m.Describe("m_cpl_tlp_", "The block's completions for the register reads, to where each request came from.")
	m.Describe("max_payload", "The host's Max_Payload_Size (PG213 cfg_max_payload).")
	m.Describe("busy", "A register write is on its way to the manager or a slot.")
	m.Describe("m_axil_", "The manager's registers, as an AXI-Lite master.")
	m.Describe("m_slot_axil_", "The kernel slots' register pages, as an AXI-Lite master.")
	m.Describe("ctr_", "The card's counter region: the index of the counter read and its value.")
	m.Describe("msix_", "The MSI-X table for the interrupt controller: a DW read a cycle after its address, each vector's Mask Bit; the Pending Bits it keeps.")
	self := m.Input("self_id", 16)
	hdrIn := m.Input("s_tlp_hdr", 128)
	dataIn := m.Input("s_tlp_data", W)
	keepIn := m.Input("s_tlp_keep", K)
	sopIn, eopIn, validIn := m.Input("s_tlp_sop", 1), m.Input("s_tlp_eop", 1), m.Input("s_tlp_valid", 1)
	cplReady := m.Input("m_cpl_tlp_ready", 1)
	maxPayload := m.Input("max_payload", 2)

	st := m.Reg("rb_state", 3, rbIdle)
	states := m.States(st, "IDLE", "DECIDE", "WRITE", "READ", "SEND", "DRAIN") // (by the constants' order)
	in := func(s uint64, name string) ir.Value { return m.Named(name, m.Eq(st, states[s])) }
	idle, decide, writing := in(rbIdle, "rb_idle"), in(rbDecide, "rb_deciding"), in(rbWrite, "rb_writing")
	reading, sending, draining := in(rbRead, "rb_reading"), in(rbSend, "rb_sending"), in(rbDrain, "rb_draining")
	// busy: a TLP is being worked on (the card's kernel slots wait for a
	// register write to reach the task shells before they judge a write
	// that follows it).
	m.Output("busy", m.Not(idle))

	// The TLP's header, and what it asks for.
	hdr := m.RegNoReset("rb_hdr", 128)
	m.SetNext(hdr, hdrIn)
	start := m.Named("rb_start", m.And(idle, m.And(validIn, sopIn)))
	m.SetEnable(hdr, start)
	f := tlphdr.Decode(m, "rb", hdr)
	memType := m.Named("rb_mem_request", tlphdr.IsType(m, f.Type, tlp.MRd))
	isWrite := m.Named("rb_is_write", m.And(memType, m.Eq(m.Slice(f.Fmt, 1, 2), m.Const(2, 0b01))))
	isRead := m.Named("rb_is_read", m.And(memType, m.Eq(m.Slice(f.Fmt, 1, 2), m.Const(2, 0b00))))
	// last is the index of the TLP's last DW (Length 0 means 1024),
	// registered at the decision: everything after reads it.
	last := m.Reg("rb_last_dw", 11, 0)
	lastIn := m.Named("rb_last_dw_in", m.Sub(m.Concat(m.Eq(f.Length, m.Const(10, 0)), f.Length), m.Const(11, 1)))
	m.SetNext(last, lastIn)
	m.SetEnable(last, decide)

	// The DW the block is at: its index, its place in the beat, its DW
	// address in the BAR (offsets past 4 GiB are not the register BAR's).
	i := m.Reg("rb_dw", 11, 0)
	j := m.Slice(i, 0, jb)
	atLast := m.Named("rb_at_last", m.Eq(i, last))
	more := m.Named("rb_more", m.Not(atLast))
	iNext := m.Named("rb_dw_next", m.Add(i, m.Const(11, 1)))
	atBeatEnd := m.Eq(j, m.Const(jb, uint64(K-1)))
	// The DW address counts along with i (an adder of the header's address
	// and i would be on the path to every decision).
	dwAddr := m.Reg("rb_dw_addr", 31, 0)
	// Which part of the BAR the DW is in is registered with the address
	// (worked out for both its next values, the header's and one on), so
	// no comparison is on the path to the block's decisions.
	regionNames := []string{"rb_to_manager", "rb_to_slots", "rb_to_msix", "rb_to_counters", "rb_to_pba"}
	regions := func(a ir.Value, name string) []ir.Value {
		below := func(off uint64, what string) ir.Value {
			return m.Named(name+"_below_"+what, m.LtU(a, m.Const(31, off/4)))
		}
		mgr, slots := below(RegBARManagerEnd, "manager_end"), below(RegBARSlotsEnd, "slots_end")
		return []ir.Value{mgr, m.And(m.Not(mgr), slots), m.And(m.Not(slots), below(RegBARMSIXEnd, "msix_end")),
			m.And(m.Not(below(RegBARCounters, "counters")), below(RegBARCountersEnd, "counters_end")),
			m.And(m.Not(below(RegBARPBA, "pba")), below(RegBARPBAEnd, "pba_end"))}
	}
	region := make([]ir.Value, len(regionNames))
	for k, name := range regionNames {
		region[k] = m.Reg(name, 1, 0)
	}
	toMgr, toSlot, toMSIX, toCtr, toPBA := region[0], region[1], region[2], region[3], region[4]
	toNone := m.Named("rb_to_none", m.Not(m.Any(toMgr, toSlot, toMSIX, toCtr, toPBA)))

	// A write's DW: the held beat's DW j, present if kept, with its byte
	// enables as strobes.
	dw := m.Named("rb_wdata", m.Slice(m.Named("rb_data_from_dw", m.Shr(dataIn, m.Concat(j, m.Const(5, 0)))), 0, 32))
	have := m.Named("rb_have", m.Slice(m.Named("rb_keep_from_dw", m.Shr(keepIn, j)), 0, 1))
	strb := m.Named("rb_wstrb", m.Mux(m.Eq(i, m.Const(11, 0)), f.FirstBE, m.Mux(atLast, f.LastBE, m.Const(4, 0xF))))
	wrDW := m.Named("rb_write_dw", m.And(writing, m.And(validIn, have)))

	// The two AXI-Lite masters.
	awDone, wDone, arDone := m.Reg("rb_aw_done", 1, 0), m.Reg("rb_w_done", 1, 0), m.Reg("rb_ar_done", 1, 0)
	awOpen, wOpen, arOpen := m.Named("rb_aw_open", m.Not(awDone)), m.Named("rb_w_open", m.Not(wDone)), m.Named("rb_ar_open", m.Not(arDone))
	awwDone := m.Named("rb_aw_w_done", m.And(awDone, wDone))
	// master drives the AXI-Lite master prefix* for the DWs sel chooses,
	// at addr.
	type master struct{ aw, w, ar, bDone, rDone, rdata ir.Value }
	axil := func(prefix string, sel ir.Value, addr ir.Value) master {
		wr, rd := m.Named(prefix+"write", m.And(wrDW, sel)), m.Named(prefix+"read", m.And(reading, sel))
		awvalid, wvalid := m.Named(prefix+"aw_offer", m.And(wr, awOpen)), m.Named(prefix+"w_offer", m.And(wr, wOpen))
		bready := m.Named(prefix+"b_wait", m.And(wr, awwDone))
		arvalid, rready := m.Named(prefix+"ar_offer", m.And(rd, arOpen)), m.Named(prefix+"r_wait", m.And(rd, arDone))
		m.Output(prefix+"awaddr", addr)
		m.Output(prefix+"awvalid", awvalid)
		m.Output(prefix+"wdata", dw)
		m.Output(prefix+"wstrb", strb)
		m.Output(prefix+"wvalid", wvalid)
		m.Output(prefix+"bready", bready)
		m.Output(prefix+"araddr", addr)
		m.Output(prefix+"arvalid", arvalid)
		m.Output(prefix+"rready", rready)
		var x master
		x.aw = m.And(awvalid, m.Input(prefix+"awready", 1))
		x.w = m.And(wvalid, m.Input(prefix+"wready", 1))
		x.bDone = m.And(bready, m.Input(prefix+"bvalid", 1))
		// A slave's error response changes nothing: the emulator's
		// registers have none. The inputs are there for the connection.
		_ = m.Input(prefix+"bresp", 2)
		x.ar = m.And(arvalid, m.Input(prefix+"arready", 1))
		x.rDone = m.And(rready, m.Input(prefix+"rvalid", 1))
		x.rdata = m.Input(prefix+"rdata", 32)
		_ = m.Input(prefix+"rresp", 2)
		return x
	}
	byteAddr := m.Named("rb_byte_addr", m.Concat(m.Slice(dwAddr, 0, 14), m.Const(2, 0)))
	mgr := axil("m_axil_", toMgr, m.Slice(byteAddr, 0, 12))
	slot := axil("m_slot_axil_", toSlot, byteAddr)

	// The MSI-X table: 16 bytes a vector, written with the byte enables,
	// read a cycle after its address.
	msix := m.Memory("msix_table", 4*pcie.ONICMSIXVectors, 32)
	msixAddr := m.Slice(dwAddr, 0, ir.AddrBits(4*pcie.ONICMSIXVectors))
	m.WritePort(msix, msixAddr, dw, m.Named("rb_msix_write", m.And(wrDW, toMSIX)), strb)
	msixPend := m.Reg("rb_msix_pending", 1, 0)
	msixRead := m.Named("rb_msix_read", m.And(reading, m.And(toMSIX, m.Not(msixPend))))
	msixWord := m.ReadPort(msix, msixAddr, msixRead)
	m.Output("msix_rd_data", m.ReadPort(msix, m.Input("msix_rd_addr", msixAddr.Width()), m.Input("msix_rd_en", 1)))
	// Each vector's Mask Bit (Vector Control bit 0, the entry's fourth
	// DW) is kept in a register of its own as well, set at reset, so the
	// controller sees every vector's at once and a read finds it set
	// before software has written the entry.
	vecBits := ir.AddrBits(pcie.ONICMSIXVectors)
	vec, isCtl := m.Slice(msixAddr, 2, vecBits), m.Named("rb_msix_at_control", m.Eq(m.Slice(msixAddr, 0, 2), m.Const(2, 3)))
	masked := m.Reg("msix_vector_masked", pcie.ONICMSIXVectors, 1<<pcie.ONICMSIXVectors-1)
	maskWrite := m.Named("rb_msix_mask_write", m.And(m.And(wrDW, toMSIX), m.And(isCtl, m.Slice(strb, 0, 1))))
	vecBit := m.Named("rb_msix_vector_bit", m.Shl(m.ConstWords(pcie.ONICMSIXVectors, []uint64{1}), vec))
	m.SetNext(masked, m.Named("msix_vector_masked_next", m.Mux(m.Slice(dw, 0, 1), m.Or(masked, vecBit), m.And(masked, m.Not(vecBit)))))
	m.SetEnable(masked, maskWrite)
	m.Output("msix_masked", masked)
	ctlRead := m.RegNoReset("rb_msix_read_control", 1)
	ctlBit := m.RegNoReset("rb_msix_read_mask_bit", 1)
	m.SetNext(ctlRead, isCtl)
	m.SetNext(ctlBit, m.Slice(m.Named("rb_msix_masked_from_vector", m.Shr(masked, vec)), 0, 1))
	m.SetEnable(ctlRead, msixRead)
	m.SetEnable(ctlBit, msixRead)
	msixData := m.Named("rb_msix_rdata", m.Mux(ctlRead, m.Concat(m.Slice(msixWord, 1, 31), ctlBit), msixWord))
	// The Pending Bits, a QW (two DWs) for every 64 vectors.
	pending := m.Input("msix_pending", pcie.ONICMSIXVectors)
	pbaData := m.Named("rb_pba_rdata", m.Slice(m.Named("rb_pba_from_dw", m.Shr(pending, m.Concat(m.Slice(dwAddr, 0, 1), m.Const(5, 0)))), 0, 32))

	// The card's counters: the index out, the value back two cycles
	// later (the card chooses among its counters in two registered
	// stages, CounterReadCycles), registered here.
	m.Output("ctr_index", m.Slice(dwAddr, 0, ir.AddrBits(CounterSlots)))
	ctrWait := m.Reg("rb_ctr_wait", 1, 0)
	ctrPend := m.Reg("rb_ctr_pending", 1, 0)
	ctrRead := m.Named("rb_ctr_read", m.And(reading, m.And(toCtr, m.Not(m.Or(ctrWait, ctrPend)))))
	ctrTake := m.Named("rb_ctr_take", m.And(reading, m.And(toCtr, ctrWait)))
	ctrData := m.RegNoReset("rb_ctr_data", 32)
	m.SetNext(ctrData, m.Input("ctr_rdata", 32))
	m.SetEnable(ctrData, ctrTake)

	// A DW is done when its access has been answered.
	wDoneNow := m.Named("rb_write_done", m.And(wrDW, m.Named("rb_write_answered", m.Any(m.And(toMgr, mgr.bDone), m.And(toSlot, slot.bDone), toMSIX, toCtr, toPBA, toNone))))
	rDoneNow := m.Named("rb_read_done", m.And(reading, m.Named("rb_read_answered", m.Any(m.And(toMgr, mgr.rDone), m.And(toSlot, slot.rDone), m.And(toMSIX, msixPend),
		m.And(toCtr, ctrPend), toPBA, toNone))))
	readOpen := m.Named("rb_read_open", m.Not(rDoneNow))
	rdata := m.Named("rb_rdata", m.Pick([]ir.Value{toMgr, toSlot, toMSIX, toCtr, toPBA}, []ir.Value{mgr.rdata, slot.rdata, msixData, ctrData, pbaData}))
	m.SetNext(msixPend, m.And(msixRead, readOpen))
	m.SetNext(ctrWait, m.And(ctrRead, readOpen))
	m.SetNext(ctrPend, m.And(ctrTake, readOpen))
	dwOpen := m.Named("rb_dw_open", m.Not(m.Or(wDoneNow, rDoneNow)))
	for _, r := range []struct{ reg, a, b ir.Value }{{awDone, mgr.aw, slot.aw}, {wDone, mgr.w, slot.w}, {arDone, mgr.ar, slot.ar}} {
		m.SetNext(r.reg, m.And(m.Any(r.reg, r.a, r.b), dwOpen))
	}

	// A read's completions: cpos is the DW's place in the completion it
	// goes in; a completion ends with the DW before an MPS-aligned address
	// (mpsMask: the DW address bits below MPS) or with the read's last.
	cpos := m.Reg("rb_cpl_pos", 11, 0)
	mpsMask := m.Named("rb_mps_mask", m.Sub(m.Shl(m.Const(9, 32), maxPayload), m.Const(9, 1)))
	cplEnd := m.Named("rb_cpl_end", m.Or(atLast, m.Eq(m.And(m.Slice(dwAddr, 0, 9), mpsMask), mpsMask)))
	jr := m.Slice(cpos, 0, jb)
	readBeatEnd := m.Named("rb_read_beat_end", m.Or(m.Eq(jr, m.Const(jb, uint64(K-1))), cplEnd))
	readStops := m.Named("rb_read_stops", m.Or(atLast, readBeatEnd))

	// The read's data, a beat at a time.
	rbuf := m.RegNoReset("rb_rbuf", W)
	rkeep := m.Reg("rb_rkeep", K, 0)
	first := m.Reg("rb_first_beat", 1, 1)
	oneHot := m.Named("rb_dw_bit", m.Shl(m.Const(K, 1), jr))
	var dws []ir.Value
	for k := K - 1; k >= 0; k-- {
		dws = append(dws, m.Mux(m.And(rDoneNow, m.Slice(oneHot, k, 1)), rdata, m.Slice(rbuf, 32*k, 32)))
	}
	m.SetNext(rbuf, m.Named("rb_rbuf_next", m.Concat(dws...)))
	sent := m.Named("rb_sent", m.And(sending, cplReady))
	m.SetNext(rkeep, m.Mux(sent, m.Const(K, 0), m.Mux(rDoneNow, m.Or(rkeep, oneHot), rkeep)))
	// A beat with a completion's last DW ends it; the next beat starts
	// the next.
	m.SetNext(first, m.Mux(decide, m.Const(1, 1), m.Mux(sent, cplEnd, first)))

	// Each completion: CplD of its DWs, the rest as the manager's
	// completions are made (status SC). As a completion's first DW comes
	// up (at the decision, or as the one before it is sent) the block
	// notes its length (to the read's end or the MPS boundary), its Byte
	// Count (what the read still owes) and Lower Address (the first's
	// from the byte enables, a later one's its first DW's address).
	c0 := m.Named("rb_cpl_first", completion(m, hdr, self, m.Const(3, uint64(tlp.StatusSC)), m.Const(1, 1), m.Const(1, 0)))
	nextCpl := m.Named("rb_next_cpl", m.And(sent, m.And(cplEnd, more)))
	fromHdr, onward := m.Named("rb_hdr_dw_addr", m.Zext(m.Slice(f.Address, 2, 30), 31)), m.Named("rb_dw_addr_next", m.Add(dwAddr, m.Const(31, 1)))
	startAt := m.Named("rb_cpl_start", m.Mux(decide, fromHdr, onward))
	toBoundary := m.Named("rb_to_boundary", m.Sub(m.Zext(mpsMask, 11), m.Zext(m.And(m.Slice(startAt, 0, 9), mpsMask), 11)))
	toEnd := m.Named("rb_to_end", m.Mux(decide, lastIn, m.Sub(last, iNext)))
	cplBegin := m.Named("rb_cpl_begin", m.Or(decide, nextCpl))
	cLen := m.Reg("rb_cpl_len", 11, 0) // DWs, less one
	m.SetNext(cLen, m.Mux(m.LtU(toEnd, toBoundary), toEnd, toBoundary))
	m.SetEnable(cLen, cplBegin)
	bcLeft := m.Reg("rb_bc_left", 13, 0) // the bytes the read still owes
	totalBC := m.Slice(c0, 32, 12)
	cLA := m.Reg("rb_cpl_la", 7, 0)
	m.SetNext(cLA, m.Mux(decide, m.Slice(c0, 0, 7), m.Concat(m.Slice(startAt, 0, 5), m.Const(2, 0))))
	m.SetEnable(cLA, cplBegin)
	carried := m.Named("rb_cpl_bytes", m.Sub(m.Concat(m.Add(m.Zext(cLen, 13), m.Const(13, 1)), m.Const(2, 0)), m.Zext(m.Slice(cLA, 0, 2), 15)))
	m.SetNext(bcLeft, m.Mux(decide, m.Concat(m.Eq(totalBC, m.Const(12, 0)), totalBC),
		m.Mux(nextCpl, m.Sub(bcLeft, m.Slice(carried, 0, 13)), bcLeft)))
	cplDWs := m.Named("rb_cpl_dws", m.Add(cLen, m.Const(11, 1)))
	cplHdr := m.Named("rb_cpl_hdr", m.Concat(m.Const(3, 0b010), m.Slice(c0, 74, 19), m.Slice(cplDWs, 0, 10),
		m.Slice(c0, 44, 20), m.Slice(bcLeft, 0, 12), m.Slice(c0, 7, 25), cLA))
	// Registered: the header register it comes from is written only in
	// idle, and a completion is sent two cycles later at the earliest
	// (the decision, then at least one read), so the register always
	// holds this request's completion header by then, and its byte count
	// and lower address arithmetic is off the path through CC.
	cplHdrR := m.RegNoReset("rb_cpl_hdr_r", cplHdr.Width())
	m.SetNext(cplHdrR, cplHdr)
	m.Output("m_cpl_tlp_hdr", cplHdrR)
	m.Output("m_cpl_tlp_data", rbuf)
	m.Output("m_cpl_tlp_keep", rkeep)
	m.Output("m_cpl_tlp_sop", first)
	m.Output("m_cpl_tlp_eop", cplEnd)
	m.Output("m_cpl_tlp_valid", sending)

	// The input: a write's beat is taken when its last DW is done (or it
	// has no more kept DWs), a read's at the decision, anything else's
	// as it comes.
	noMore := m.Named("rb_no_more", m.And(writing, m.And(validIn, m.Not(have)))) // a beat with no kept DW left
	beatOver := m.Or(m.And(wDoneNow, m.Or(atLast, atBeatEnd)), noMore)
	readDecided := m.Named("rb_read_decided", m.And(decide, isRead))
	ready := m.Any(m.And(idle, m.Not(sopIn)), readDecided, draining, beatOver)
	m.Output("s_tlp_ready", m.Named("rb_ready", ready))
	taken := m.And(validIn, ready)

	// The next DW.
	sentMore := m.Named("rb_sent_more", m.And(sent, more))
	advance := m.Named("rb_advance", m.Any(m.And(wDoneNow, more), m.And(rDoneNow, m.Not(readStops)), sentMore))
	m.SetNext(i, m.Mux(decide, m.Const(11, 0), m.Mux(advance, iNext, i)))
	cposNext := m.Named("rb_cpl_pos_next", m.Add(cpos, m.Const(11, 1)))
	m.SetNext(cpos, m.Mux(decide, m.Const(11, 0), m.Mux(m.And(advance, reading), cposNext,
		m.Mux(m.And(advance, sending), m.Mux(cplEnd, m.Const(11, 0), cposNext), cpos))))
	m.SetNext(dwAddr, m.Mux(decide, fromHdr, m.Mux(advance, onward, dwAddr)))
	hdrRegion, onRegion := regions(fromHdr, "rb_hdr"), regions(onward, "rb_next")
	for k, name := range regionNames {
		m.SetNext(region[k], m.Named(name+"_next", m.Mux(decide, hdrRegion[k], m.Mux(advance, onRegion[k], region[k]))))
	}

	// Where the block goes next: of the rules that apply, the last
	// listed; none: it stays.
	writeEnds := m.Named("rb_write_ends", m.Or(m.And(wDoneNow, atLast), noMore))
	next := st
	for _, r := range []struct {
		when ir.Value
		to   uint64
	}{
		{m.And(draining, m.And(taken, eopIn)), rbIdle},
		{sentMore, rbRead},
		{m.And(sent, atLast), rbIdle},
		{m.And(rDoneNow, readStops), rbSend},
		{writeEnds, rbDrain}, // the payload is longer than its Length: the rest is dropped
		{m.And(writeEnds, eopIn), rbIdle},
		{m.And(decide, m.Not(m.Or(isWrite, isRead))), rbDrain},
		{readDecided, rbRead},
		{m.And(decide, isWrite), rbWrite},
		{start, rbDecide},
	} {
		next = m.Mux(r.when, states[r.to], next)
	}
	m.SetNext(st, m.Named("rb_state_next", next))
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}
