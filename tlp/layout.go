package tlp

import "encoding/binary"

// The header bit layout: one table of fields (PCIe Base Specification 5.0
// §2.2, non-flit mode). Every other description of the layout in onic is
// derived from it: the decoders and the Header view in this package use
// the constants below, which the table is built from; designs/internal/tlphdr builds
// the RTL header decoder by walking HeaderFields; and tests hold the
// decoders, the Header view and the RTL decoder to the table, field by
// field, for every kind.
//
// Positions are bit numbers within one DW read as a big-endian 32-bit word
// (bit 31 is the top bit of the DW's first byte on the wire), the way the
// specification's figures number them.

// Field positions: lo is the lowest bit, w the width. DW0 is common to all
// kinds; the rest depends on the class.
const (
	// DW0.
	fmtLo, fmtW       = 29, 3
	typeLo, typeW     = 24, 5
	t9Lo              = 23 // tag bit 9
	tcLo, tcW         = 20, 3
	t8Lo              = 19 // tag bit 8
	idoLo             = 18 // attribute bit 2 (ID-based ordering)
	lnLo              = 17
	thLo              = 16
	tdLo              = 15
	epLo              = 14
	attrLo, attrW     = 12, 2 // attribute bits 1:0 (RO, NS)
	atLo, atW         = 10, 2
	lengthLo, lengthW = 0, 10

	// DW1 of a request (memory, I/O, atomic, configuration, message).
	reqIDLo, idW  = 16, 16 // requester ID
	tagLo, tagW   = 8, 8   // tag bits 7:0
	lastBELo, beW = 4, 4
	firstBELo     = 0
	msgCodeLo     = 0 // message code, 8 bits

	// DW1 of a completion: completer ID (bits 31:16), then these.
	statusLo, statusW = 13, 3
	bcmLo             = 12
	byteCountLo, bcW  = 0, 12

	// DW2 of a completion: requester ID (31:16), tag (15:8), then this.
	lowerAddrLo, lowerAddrW = 0, 7

	// DW2 of a configuration request: target ID (31:16), then the
	// register's byte offset in bits 11:2 (Extended Register Number 11:8,
	// Register Number 7:2).
	registerLo, registerW = 2, 10

	// The address DW(s) of a memory, I/O or atomic request: address bits
	// 31:2 over the Processing Hint in bits 1:0 (the last DW), after
	// address bits 63:32 (DW2) in a 4 DW header.
	addrLo, addrW = 2, 30
	phLo, phW     = 0, 2
)

// addrMask keeps address bits 31:2 of the last address DW in place.
const addrMask = (1<<addrW - 1) << addrLo

// get returns w bits of dw from bit lo.
func get(dw uint32, lo, w uint) uint32 { return dw >> lo & (1<<w - 1) }

// bit reports bit lo of dw.
func bit(dw uint32, lo uint) bool { return dw>>lo&1 != 0 }

// Bits is a run of header bits: DW index (0-3) and bit positions within
// that DW read big-endian, Hi down to Lo.
type Bits struct {
	DW     int
	Hi, Lo int
}

// Width is the number of bits in the run.
func (b Bits) Width() int { return b.Hi - b.Lo + 1 }

// Where says which headers a Layout applies to beyond its classes.
type Where uint8

// Where values.
const (
	Always       Where = iota
	Header3DW          // only a 3 DW header
	Header4DW          // only a 4 DW header
	RoutedByAddr       // only a message routed by address
	RoutedOther        // only a message not routed by address
)

// Layout is where one field sits in the headers of some classes: Parts
// concatenated, most significant first, then shifted left by Shift (bits
// the field has but the header does not carry, always zero).
type Layout struct {
	Classes []Class // the classes that carry the field here; nil for every class
	Where   Where
	Parts   []Bits
	Shift   int
}

// Width is the field's width in this layout, with the shifted-in zeros.
func (l Layout) Width() int {
	n := l.Shift
	for _, p := range l.Parts {
		n += p.Width()
	}
	return n
}

// HeaderField is one named field and its layouts. Name is the name the
// field has in TLP's JSON form.
type HeaderField struct {
	Name    string
	Layouts []Layout
}

// Layout returns the field's layout in a header of class c and format f,
// and false if such a header does not carry the field. For messages,
// routedByAddr says whether the message is routed by address.
func (f *HeaderField) Layout(c Class, fm Fmt, routedByAddr bool) (Layout, bool) {
	for _, l := range f.Layouts {
		if l.Classes != nil && !hasClass(l.Classes, c) {
			continue
		}
		switch l.Where {
		case Header3DW:
			if fm.Is4DW() {
				continue
			}
		case Header4DW:
			if !fm.Is4DW() {
				continue
			}
		case RoutedByAddr:
			if !routedByAddr {
				continue
			}
		case RoutedOther:
			if routedByAddr {
				continue
			}
		}
		return l, true
	}
	return Layout{}, false
}

func hasClass(cs []Class, c Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// Extract reads the field from a header by the table alone: the slow,
// obviously-correct reading that tests hold the decoders to. h must hold
// the whole header (HeaderLen bytes). It returns false if the header's
// kind does not carry the field.
func (f *HeaderField) Extract(h Header) (uint64, bool) {
	k := h.Kind()
	l, ok := f.Layout(k.Class(), h.Fmt(), Routing(h.Type()&7) == RouteByAddress)
	if !ok {
		return 0, false
	}
	var v uint64
	for _, p := range l.Parts {
		dw := binary.BigEndian.Uint32(h[4*p.DW:])
		v = v<<p.Width() | uint64(get(dw, uint(p.Lo), uint(p.Width())))
	}
	return v << l.Shift, true
}

// run is a one-DW run from lo, w bits wide.
func run(dw, lo, w int) Bits { return Bits{DW: dw, Hi: lo + w - 1, Lo: lo} }

var (
	requests  = []Class{ClassMemory, ClassIO, ClassAtomic, ClassConfig, ClassMessage}
	withBE    = []Class{ClassMemory, ClassIO, ClassAtomic, ClassConfig}
	addressed = []Class{ClassMemory, ClassIO, ClassAtomic}
	msgs      = []Class{ClassMessage}
	cpls      = []Class{ClassCompletion}
	configs   = []Class{ClassConfig}
)

// HeaderFields is the table: every field of a request or completion
// header, in wire order of its first bit.
var HeaderFields = []HeaderField{
	{"fmt", []Layout{{Parts: []Bits{run(0, fmtLo, fmtW)}}}},
	{"type", []Layout{{Parts: []Bits{run(0, typeLo, typeW)}}}},
	{"tc", []Layout{{Parts: []Bits{run(0, tcLo, tcW)}}}},
	{"attr", []Layout{{Parts: []Bits{run(0, idoLo, 1), run(0, attrLo, attrW)}}}},
	{"ln", []Layout{{Parts: []Bits{run(0, lnLo, 1)}}}},
	{"th", []Layout{{Parts: []Bits{run(0, thLo, 1)}}}},
	{"td", []Layout{{Parts: []Bits{run(0, tdLo, 1)}}}},
	{"ep", []Layout{{Parts: []Bits{run(0, epLo, 1)}}}},
	{"at", []Layout{{Parts: []Bits{run(0, atLo, atW)}}}},
	{"length", []Layout{{Parts: []Bits{run(0, lengthLo, lengthW)}}}},
	{"tag", []Layout{
		{Classes: cpls, Parts: []Bits{run(0, t9Lo, 1), run(0, t8Lo, 1), run(2, tagLo, tagW)}},
		{Parts: []Bits{run(0, t9Lo, 1), run(0, t8Lo, 1), run(1, tagLo, tagW)}},
	}},
	{"requester_id", []Layout{
		{Classes: cpls, Parts: []Bits{run(2, reqIDLo, idW)}},
		{Classes: requests, Parts: []Bits{run(1, reqIDLo, idW)}},
	}},
	{"completer_id", []Layout{
		{Classes: cpls, Parts: []Bits{run(1, reqIDLo, idW)}},
		{Classes: configs, Parts: []Bits{run(2, reqIDLo, idW)}},
	}},
	{"last_be", []Layout{{Classes: withBE, Parts: []Bits{run(1, lastBELo, beW)}}}},
	{"first_be", []Layout{{Classes: withBE, Parts: []Bits{run(1, firstBELo, beW)}}}},
	{"message_code", []Layout{{Classes: msgs, Parts: []Bits{run(1, msgCodeLo, 8)}}}},
	{"status", []Layout{{Classes: cpls, Parts: []Bits{run(1, statusLo, statusW)}}}},
	{"bcm", []Layout{{Classes: cpls, Parts: []Bits{run(1, bcmLo, 1)}}}},
	{"byte_count", []Layout{{Classes: cpls, Parts: []Bits{run(1, byteCountLo, bcW)}}}},
	{"lower_address", []Layout{{Classes: cpls, Parts: []Bits{run(2, lowerAddrLo, lowerAddrW)}}}},
	{"register", []Layout{{Classes: configs, Parts: []Bits{run(2, registerLo, registerW)}, Shift: 2}}},
	{"address", []Layout{
		{Classes: addressed, Where: Header3DW, Parts: []Bits{run(2, addrLo, addrW)}, Shift: 2},
		{Classes: addressed, Where: Header4DW, Parts: []Bits{run(2, 0, 32), run(3, addrLo, addrW)}, Shift: 2},
		{Classes: msgs, Where: RoutedByAddr, Parts: []Bits{run(2, 0, 32), run(3, 0, 32)}},
	}},
	{"ph", []Layout{
		{Classes: addressed, Where: Header3DW, Parts: []Bits{run(2, phLo, phW)}},
		{Classes: addressed, Where: Header4DW, Parts: []Bits{run(3, phLo, phW)}},
	}},
	{"message_data", []Layout{
		{Classes: msgs, Where: RoutedOther, Parts: []Bits{run(2, 0, 32), run(3, 0, 32)}},
	}},
}

// FieldByName returns the table's entry for a field, or nil.
func FieldByName(name string) *HeaderField {
	for i := range HeaderFields {
		if HeaderFields[i].Name == name {
			return &HeaderFields[i]
		}
	}
	return nil
}
