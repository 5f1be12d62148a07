package pcie4

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
)

// RC descriptor fields (PG213, requester completion descriptor).
const (
	rcDescBits = 96
	rcDescDWs  = rcDescBits / 32
	rcHeldBits = dataBits - rcDescBits
	rcHeldDWs  = keepBits - rcDescDWs
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
	field := func(lo, w int) ir.Value { return m.Slice(desc, lo, w) }
	dwCount := field(32, 11)
	hasData := m.Named("rc_has_data", m.Ne(dwCount, m.Const(11, 0)))
	locked := field(29, 1)
	attr := field(92, 3)
	dw0 := m.Concat(m.Const(1, 0), hasData, m.Const(1, 0), m.Const(4, 0b0101), locked, // Fmt, Type (Cpl/CplD, Lk)
		m.Const(1, 0), field(89, 3), m.Const(1, 0), m.Slice(attr, 2, 1), // T9, TC, T8, Attr[2]
		m.Const(2, 0), m.Const(1, 0), field(46, 1), m.Slice(attr, 0, 2), m.Const(2, 0), // LN TH, TD, EP, Attr[1:0], AT
		m.Mux(hasData, m.Slice(dwCount, 0, 10), m.Const(10, 0))) // Length
	bc := field(16, 13)
	dw1 := m.Concat(field(72, 16), field(43, 3), m.Const(1, 0), m.Slice(bc, 0, 12)) // completer, status, BCM, byte count (4096 is 0)
	dw2 := m.Concat(field(48, 16), field(64, 8), m.Const(1, 0), field(0, 7))        // requester, tag, lower address
	hdr := m.Named("rc_hdr", m.Concat(dw0, dw1, dw2))

	held := m.RegNoReset("held_data", rcHeldBits)
	heldKeep := m.RegNoReset("held_keep", rcHeldDWs)
	heldHdr := m.RegNoReset("held_hdr", rcDescBits)
	heldInfo := m.RegNoReset("held_info", 5) // error code, request completed
	heldValid := m.Reg("held_valid", 1, 0)
	heldFirst := m.RegNoReset("held_first", 1)
	heldLast := m.Reg("held_last", 1, 0)

	combine := m.Named("combine", m.And(heldValid, m.And(m.Not(heldLast), valid)))
	flush := m.Named("flush", m.And(heldValid, heldLast))
	outValid := m.Named("out_valid", m.Or(combine, flush))
	restKeep := m.Slice(keep, rcDescDWs, rcHeldDWs)
	restEmpty := m.Named("rest_empty", m.Eq(restKeep, m.Const(rcHeldDWs, 0)))
	outData := m.Concat(m.Mux(flush, m.Const(rcDescBits, 0), m.Slice(data, 0, rcDescBits)), held)
	outKeep := m.Concat(m.Mux(flush, m.Const(rcDescDWs, 0), m.Slice(keep, 0, rcDescDWs)), heldKeep)
	outEOP := m.Named("out_eop", m.Or(flush, m.And(last, restEmpty)))
	outS := axis.New(m, "out", m.Concat(heldHdr, heldInfo, outData, outKeep, heldFirst, outEOP), outValid)
	sk := axis.Skid(m, "out_slice", outS)

	take := m.Named("take", m.And(valid, m.Or(m.Not(heldValid), m.And(m.Not(heldLast), outS.Ready))))
	m.Assign(inReady, m.Or(m.Not(heldValid), m.And(m.Not(heldLast), outS.Ready)))
	sent := m.Named("sent", m.And(outValid, outS.Ready))
	startPkt := m.Named("start", m.And(take, m.Not(heldValid)))

	m.SetNext(held, m.Slice(data, rcDescBits, rcHeldBits))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, restKeep)
	m.SetEnable(heldKeep, take)
	m.SetNext(heldHdr, hdr)
	m.SetEnable(heldHdr, startPkt)
	m.SetNext(heldInfo, m.Concat(field(12, 4), field(30, 1)))
	m.SetEnable(heldInfo, startPkt)
	m.SetNext(heldFirst, startPkt)
	m.SetEnable(heldFirst, m.Or(startPkt, sent))
	nextValid := m.Mux(take, m.Or(m.Not(last), m.Not(restEmpty)), m.And(heldValid, m.Not(m.And(flush, sent))))
	nextValid = m.Mux(m.And(startPkt, last), m.Const(1, 1), nextValid)
	m.SetNext(heldValid, nextValid)
	m.SetNext(heldLast, m.Mux(take, m.And(take, last), m.And(heldLast, m.Not(sent))))

	v := sk.Data
	at := v.Width()
	pick := func(w int) ir.Value { at -= w; return m.Slice(v, at, w) }
	m.Output("tlp_hdr", pick(rcDescBits))
	m.Output("tlp_error", pick(4))
	m.Output("tlp_done", pick(1))
	m.Output("tlp_data", pick(dataBits))
	m.Output("tlp_keep", pick(keepBits))
	m.Output("tlp_sop", pick(1))
	m.Output("tlp_eop", pick(1))
	m.Output("tlp_valid", sk.Valid)
	m.Assign(sk.Ready, m.Input("tlp_ready", 1))
}
