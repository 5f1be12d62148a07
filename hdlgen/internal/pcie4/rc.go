package pcie4

import (
	"onic/hdlgen/internal/realign"
	"onic/hdlgen/ir"
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
// bytes and the next one's first 12, and a packet costs one cycle more
// than its beats.
func RC(m *ir.Module) {
	data := m.Input("m_axis_rc_tdata", dataBits)
	m.Input("m_axis_rc_tuser", RCUserBits) // byte enables and sop/eop flags: tkeep and tlast say the same with straddling off
	last := m.Input("m_axis_rc_tlast", 1)
	keep := m.Input("m_axis_rc_tkeep", keepBits)
	valid := m.Input("m_axis_rc_tvalid", 1)
	inReady := m.Wire("rc_ready", 1)
	m.Output("m_axis_rc_tready", inReady)

	desc := m.Named("rc_desc", m.Slice(data, 0, rcDescBits))
	fieldOf := func(lo, w int) ir.Value { return m.Slice(desc, lo, w) }
	dwCount := fieldOf(32, 11)
	hasData := m.Named("rc_has_data", m.Ne(dwCount, m.Const(11, 0)))
	locked := fieldOf(29, 1)
	attr := fieldOf(92, 3)
	dw0 := m.Concat(m.Const(1, 0), hasData, m.Const(1, 0), m.Const(4, 0b0101), locked, // Fmt, Type (Cpl/CplD, Lk)
		m.Const(1, 0), fieldOf(89, 3), m.Const(1, 0), m.Slice(attr, 2, 1), // T9, TC, T8, Attr[2]
		m.Const(2, 0), m.Const(1, 0), fieldOf(46, 1), m.Slice(attr, 0, 2), m.Const(2, 0), // LN TH, TD, EP, Attr[1:0], AT
		m.Mux(hasData, m.Slice(dwCount, 0, 10), m.Const(10, 0))) // Length
	bc := fieldOf(16, 13)
	dw1 := m.Concat(fieldOf(72, 16), fieldOf(43, 3), m.Const(1, 0), m.Slice(bc, 0, 12)) // completer, status, BCM, byte count (4096 is 0)
	dw2 := m.Concat(fieldOf(48, 16), fieldOf(64, 8), m.Const(1, 0), fieldOf(0, 7))      // requester, tag, lower address
	hdr := m.Named("rc_hdr", m.Concat(dw0, dw1, dw2))

	meta := m.Concat(hdr, fieldOf(12, 4), fieldOf(30, 1)) // header, error code, request completed
	out := realign.Strip(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: inReady}, last, meta, rcDescDWs)
	realign.Unpack(m, out, "tlp_", []realign.Field{{Name: "hdr", Width: rcDescBits}, {Name: "error", Width: 4}, {Name: "done", Width: 1}, {Name: "data", Width: dataBits}, {Name: "keep", Width: keepBits}, {Name: "sop", Width: 1}, {Name: "eop", Width: 1}})
	m.Output("tlp_valid", out.Valid)
	m.Assign(out.Ready, m.Input("tlp_ready", 1))
}
