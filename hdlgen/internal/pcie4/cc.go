package pcie4

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
)

// CC descriptor fields (PG213, completer completion descriptor) and
// s_axis_cc_tuser fields (512-bit interface: is_sop[1:0], is_sop0_ptr,
// is_sop1_ptr, is_eop[1:0], is_eop0_ptr, is_eop1_ptr, discontinue,
// parity): low bit and width.
const (
	ccDescBits     = 96
	ccDescDWs      = ccDescBits / 32
	CCUserBits     = 81 // s_axis_cc_tuser's width on the 512-bit interface
	ccIsSOPLo      = 0
	ccIsEOPLo      = 6
	ccIsEOP0PtrLo  = 8
	ccCplHdrBits   = 96
	ccPayloadFirst = dataBits - ccDescBits // payload bits in a packet's first beat
)

// CC builds the completer completion adapter into m: a completion TLP
// stream from the manager (tlp_hdr, the 3 DW header with DW0 in the top
// bits; tlp_data, tlp_keep, tlp_sop, tlp_eop, tlp_valid/tlp_ready, the
// payload from byte 0 of the first beat) becomes CC packets toward the
// block (s_axis_cc_*, named as the IP names them): the 12-byte descriptor,
// then the payload, each output beat a descriptor or the previous input
// beat's last 12 bytes and the next one's first 52. The completer ID is
// left to the block (Completer ID Enable clear), as an endpoint's must be.
func CC(m *ir.Module) {
	hdr := m.Input("tlp_hdr", ccCplHdrBits)
	data := m.Input("tlp_data", dataBits)
	keep := m.Input("tlp_keep", keepBits)
	sop := m.Input("tlp_sop", 1)
	eop := m.Input("tlp_eop", 1)
	valid := m.Input("tlp_valid", 1)
	inReady := m.Wire("cpl_ready", 1)
	m.Output("tlp_ready", inReady)

	// The descriptor, from the header's three DWs.
	dw := func(i int) ir.Value { return m.Slice(hdr, 64-32*i, 32) }
	dw0, dw1, dw2 := dw(0), dw(1), dw(2)
	hasData := m.Slice(dw0, 30, 1) // Fmt bit 1
	length := m.Slice(dw0, 0, 10)
	lenDW := m.Concat(m.Eq(length, m.Const(10, 0)), length) // 0 encodes 1024
	dwCount := m.Named("cc_dword_count", m.Mux(hasData, lenDW, m.Const(11, 0)))
	bc12 := m.Slice(dw1, 0, 12)
	byteCount := m.Named("cc_byte_count", m.Concat(m.Eq(bc12, m.Const(12, 0)), bc12)) // 0 encodes 4096
	attr := m.Concat(m.Slice(dw0, 18, 1), m.Slice(dw0, 12, 2))
	desc := m.Named("cc_desc", m.Concat(
		m.Const(1, 0), attr, m.Slice(dw0, 20, 3), m.Const(1, 0), // force ECRC, attributes, TC, completer ID enable
		m.Slice(dw1, 16, 16), m.Slice(dw2, 8, 8), // completer ID, tag
		m.Slice(dw2, 16, 16), m.Const(1, 0), m.Slice(dw0, 14, 1), m.Slice(dw1, 13, 3), dwCount, // requester, poisoned, status, Dword count
		m.Const(2, 0), m.Slice(dw0, 24, 1), byteCount, // locked read completion (Type bit 0), byte count
		m.Const(6, 0), m.Slice(dw0, 10, 2), m.Const(1, 0), m.Slice(dw2, 0, 7))) // AT, lower address

	// The last 12 bytes of the input beat taken before, and whether they
	// still have to go out after the packet's last beat.
	held := m.RegNoReset("held_data", ccDescBits)
	heldKeep := m.RegNoReset("held_keep", ccDescDWs)
	flush := m.Reg("flush", 1, 0)

	upper := m.Slice(keep, keepBits-ccDescDWs, ccDescDWs)
	upperEmpty := m.Eq(upper, m.Const(ccDescDWs, 0))
	low := m.Mux(flush, m.Const(ccPayloadFirst, 0), m.Slice(data, 0, ccPayloadFirst))
	lowKeep := m.Mux(flush, m.Const(keepBits-ccDescDWs, 0), m.Slice(keep, 0, keepBits-ccDescDWs))
	first := m.Named("first", m.And(m.Not(flush), sop))
	outData := m.Concat(low, m.Mux(first, desc, held))
	outKeep := m.Named("out_keep", m.Concat(lowKeep, m.Mux(first, m.Const(ccDescDWs, 0b111), heldKeep)))
	outLast := m.Named("out_last", m.Or(flush, m.And(eop, upperEmpty)))
	// tuser: is_sop[0] on the first beat, is_eop[0] with the index of the
	// last DW on the last; no straddling, no discontinue, parity unused.
	var ptr ir.Value = m.Const(4, 0)
	for d := 1; d < keepBits; d++ {
		ptr = m.Mux(m.Slice(outKeep, d, 1), m.Const(4, uint64(d)), ptr)
	}
	user := m.Concat(m.Const(CCUserBits-12, 0), m.Mux(outLast, m.Named("eop_ptr", ptr), m.Const(4, 0)),
		m.Const(1, 0), outLast, m.Const(5, 0), first)
	outValid := m.Named("out_valid", m.Or(flush, valid))
	outS := axis.New(m, "out", m.Concat(outData, outKeep, outLast, user), outValid)
	sk := axis.Skid(m, "out_slice", outS)

	take := m.Named("take", m.And(m.And(valid, m.Not(flush)), outS.Ready))
	m.Assign(inReady, m.And(m.Not(flush), outS.Ready))
	m.SetNext(held, m.Slice(data, keepBits*32-ccDescBits, ccDescBits))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, upper)
	m.SetEnable(heldKeep, take)
	m.SetNext(flush, m.Mux(take, m.And(eop, m.Not(upperEmpty)), m.And(flush, m.Not(outS.Ready))))

	v := sk.Data
	at := v.Width()
	pick := func(w int) ir.Value { at -= w; return m.Slice(v, at, w) }
	m.Output("s_axis_cc_tdata", pick(dataBits))
	m.Output("s_axis_cc_tkeep", pick(keepBits))
	m.Output("s_axis_cc_tlast", pick(1))
	m.Output("s_axis_cc_tuser", pick(CCUserBits))
	m.Output("s_axis_cc_tvalid", sk.Valid)
	m.Assign(sk.Ready, m.Input("s_axis_cc_tready", 1))
}
