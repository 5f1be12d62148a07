// Package tlphdr builds the TLP header field decoder of the O-NIC's PCIe
// manager in hdlgen/ir: pure wiring from a 128-bit header to its fields,
// the hardware twin of the tlp package's decoder and held equal to it by
// tests over onic's TLP vectors.
//
// The header arrives as one 128-bit signal, DW0 in bits [127:96] down to
// DW3 in bits [31:0], each DW in PCIe byte order (its byte 0 in the top 8
// bits): the layout of the generic TLP header buses of open FPGA NICs
// (such as Corundum's), independent of the vendor PCIe core. A 3-DW
// header leaves bits [31:0] unused.
package tlphdr

import "onic/hdlgen/ir"

// Fields are the decoded header fields of a request or completion.
type Fields struct {
	Fmt, Type      ir.Value // 3 and 5 bits
	TC, Attr, AT   ir.Value // 3, 3 (IDO, RO, NS) and 2 bits
	TD, EP, TH, LN ir.Value // 1 bit each
	Length         ir.Value // 10 bits, as on the wire (0 means 1024)
	FourDW         ir.Value // 1: a 4-DW header (64-bit address)
	HasData        ir.Value // 1: the TLP carries a payload
	Completion     ir.Value // 1: Cpl, CplD, CplLk or CplDLk
	Requester      ir.Value // 16 bits, bus:dev.fn (DW1 of a request, DW2 of a completion)
	Completer      ir.Value // 16 bits (completions)
	Tag            ir.Value // 10 bits, with T9 and T8
	FirstBE        ir.Value // 4 bits (memory, I/O and configuration requests)
	LastBE         ir.Value // 4 bits
	Address        ir.Value // 64 bits, DW-aligned (memory and I/O requests)
}

// Decode wires up the fields of hdr, a 128-bit header.
func Decode(m *ir.Module, hdr ir.Value) Fields {
	bits := func(hi, lo int) ir.Value { return m.Slice(hdr, lo, hi-lo+1) }
	f := Fields{
		Fmt: bits(127, 125), Type: bits(124, 120), TC: bits(118, 116),
		Attr: m.Concat(bits(114, 114), bits(109, 108)), // IDO (byte 1 bit 2), RO, NS
		AT:   bits(107, 106), TD: bits(111, 111), EP: bits(110, 110), TH: bits(112, 112), LN: bits(113, 113),
		Length:    bits(105, 96),
		FourDW:    bits(125, 125),
		HasData:   bits(126, 126),
		Completer: bits(95, 80),
		LastBE:    bits(71, 68), FirstBE: bits(67, 64),
	}
	// Completion types are 0b0101x: the requester and tag move to DW2.
	f.Completion = m.Eq(bits(124, 121), m.Const(4, 0b0101))
	f.Requester = m.Mux(f.Completion, bits(63, 48), bits(95, 80))
	f.Tag = m.Concat(bits(119, 119), bits(115, 115), m.Mux(f.Completion, bits(47, 40), bits(79, 72)))
	addr32 := m.Zext(m.Concat(bits(63, 34), m.Const(2, 0)), 64)
	addr64 := m.Concat(bits(63, 32), bits(31, 2), m.Const(2, 0))
	f.Address = m.Mux(f.FourDW, addr64, addr32)
	return f
}
