package pcie4

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
)

// RQ descriptor and s_axis_rq_tuser fields (PG213, requester request
// descriptor; 512-bit interface: first_be[7:0], last_be[7:0],
// addr_offset, is_sop[1:0], is_sop0_ptr, is_sop1_ptr, is_eop[1:0],
// is_eop0_ptr, ...): low bits.
const (
	RQUserBits    = 137 // s_axis_rq_tuser's width on the 512-bit interface
	rqFirstBELo   = 0
	rqLastBELo    = 8
	rqIsSOPLo     = 20
	rqIsEOPLo     = 26
	rqIsEOP0PtrLo = 28
	rqDescDWs     = descDWs
)

// rqTypes maps {Fmt bit 1, Type} of a request header to the RQ request
// type (PG213's request type encodings), for the kinds RQ carries.
func rqTypes() []uint64 {
	t := make([]uint64, 64)
	set := func(data uint64, typ, code uint64) { t[data<<5|typ] = code }
	set(0, 0b00000, pg213.ReqMemRead)
	set(1, 0b00000, pg213.ReqMemWrite)
	set(0, 0b00010, pg213.ReqIORead)
	set(1, 0b00010, pg213.ReqIOWrite)
	set(1, 0b01100, pg213.ReqFetchAdd)
	set(1, 0b01101, pg213.ReqSwap)
	set(1, 0b01110, pg213.ReqCAS)
	set(0, 0b00001, pg213.ReqLockedRead)
	return t
}

// RQ builds the requester request adapter into m: memory, I/O and atomic
// requests in the manager's stream format (tlp_hdr, 128 bits with DW0 on
// top; tlp_data from byte 0; tlp_keep, tlp_sop, tlp_eop, tlp_valid/ready)
// become RQ packets toward the block (s_axis_rq_*, named as the IP names
// them): the 16-byte descriptor with Requester ID Enable set (the request
// leaves under the requester ID its header carries, as a manager issuing
// requests for a peer needs), then the payload, each beat the previous
// input beat's last 16 bytes and the next one's first 48; tuser carries
// the byte enables, is_sop, is_eop and the last DW's index.
func RQ(m *ir.Module) {
	hdr := m.Input("tlp_hdr", hdrBits)
	data := m.Input("tlp_data", dataBits)
	keep := m.Input("tlp_keep", keepBits)
	sop := m.Input("tlp_sop", 1)
	eop := m.Input("tlp_eop", 1)
	valid := m.Input("tlp_valid", 1)
	inReady := m.Wire("req_ready", 1)
	m.Output("tlp_ready", inReady)

	dw := func(i int) ir.Value { return m.Slice(hdr, 96-32*i, 32) }
	dw0, dw1, dw2, dw3 := dw(0), dw(1), dw(2), dw(3)
	fourDW := m.Slice(dw0, 29, 1) // Fmt bit 0
	length := m.Slice(dw0, 0, 10)
	dwCount := m.Concat(m.Eq(length, m.Const(10, 0)), length) // 0 encodes 1024
	addr := m.Named("rq_addr", m.Mux(fourDW, m.Concat(dw2, m.Slice(dw3, 2, 30)), m.Concat(m.Const(32, 0), m.Slice(dw2, 2, 30))))
	rt := m.Named("rq_request_type", m.ROM(m.Concat(m.Slice(dw0, 30, 1), m.Slice(dw0, 24, 5)), 4, rqTypes()))
	attr := m.Concat(m.Slice(dw0, 18, 1), m.Slice(dw0, 12, 2))
	desc := m.Named("rq_desc", m.Concat(
		m.Const(1, 0), attr, m.Slice(dw0, 20, 3), m.Const(1, 1), m.Const(16, 0), // force ECRC, attributes, TC, requester ID enable, completer ID
		m.Slice(dw1, 8, 8), m.Slice(dw1, 16, 16), m.Slice(dw0, 14, 1), rt, dwCount, // tag, requester ID, poisoned, request type, Dword count
		addr, m.Slice(dw0, 10, 2))) // address 63:2, AT
	firstBE, lastBE := m.Slice(dw1, 0, 4), m.Slice(dw1, 4, 4)

	held := m.RegNoReset("held_data", descBits)
	heldKeep := m.RegNoReset("held_keep", rqDescDWs)
	heldBE := m.RegNoReset("held_be", 8) // the packet's byte enables, for each of its beats' tuser
	flush := m.Reg("flush", 1, 0)

	upper := m.Slice(keep, keepBits-rqDescDWs, rqDescDWs)
	upperEmpty := m.Eq(upper, m.Const(rqDescDWs, 0))
	low := m.Mux(flush, m.Const(dataBits-descBits, 0), m.Slice(data, 0, dataBits-descBits))
	lowKeep := m.Mux(flush, m.Const(keepBits-rqDescDWs, 0), m.Slice(keep, 0, keepBits-rqDescDWs))
	first := m.Named("first", m.And(m.Not(flush), sop))
	outData := m.Concat(low, m.Mux(first, desc, held))
	outKeep := m.Named("out_keep", m.Concat(lowKeep, m.Mux(first, m.Const(rqDescDWs, 0xF), heldKeep)))
	outLast := m.Named("out_last", m.Or(flush, m.And(eop, upperEmpty)))
	be := m.Mux(first, m.Concat(lastBE, firstBE), heldBE)
	var ptr ir.Value = m.Const(4, 0)
	for d := 1; d < keepBits; d++ {
		ptr = m.Mux(m.Slice(outKeep, d, 1), m.Const(4, uint64(d)), ptr)
	}
	user := m.Concat(m.Const(RQUserBits-32, 0), m.Mux(outLast, m.Named("eop_ptr", ptr), m.Const(4, 0)),
		m.Const(1, 0), outLast, m.Const(5, 0), first, m.Const(4, 0), // is_eop0_ptr, is_eop, is_sop, addr_offset
		m.Const(4, 0), m.Slice(be, 4, 4), m.Const(4, 0), m.Slice(be, 0, 4)) // last_be, first_be (of the first TLP in the beat)
	outValid := m.Named("out_valid", m.Or(flush, valid))
	outS := axis.New(m, "out", m.Concat(outData, outKeep, outLast, user), outValid)
	sk := axis.Skid(m, "out_slice", outS)

	take := m.Named("take", m.And(m.And(valid, m.Not(flush)), outS.Ready))
	m.Assign(inReady, m.And(m.Not(flush), outS.Ready))
	m.SetNext(held, m.Slice(data, dataBits-descBits, descBits))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, upper)
	m.SetEnable(heldKeep, take)
	m.SetNext(heldBE, m.Concat(lastBE, firstBE))
	m.SetEnable(heldBE, m.And(take, sop))
	m.SetNext(flush, m.Mux(take, m.And(eop, m.Not(upperEmpty)), m.And(flush, m.Not(outS.Ready))))

	v := sk.Data
	at := v.Width()
	pick := func(w int) ir.Value { at -= w; return m.Slice(v, at, w) }
	m.Output("s_axis_rq_tdata", pick(dataBits))
	m.Output("s_axis_rq_tkeep", pick(keepBits))
	m.Output("s_axis_rq_tlast", pick(1))
	m.Output("s_axis_rq_tuser", pick(RQUserBits))
	m.Output("s_axis_rq_tvalid", sk.Valid)
	m.Assign(sk.Ready, m.Input("s_axis_rq_tready", 1))
}
