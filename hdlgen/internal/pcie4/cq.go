// Package pcie4 builds the adapter between AMD's UltraScale+ integrated
// block for PCI Express (PCIE4, product guide PG213) and the PCIe
// manager's generic TLP streams, in hdlgen/ir. It is held to the Go model
// of the block's interface in pcie/pg213.
//
// So far it has the completer request side: CQ packets (a 16-byte
// descriptor, then the payload, on a 512-bit AXI4-Stream with straddling
// off, as for Gen3 x16 at 250 MHz) become the manager's s_host_tlp_*
// stream (a 128-bit header, the payload from byte 0 of the first beat, a
// keep bit per DW, the BAR the block matched and the physical function
// it matched it for).
package pcie4

import (
	"onic/hdlgen/internal/realign"
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
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
	funcLo         = 104 // target function [111:104]; its low bits: the block's physical functions 0-3
	funcW          = 2
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
	hdrBits        = 128
)

// requestTypes are the CQ and RQ request types the adapters convert
// (PG213's request type encodings) with the TLP Type field of each and
// whether it carries data (PCIe Base Specification Table 2-3).
var requestTypes = []struct {
	code, typ uint64
	data      bool
}{
	{pg213.ReqMemRead, 0b00000, false},
	{pg213.ReqMemWrite, 0b00000, true},
	{pg213.ReqIORead, 0b00010, false},
	{pg213.ReqIOWrite, 0b00010, true},
	{pg213.ReqFetchAdd, 0b01100, true},
	{pg213.ReqSwap, 0b01101, true},
	{pg213.ReqCAS, 0b01110, true},
	{pg213.ReqLockedRead, 0b00001, false},
}

// CQ builds the completer request adapter into m: ports m_axis_cq_*
// toward the block (with the block's own names, so it connects to the IP
// instance by name) and tlp_* toward the manager (tlp_func: the
// descriptor's target function, 0 for the O-NIC and 1-3 for the
// stand-ins of lent devices). A packet takes one
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
	fieldOf := func(lo, w int) ir.Value { return m.Slice(desc, lo, w) }
	rt := m.Named("cq_request_type", fieldOf(rtLo, rtW))
	typTab, dataTab := make([]uint64, 1<<rtW), make([]uint64, 1<<rtW) // by request type
	for _, t := range requestTypes {
		typTab[t.code], dataTab[t.code] = t.typ, b2u(t.data)
	}
	addr := m.Named("cq_addr", m.Concat(fieldOf(addrLo, addrW), m.Const(2, 0)))
	fourDW := m.Named("cq_4dw", m.RedOr(m.Slice(addr, 32, 32)))
	hasData := m.Named("cq_has_data", m.ROM(rt, 1, dataTab))
	attr := fieldOf(attrLo, attrW)
	dw0 := m.Concat(m.Const(1, 0), hasData, fourDW, m.ROM(rt, 5, typTab), // Fmt, Type
		m.Const(1, 0), fieldOf(tcLo, tcW), m.Const(1, 0), m.Slice(attr, 2, 1), // T9, TC, T8, Attr[2]
		m.Const(4, 0), m.Slice(attr, 0, 2), fieldOf(atLo, atW), // LN TH TD EP, Attr[1:0], AT
		m.Slice(fieldOf(dwLo, dwW), 0, 10)) // Length (1024 is 0)
	dw1 := m.Concat(fieldOf(reqLo, reqW), fieldOf(tagLo, tagW), m.Slice(user, lastBELo, beW), m.Slice(user, firstBELo, beW))
	long := m.Concat(dw0, dw1, m.Slice(addr, 32, 32), m.Slice(addr, 0, 32))
	short := m.Concat(dw0, dw1, m.Slice(addr, 0, 32), m.Const(32, 0))
	hdr := m.Named("cq_hdr", m.Mux(fourDW, long, short))

	out := realign.Strip(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: inReady}, last, m.Concat(hdr, fieldOf(funcLo, funcW), fieldOf(barLo, barW)), descDWs)
	realign.Unpack(m, out, "tlp_", []realign.Field{{Name: "hdr", Width: hdrBits}, {Name: "func", Width: funcW}, {Name: "bar", Width: barW}, {Name: "data", Width: dataBits}, {Name: "keep", Width: keepBits}, {Name: "sop", Width: 1}, {Name: "eop", Width: 1}})
	m.Output("tlp_valid", out.Valid)
	m.Assign(out.Ready, m.Input("tlp_ready", 1))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
