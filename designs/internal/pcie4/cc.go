package pcie4

import (
	"onic/designs/internal/realign"
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/tlp"
)

// CC descriptor fields (PG213, completer completion descriptor) and
// s_axis_cc_tuser fields (512-bit interface: is_sop[1:0], is_sop0_ptr,
// is_sop1_ptr, is_eop[1:0], is_eop0_ptr, is_eop1_ptr, discontinue,
// parity): low bit and width.
const (
	ccDescBits   = 96
	CCUserBits   = 81 // s_axis_cc_tuser's width on the 512-bit interface
	ccCplHdrBits = 96
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
	m.Describe("tlp_", "From the manager: completions, a 96-bit header (DW0 in the top bits), the payload from byte 0, a keep bit per DW, sop and eop.")
	m.Describe("s_axis_cc_", "To the PCIe block: completer completions (PG213 CC), a 12-byte descriptor then the payload.")
	hdr := m.Input("tlp_hdr", ccCplHdrBits)
	data := m.Input("tlp_data", dataBits)
	keep := m.Input("tlp_keep", keepBits)
	sop := m.Input("tlp_sop", 1)
	eop := m.Input("tlp_eop", 1)
	valid := m.Input("tlp_valid", 1)
	inReady := m.Wire("cpl_ready", 1)
	m.Output("tlp_ready", inReady)

	// The descriptor, from the header's fields (tlp's field table) into
	// the descriptor's (pg213's).
	hf := func(name string) ir.Value { return tlphdr.Field(m, hdr, name, tlp.ClassCompletion, tlp.Fmt3DW) }
	hasData := m.Slice(hf("fmt"), 1, 1)
	length := hf("length")
	lenDW := m.Concat(m.Eq(length, m.Const(10, 0)), length) // 0 encodes 1024
	dwCount := m.Named("cc_dword_count", m.Mux(hasData, lenDW, m.Const(11, 0)))
	bc12 := hf("byte_count")
	byteCount := m.Named("cc_byte_count", m.Concat(m.Eq(bc12, m.Const(12, 0)), bc12)) // 0 encodes 4096
	desc := m.Named("cc_desc", pack(m, ccDescBits,
		part{pg213.CplAttr, hf("attr")}, part{pg213.CplTC, hf("tc")}, part{pg213.CplCompleterID, hf("completer_id")},
		part{pg213.CplTag, m.Slice(hf("tag"), 0, pg213.CplTag.W)}, part{pg213.CplRequesterID, hf("requester_id")},
		part{pg213.CplPoisoned, hf("ep")}, part{pg213.CplStatus, hf("status")}, part{pg213.CplDWCount, dwCount},
		part{pg213.CplLocked, m.Slice(hf("type"), 0, 1)}, // CplLk and CplDLk: Type bit 0
		part{pg213.CplByteCount, byteCount}, part{pg213.CplAT, hf("at")}, part{pg213.CplLowerAddress, hf("lower_address")}))

	// tuser: is_sop[0] on the first beat, is_eop[0] with the index of the
	// last DW on the last; no straddling, no discontinue, parity unused.
	user := func(first, last, keep ir.Value) ir.Value {
		return m.Concat(m.Const(CCUserBits-12, 0), m.Mux(last, realign.LastDW(m, keep), m.Const(4, 0)),
			m.Const(1, 0), last, m.Const(5, 0), first)
	}
	out := realign.Prepend(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: inReady}, sop, eop, desc, user)
	// Registered toward the block: its interface is a hard block's
	// input, and the descriptor is built from the header in this cycle.
	realign.SkidOut(m, "cc_out", out, "s_axis_cc_")
}
