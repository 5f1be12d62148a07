package pcie4

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/internal/realign"
	"onic/hdlgen/ir"
)

// RQ descriptor and s_axis_rq_tuser fields (PG213, requester request
// descriptor; 512-bit interface: first_be[7:0], last_be[7:0],
// addr_offset, is_sop[1:0], is_sop0_ptr, is_sop1_ptr, is_eop[1:0],
// is_eop0_ptr, ...): low bits.
const (
	RQUserBits = 137 // s_axis_rq_tuser's width on the 512-bit interface
)

// rqTypes maps {Fmt bit 1, Type} of a request header to the RQ request
// type, for the kinds RQ carries (requestTypes, the other way round).
func rqTypes() []uint64 {
	t := make([]uint64, 64)
	for _, r := range requestTypes {
		t[b2u(r.data)<<5|r.typ] = r.code
	}
	return t
}

// RQ builds the requester request adapter into m: memory, I/O and atomic
// requests in the manager's stream format (tlp_hdr, 128 bits with DW0 on
// top; tlp_data from byte 0; tlp_keep, tlp_sop, tlp_eop, tlp_valid/ready)
// become RQ packets toward the block (s_axis_rq_*, named as the IP names
// them): the 16-byte descriptor with Requester ID Enable clear, so the
// request leaves under the block's own ID (PG213: in endpoint mode the
// block fills in its captured bus and device numbers and takes only the
// function number from the descriptor's requester field, which the tag
// table sets to the card's function 0; Requester ID Enable is for root
// ports and for switches relaying others' requests), then the payload, each beat the previous
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
		m.Const(1, 0), attr, m.Slice(dw0, 20, 3), m.Const(1, 0), m.Const(16, 0), // force ECRC, attributes, TC, requester ID enable, completer ID
		m.Slice(dw1, 8, 8), m.Slice(dw1, 16, 16), m.Slice(dw0, 14, 1), rt, dwCount, // tag, requester ID, poisoned, request type, Dword count
		addr, m.Slice(dw0, 10, 2))) // address 63:2, AT
	firstBE, lastBE := m.Slice(dw1, 0, 4), m.Slice(dw1, 4, 4)

	// The packet's byte enables, for tuser on each of its beats.
	be := m.Concat(lastBE, firstBE)
	heldBE := m.RegNoReset("held_be", 8)
	user := func(first, last, keep ir.Value) ir.Value {
		b := m.Mux(first, be, heldBE)
		return m.Concat(m.Const(RQUserBits-32, 0), m.Mux(last, realign.LastDW(m, keep), m.Const(4, 0)),
			m.Const(1, 0), last, m.Const(5, 0), first, m.Const(4, 0), // is_eop0_ptr, is_eop, is_sop, addr_offset
			m.Const(4, 0), m.Slice(b, 4, 4), m.Const(4, 0), m.Slice(b, 0, 4)) // last_be, first_be (of the beat's first TLP)
	}
	out := realign.Prepend(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: inReady}, sop, eop, desc, user)
	// Registered toward the block: its interface is a hard block's
	// input, and the descriptor is built from the header in this cycle.
	out = axis.Skid(m, "rq_out", out)
	m.SetNext(heldBE, be)
	m.SetEnable(heldBE, m.And(m.And(valid, inReady), sop))
	realign.Unpack(m, out, "s_axis_rq_", []realign.Field{{Name: "tdata", Width: dataBits}, {Name: "tkeep", Width: keepBits}, {Name: "tlast", Width: 1}, {Name: "tuser", Width: RQUserBits}})
	m.Output("s_axis_rq_tvalid", out.Valid)
	m.Assign(out.Ready, m.Input("s_axis_rq_tready", 1))
}
