package pcie4

import (
	"onic/designs/internal/realign"
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/tlp"
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
// the byte enables, is_sop, is_eop, the last DW's index and, on the
// first beat, tlp_seq as seq_num0.
func RQ(m *ir.Module) {
	m.Describe("tlp_", "From the card: requests for the host, a 128-bit header (DW0 in the top bits), the payload from byte 0 of the first beat, a keep bit per DW; sop and eop frame a TLP.")
	m.Describe("s_axis_rq_", "To the PCIe block: requester requests (PG213 RQ), a 16-byte descriptor then the payload; tuser carries the byte enables.")
	hdr := m.Input("tlp_hdr", hdrBits)
	data := m.Input("tlp_data", dataBits)
	keep := m.Input("tlp_keep", keepBits)
	sop := m.Input("tlp_sop", 1)
	eop := m.Input("tlp_eop", 1)
	valid := m.Input("tlp_valid", 1)
	// The sequence number for the block to return on pcie_rq_seq_num0
	// once the request is past the point an interrupt could overtake it
	// (PG213, "Transmit Transaction Ordering"), with the first beat.
	seq := m.Input("tlp_seq", pg213.SeqNum0.W)
	inReady := m.Wire("req_ready", 1)
	m.Output("tlp_ready", inReady)

	// The descriptor, from the header's fields (tlp's field table) into
	// the descriptor's (pg213's).
	hf := func(name string, f tlp.Fmt) ir.Value { return tlphdr.Field(m, hdr, name, tlp.ClassMemory, f) }
	fmtBits := hf("fmt", tlp.Fmt3DW)
	fourDW := m.Slice(fmtBits, 0, 1) // Fmt bit 0
	length := hf("length", tlp.Fmt3DW)
	dwCount := m.Concat(m.Eq(length, m.Const(10, 0)), length) // 0 encodes 1024
	byteAddr := m.Named("rq_byte_addr", m.Mux(fourDW, hf("address", tlp.Fmt4DW), m.Zext(hf("address", tlp.Fmt3DW), 64)))
	addr := m.Named("rq_addr", m.Slice(byteAddr, 2, 62))
	rt := m.Named("rq_request_type", m.ROM(m.Concat(m.Slice(fmtBits, 1, 1), hf("type", tlp.Fmt3DW)), pg213.ReqType.W, rqTypes()))
	desc := m.Named("rq_desc", pack(m, descBits,
		part{pg213.ReqAttr, hf("attr", tlp.Fmt3DW)}, part{pg213.ReqTC, hf("tc", tlp.Fmt3DW)},
		part{pg213.ReqTag, m.Slice(hf("tag", tlp.Fmt3DW), 0, pg213.ReqTag.W)}, part{pg213.ReqRequesterID, hf("requester_id", tlp.Fmt3DW)},
		part{pg213.ReqPoisoned, hf("ep", tlp.Fmt3DW)}, part{pg213.ReqType, rt}, part{pg213.ReqDWCount, dwCount},
		part{pg213.ReqAddress, addr}, part{pg213.ReqAT, hf("at", tlp.Fmt3DW)}))
	firstBE, lastBE := hf("first_be", tlp.Fmt3DW), hf("last_be", tlp.Fmt3DW)

	// The packet's byte enables, for tuser on each of its beats.
	be := m.Named("rq_be", m.Concat(lastBE, firstBE))
	heldBE := m.RegNoReset("held_be", 8)
	user := func(first, last, keep ir.Value) ir.Value {
		b := m.Named("beat_be", m.Mux(first, be, heldBE))
		s := pg213.SeqNum0
		return m.Concat(m.Const(RQUserBits-s.Lo-s.W, 0), m.Mux(first, seq, m.Const(s.W, 0)), m.Const(s.Lo-32, 0), // seq_num0
			m.Mux(last, realign.LastDW(m, keep), m.Const(4, 0)),
			m.Const(1, 0), last, m.Const(5, 0), first, m.Const(4, 0), // is_eop0_ptr, is_eop, is_sop, addr_offset
			m.Const(4, 0), m.Slice(b, 4, 4), m.Const(4, 0), m.Slice(b, 0, 4)) // last_be, first_be (of the beat's first TLP)
	}
	out := realign.Prepend(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: inReady}, sop, eop, desc, user)
	// Registered toward the block: its interface is a hard block's
	// input, and the descriptor is built from the header in this cycle.
	m.SetNext(heldBE, be)
	m.SetEnable(heldBE, m.And(m.And(valid, inReady), sop))
	realign.SkidOut(m, "rq_out", out, "s_axis_rq_")
}
