// Package pcie4 builds the adapter between AMD's UltraScale+ integrated
// block for PCI Express (PCIE4, product guide PG213) and the PCIe
// manager's generic TLP streams, in hdlgen/ir. It is held to the Go model
// of the block's interface in pcie/pg213.
//
// So far it has the completer request side: CQ packets (a 16-byte
// descriptor, then the payload, on a 512-bit AXI4-Stream with straddling
// off, as for Gen3 x16 at 250 MHz) become the manager's s_host_tlp_*
// stream (a 128-bit header, the payload from byte 0 of the first beat, a
// keep bit per DW, the BAR the block matched).
package pcie4

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
)

// CQ descriptor fields (PG213, completer request descriptor for memory,
// I/O and atomic requests) and m_axis_cq_tuser fields (512-bit
// interface): low bit and width.
const (
	atLo, atW      = 0, 2
	addrLo, addrW  = 2, 62
	dwLo, dwW      = 64, 11
	rtLo, rtW      = 75, 4
	reqLo, reqW    = 80, 16
	tagLo, tagW    = 96, 8
	barLo, barW    = 112, 3
	tcLo, tcW      = 121, 3
	attrLo, attrW  = 124, 3
	firstBELo, beW = 0, 4 // tuser first_be[3:0]
	lastBELo       = 8    // tuser last_be[3:0]
	TUserBits      = 183  // m_axis_cq_tuser's width on the 512-bit interface
	dataBits       = 512
	descBits       = 128
	keepBits       = dataBits / 32
	descDWs        = descBits / 32
	heldBits       = dataBits - descBits
	heldDWs        = keepBits - descDWs
	hdrBits        = 128
)

// typeOf maps a CQ request type to the TLP Type field and whether the
// request carries data (PG213's request type encodings; PCIe Base
// Specification Table 2-3 for the Types).
var typeOf = [16]struct {
	typ  uint64
	data bool
}{
	0b0000: {0b00000, false}, // memory read
	0b0001: {0b00000, true},  // memory write
	0b0010: {0b00010, false}, // I/O read
	0b0011: {0b00010, true},  // I/O write
	0b0100: {0b01100, true},  // FetchAdd
	0b0101: {0b01101, true},  // Swap
	0b0110: {0b01110, true},  // CAS
	0b0111: {0b00001, false}, // locked memory read
}

// CQ builds the completer request adapter into m: ports m_axis_cq_*
// toward the block (with the block's own names, so it connects to the IP
// instance by name) and tlp_* toward the manager. A packet takes one
// cycle more than its beats (the last beat is flushed on its own), and
// each output beat is the previous input beat's last 48 bytes and the
// next one's first 16.
func CQ(m *ir.Module) {
	data := m.Input("m_axis_cq_tdata", dataBits)
	user := m.Input("m_axis_cq_tuser", TUserBits)
	last := m.Input("m_axis_cq_tlast", 1)
	keep := m.Input("m_axis_cq_tkeep", keepBits)
	valid := m.Input("m_axis_cq_tvalid", 1)
	inReady := m.Wire("cq_ready", 1)
	m.Output("m_axis_cq_tready", inReady)

	// The header of the packet whose descriptor is on the bus.
	desc := m.Named("cq_desc", m.Slice(data, 0, descBits))
	field := func(lo, w int) ir.Value { return m.Slice(desc, lo, w) }
	rt := m.Named("cq_request_type", field(rtLo, rtW))
	var typTab, dataTab []uint64
	for _, t := range typeOf {
		typTab = append(typTab, t.typ)
		dataTab = append(dataTab, b2u(t.data))
	}
	addr := m.Named("cq_addr", m.Concat(field(addrLo, addrW), m.Const(2, 0)))
	fourDW := m.Named("cq_4dw", m.RedOr(m.Slice(addr, 32, 32)))
	hasData := m.Named("cq_has_data", m.ROM(rt, 1, dataTab))
	attr := field(attrLo, attrW)
	dw0 := m.Concat(m.Const(1, 0), hasData, fourDW, m.ROM(rt, 5, typTab), // Fmt, Type
		m.Const(1, 0), field(tcLo, tcW), m.Const(1, 0), m.Slice(attr, 2, 1), // T9, TC, T8, Attr[2]
		m.Const(4, 0), m.Slice(attr, 0, 2), field(atLo, atW), // LN TH TD EP, Attr[1:0], AT
		m.Slice(field(dwLo, dwW), 0, 10)) // Length (1024 is 0)
	dw1 := m.Concat(field(reqLo, reqW), field(tagLo, tagW), m.Slice(user, lastBELo, beW), m.Slice(user, firstBELo, beW))
	long := m.Concat(dw0, dw1, m.Slice(addr, 32, 32), m.Slice(addr, 0, 32))
	short := m.Concat(dw0, dw1, m.Slice(addr, 0, 32), m.Const(32, 0))
	hdr := m.Named("cq_hdr", m.Mux(fourDW, long, short))

	// The beat being assembled: the last 48 bytes of the input beat taken
	// before, waiting for the next beat's first 16.
	held := m.RegNoReset("held_data", heldBits)
	heldKeep := m.RegNoReset("held_keep", heldDWs)
	heldHdr := m.RegNoReset("held_hdr", hdrBits)
	heldBAR := m.RegNoReset("held_bar", barW)
	heldValid := m.Reg("held_valid", 1, 0)
	heldFirst := m.RegNoReset("held_first", 1) // the beat will be its packet's first
	heldLast := m.Reg("held_last", 1, 0)       // the packet's input has ended: flush without waiting

	// Combine the held bytes with the next beat's first 16, or flush them
	// alone after the packet's last beat.
	combine := m.Named("combine", m.And(heldValid, m.And(m.Not(heldLast), valid)))
	flush := m.Named("flush", m.And(heldValid, heldLast))
	outValid := m.Named("out_valid", m.Or(combine, flush))
	restKeep := m.Slice(keep, descDWs, heldDWs)
	restEmpty := m.Named("rest_empty", m.Eq(restKeep, m.Const(heldDWs, 0)))
	outData := m.Concat(m.Mux(flush, m.Const(descBits, 0), m.Slice(data, 0, descBits)), held)
	outKeep := m.Concat(m.Mux(flush, m.Const(descDWs, 0), m.Slice(keep, 0, descDWs)), heldKeep)
	outEOP := m.Named("out_eop", m.Or(flush, m.And(last, restEmpty)))
	packed := m.Concat(heldHdr, heldBAR, outData, outKeep, heldFirst, outEOP)
	outS := axis.New(m, "out", packed, outValid)
	sk := axis.Skid(m, "out_slice", outS)

	// An input beat is taken when nothing is held (a packet's first
	// beat), or when the held bytes go out with it.
	take := m.Named("take", m.And(valid, m.Or(m.Not(heldValid), m.And(m.Not(heldLast), outS.Ready))))
	m.Assign(inReady, m.Or(m.Not(heldValid), m.And(m.Not(heldLast), outS.Ready)))
	sent := m.Named("sent", m.And(outValid, outS.Ready))
	startPkt := m.Named("start", m.And(take, m.Not(heldValid)))

	m.SetNext(held, m.Slice(data, descBits, heldBits))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, restKeep)
	m.SetEnable(heldKeep, take)
	m.SetNext(heldHdr, hdr)
	m.SetEnable(heldHdr, startPkt)
	m.SetNext(heldBAR, field(barLo, barW))
	m.SetEnable(heldBAR, startPkt)
	// held_first: set by a packet's first beat, cleared once a beat has
	// gone out.
	m.SetNext(heldFirst, startPkt)
	m.SetEnable(heldFirst, m.Or(startPkt, sent))
	// What is held after this edge: a packet continues while the input
	// has not ended, and its last bytes wait for a flush unless they went
	// out with the beat that ended it.
	takeLast := m.And(take, last)
	nextValid := m.Mux(take, m.Or(m.Not(last), m.Not(restEmpty)), m.And(heldValid, m.Not(m.And(flush, sent))))
	// A one-beat packet (the descriptor and up to 48 bytes) is flushed on
	// its own too, even when it has no payload (a read's header).
	nextValid = m.Mux(m.And(startPkt, last), m.Const(1, 1), nextValid)
	m.SetNext(heldValid, nextValid)
	m.SetNext(heldLast, m.Mux(take, takeLast, m.And(heldLast, m.Not(sent))))

	v := sk.Data
	at := v.Width()
	pick := func(w int) ir.Value { at -= w; return m.Slice(v, at, w) }
	m.Output("tlp_hdr", pick(hdrBits))
	m.Output("tlp_bar", pick(barW))
	m.Output("tlp_data", pick(dataBits))
	m.Output("tlp_keep", pick(keepBits))
	m.Output("tlp_sop", pick(1))
	m.Output("tlp_eop", pick(1))
	m.Output("tlp_valid", sk.Valid)
	m.Assign(sk.Ready, m.Input("tlp_ready", 1))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
