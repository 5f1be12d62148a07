package pcie4

import (
	"onic/designs/internal/realign"
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/tlp"
)

// RC descriptor fields (PG213, requester completion descriptor).
const (
	rcDescBits = 96
	rcDescDWs  = rcDescBits / 32
	// RCUserBits is m_axis_rc_tuser's width on the 512-bit interface.
	RCUserBits = 161
)

// RC builds the requester completion adapter into m: RC packets from the
// block (m_axis_rc_*, named as the IP names them; straddling off) become
// completions in the manager's stream format (tlp_hdr, the 3 DW header
// with DW0 on top; tlp_data from byte 0; tlp_keep, tlp_sop, tlp_eop,
// tlp_valid/ready). The header takes the descriptor's fields (the lower
// address's 7 low bits, as the TLP carries them); the block's error code
// and request-completed flag leave on tlp_error and tlp_done, read with
// the first beat. Like CQ, each output beat is one input beat's last 52
// bytes and the next one's first 12, and packets take a beat a cycle,
// back to back.
func RC(m *ir.Module) {
	m.Describe("m_axis_rc_", "From the PCIe block: requester completions (PG213 RC), a 12-byte descriptor then the payload.")
	m.Describe("tlp_", "To the card: the completions, a 96-bit header (DW0 in the top bits), the block's error code, whether the request is done, the payload from byte 0, keep, sop and eop.")
	data := m.Input("m_axis_rc_tdata", dataBits)
	m.Input("m_axis_rc_tuser", RCUserBits) // byte enables and sop/eop flags: tkeep and tlast say the same with straddling off
	last := m.Input("m_axis_rc_tlast", 1)
	keep := m.Input("m_axis_rc_tkeep", keepBits)
	valid := m.Input("m_axis_rc_tvalid", 1)
	inReady := m.Wire("rc_ready", 1)
	m.Output("m_axis_rc_tready", inReady)

	desc := m.Named("rc_desc", m.Slice(data, 0, rcDescBits))
	fieldOf := func(f pg213.Field) ir.Value { return field(m, desc, f) }
	dwCount := fieldOf(pg213.CplDWCount)
	hasData := m.Named("rc_has_data", m.Ne(dwCount, m.Const(11, 0)))
	locked := fieldOf(pg213.CplLocked)
	attr := fieldOf(pg213.CplAttr)
	bc := fieldOf(pg213.CplByteCount)
	// The completion's header, by the TLP field table: Cpl or CplD, CplLk
	// or CplDLk (Type 0101x), with the 7 low bits of the lower address.
	hdr := m.Named("rc_hdr", tlphdr.Compose(m, rcDescBits, tlp.ClassCompletion, tlp.Fmt3DW,
		tlphdr.Set{Name: "fmt", V: m.Concat(m.Const(1, 0), hasData, m.Const(1, 0))}, tlphdr.Set{Name: "type", V: m.Concat(m.Const(4, 0b0101), locked)},
		tlphdr.Set{Name: "tc", V: fieldOf(pg213.CplTC)}, tlphdr.Set{Name: "attr", V: attr}, tlphdr.Set{Name: "ep", V: fieldOf(pg213.CplPoisoned)},
		tlphdr.Set{Name: "length", V: m.Mux(hasData, m.Slice(dwCount, 0, 10), m.Const(10, 0))},
		tlphdr.Set{Name: "completer_id", V: fieldOf(pg213.CplCompleterID)}, tlphdr.Set{Name: "status", V: fieldOf(pg213.CplStatus)},
		tlphdr.Set{Name: "byte_count", V: m.Slice(bc, 0, 12)}, // 4096 is 0
		tlphdr.Set{Name: "requester_id", V: fieldOf(pg213.CplRequesterID)}, tlphdr.Set{Name: "tag", V: m.Zext(fieldOf(pg213.CplTag), 10)},
		tlphdr.Set{Name: "lower_address", V: m.Slice(fieldOf(pg213.CplRCLowerAddress), 0, 7)}))

	meta := []axis.Field{{Name: "hdr", Value: hdr}, {Name: "error", Value: fieldOf(pg213.CplErrorCode)}, {Name: "done", Value: fieldOf(pg213.CplRequestDone)}}
	out := realign.Strip(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: inReady}, last, meta, rcDescDWs)
	realign.Outputs(m, out, "tlp_", "hdr", "error", "done", "data", "keep", "sop", "eop")
	m.Output("tlp_valid", out.Valid)
	m.Assign(out.Ready, m.Input("tlp_ready", 1))
}
