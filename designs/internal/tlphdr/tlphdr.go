// Package tlphdr builds the TLP header field decoder of the O-NIC's PCIe
// manager in hdlgen/ir: pure wiring from a 128-bit header to its fields,
// the hardware twin of the tlp package's decoder. Every bit position comes
// from the tlp package's field table (tlp.HeaderFields), the one place the
// header layout is written down, and tests hold the decoder to the codec
// over onic's TLP vectors and random headers.
//
// The header arrives as one 128-bit signal, DW0 in bits [127:96] down to
// DW3 in bits [31:0], each DW in PCIe byte order (its byte 0 in the top 8
// bits): the layout of the generic TLP header buses of open FPGA NICs
// (such as Corundum's), independent of the vendor PCIe core. A 3-DW
// header leaves bits [31:0] unused.
package tlphdr

import (
	"fmt"
	"slices"

	"onic/hdlgen/ir"
	"onic/tlp"
)

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

// Index is the position in the 128-bit header signal of bit n of DW dw.
func Index(dw, n int) int { return (3-dw)*32 + n }

// Layout returns where the table puts a field in a header of class c and
// format f. It panics if the field is not in the table or that header does
// not carry it: a mistake in the generator, not in its input.
func Layout(name string, c tlp.Class, f tlp.Fmt) tlp.Layout {
	hf := tlp.FieldByName(name)
	if hf == nil {
		panic(fmt.Sprintf("tlphdr: no header field %q", name))
	}
	l, ok := hf.Layout(c, f, false)
	if !ok {
		panic(fmt.Sprintf("tlphdr: a %v header with Fmt %d has no %s", c, f, name))
	}
	return l
}

// Pos returns the lowest bit and the width of a one-part field in the
// 128-bit header signal.
func Pos(l tlp.Layout) (lo, w int) {
	if len(l.Parts) != 1 || l.Shift != 0 {
		panic("tlphdr: Pos of a field in several parts")
	}
	p := l.Parts[0]
	return Index(p.DW, p.Lo), p.Width()
}

// decoder wires fields out of one header signal: 128 bits, or the top of
// a header (a 96-bit completion header).
type decoder struct {
	m   *ir.Module
	hdr ir.Value
}

func (d decoder) part(p tlp.Bits) ir.Value {
	return d.m.Slice(d.hdr, Index(p.DW, p.Lo)-(128-d.hdr.Width()), p.Width())
}

// parts is the concatenation of ps and shift zero bits.
func (d decoder) parts(ps []tlp.Bits, shift int) ir.Value {
	vs := make([]ir.Value, 0, len(ps)+1)
	for _, p := range ps {
		vs = append(vs, d.part(p))
	}
	if shift > 0 {
		vs = append(vs, d.m.Const(shift, 0))
	}
	if len(vs) == 1 {
		return vs[0]
	}
	return d.m.Concat(vs...)
}

func (d decoder) field(name string, c tlp.Class) ir.Value {
	l := Layout(name, c, tlp.Fmt3DW)
	return d.parts(l.Parts, l.Shift)
}

// choose is a when sel is 1 and b when it is 0; parts the two layouts share
// at the top are wired once, above a mux of the rest.
func (d decoder) choose(sel ir.Value, a, b tlp.Layout) ir.Value {
	n := 0
	for n < len(a.Parts) && n < len(b.Parts) && a.Parts[n] == b.Parts[n] {
		n++
	}
	var top []ir.Value
	for _, p := range a.Parts[:n] {
		top = append(top, d.part(p))
	}
	rest := d.m.Mux(sel, d.parts(a.Parts[n:], a.Shift), d.parts(b.Parts[n:], b.Shift))
	if len(top) == 0 {
		return rest
	}
	return d.m.Concat(append(top, rest)...)
}

// Decode wires up the fields of hdr, a 128-bit header. With a prefix,
// the fields that take logic to work out (completion, requester, tag,
// address) are named prefix_field in the Verilog and waveforms.
func Decode(m *ir.Module, prefix string, hdr ir.Value) Fields {
	d := decoder{m, hdr}
	const (
		req = tlp.ClassMemory
		cpl = tlp.ClassCompletion
	)
	fmtLo, _ := Pos(Layout("fmt", req, tlp.Fmt3DW))
	typeLo, typeW := Pos(Layout("type", req, tlp.Fmt3DW))
	f := Fields{
		Fmt: d.field("fmt", req), Type: d.field("type", req), TC: d.field("tc", req),
		Attr: d.field("attr", req), AT: d.field("at", req),
		TD: d.field("td", req), EP: d.field("ep", req), TH: d.field("th", req), LN: d.field("ln", req),
		Length:    d.field("length", req),
		FourDW:    m.Slice(hdr, fmtLo, 1),   // Fmt bit 0
		HasData:   m.Slice(hdr, fmtLo+1, 1), // Fmt bit 1
		Completer: d.field("completer_id", cpl),
		LastBE:    d.field("last_be", req), FirstBE: d.field("first_be", req),
	}
	// Completion types are 0b0101x: the requester and tag move to DW2.
	f.Completion = m.Eq(m.Slice(hdr, typeLo+1, typeW-1), m.Const(typeW-1, TypeCode(tlp.Cpl)>>1))
	f.Requester = d.choose(f.Completion, Layout("requester_id", cpl, tlp.Fmt3DW), Layout("requester_id", req, tlp.Fmt3DW))
	f.Tag = d.choose(f.Completion, Layout("tag", cpl, tlp.Fmt3DW), Layout("tag", req, tlp.Fmt3DW))
	a32 := Layout("address", req, tlp.Fmt3DW)
	addr32 := m.Zext(d.parts(a32.Parts, a32.Shift), 64)
	a64 := Layout("address", req, tlp.Fmt4DW)
	addr64 := d.parts(a64.Parts, a64.Shift)
	f.Address = m.Mux(f.FourDW, addr64, addr32)
	if prefix != "" {
		f.Completion = m.Named(prefix+"_completion", f.Completion)
		f.Requester = m.Named(prefix+"_requester", f.Requester)
		f.Tag = m.Named(prefix+"_tag", f.Tag)
		f.Address = m.Named(prefix+"_address", f.Address)
	}
	return f
}

// Rewrite puts addr and req into a memory request header, choosing the
// 3-DW form for addresses below 4 GiB and the 4-DW form above, as the
// specification requires (§2.2.4.1); the processing hint stays.
//
// Positions come from the TLP field table: Fmt bit 0 selects the form,
// the requester ID tops DW1, and the processing hint sits under the last
// address DW. The address itself is laid out as the table's 3 and 4 DW
// layouts put it (bits 31:2 over PH, after bits 63:32 in the 4 DW form).
func Rewrite(m *ir.Module, name string, hdr, addr, req ir.Value) ir.Value {
	ir.Helper()
	fmtLo, _ := Pos(Layout("fmt", tlp.ClassMemory, tlp.Fmt3DW))
	reqLo, _ := Pos(Layout("requester_id", tlp.ClassMemory, tlp.Fmt3DW))
	ph4, phW := Pos(Layout("ph", tlp.ClassMemory, tlp.Fmt4DW))
	ph3, _ := Pos(Layout("ph", tlp.ClassMemory, tlp.Fmt3DW))
	dw0Lo, dw1Lo := Index(0, 0), Index(1, 0)
	fourDW := m.Slice(hdr, fmtLo, 1)
	ph := m.Mux(fourDW, m.Slice(hdr, ph4, phW), m.Slice(hdr, ph3, phW))
	high := m.Named(name+"_4dw", m.RedOr(m.Slice(addr, 32, 32)))
	dw0 := m.Named(name+"_dw0", m.Concat(m.Slice(hdr, fmtLo+1, 2), high, m.Slice(hdr, dw0Lo, fmtLo-dw0Lo)))
	dw1 := m.Named(name+"_dw1", m.Concat(req, m.Slice(hdr, dw1Lo, reqLo-dw1Lo)))
	long := m.Concat(dw0, dw1, m.Slice(addr, 32, 32), m.Slice(addr, 2, 30), ph)
	short := m.Concat(dw0, dw1, m.Slice(addr, 2, 30), ph, m.Const(32, 0))
	return m.Mux(high, long, short)
}

// DWs is the payload length a Length field says, in DWs: 11 bits, the
// field's 0 meaning 1024.
func DWs(m *ir.Module, length ir.Value) ir.Value {
	ir.Helper()
	return m.Concat(m.Eq(length, m.Const(10, 0)), length)
}

// SetTag puts tag (10 bits: T9, T8, then the low 8) into header hdr of a
// TLP of class c: a 128-bit header signal, or the top of one (a 96-bit
// completion header), at the TLP field table's three places for "tag".
func SetTag(m *ir.Module, hdr ir.Value, c tlp.Class, tag ir.Value) ir.Value {
	ir.Helper()
	w := hdr.Width()
	ps := Layout("tag", c, tlp.Fmt3DW).Parts
	// T9 and T8 are the first two parts, the low 8 bits the third: one
	// concatenation of the header's bits around them, from the top.
	type piece struct{ lo, n, src, srcN int }
	var pcs []piece
	for k, src := range [3][2]int{{9, 1}, {8, 1}, {0, 8}} {
		pcs = append(pcs, piece{Index(ps[k].DW, ps[k].Lo) - (128 - w), ps[k].Width(), src[0], src[1]})
	}
	slices.SortFunc(pcs, func(a, b piece) int { return b.lo - a.lo })
	var parts []ir.Value
	top := w
	for _, p := range pcs {
		if above := top - (p.lo + p.n); above > 0 {
			parts = append(parts, m.Slice(hdr, p.lo+p.n, above))
		}
		parts = append(parts, m.Slice(tag, p.src, p.srcN))
		top = p.lo
	}
	if top > 0 {
		parts = append(parts, m.Slice(hdr, 0, top))
	}
	return m.Concat(parts...)
}

// Field reads field name of a header of class c and format f out of hdr,
// a 128-bit header signal or its top bits (a 96-bit completion header),
// where the TLP field table puts it: its parts joined, the first the most
// significant, and the zeros its layout shifts in below them.
func Field(m *ir.Module, hdr ir.Value, name string, c tlp.Class, f tlp.Fmt) ir.Value {
	ir.Helper()
	l := Layout(name, c, f)
	return decoder{m, hdr}.parts(l.Parts, l.Shift)
}

// Set is a field's value for Compose: v is as wide as the field's layout
// (tlp.Layout.Width, the bits its layout shifts in included).
type Set struct {
	Name string
	V    ir.Value
}

// Compose builds a header of class c and format f, w bits wide (128, or
// 96: a 3-DW header without its unused DW3), with each field of sets
// where the TLP field table puts it — its layout's parts filled from the
// value's top bit down, the bits the layout shifts in left out — and
// zeros in every bit no field is given. A value of the wrong width, or
// two fields in one bit, is a mistake in the generator: it panics.
func Compose(m *ir.Module, w int, c tlp.Class, f tlp.Fmt, sets ...Set) ir.Value {
	ir.Helper()
	type src struct {
		v   ir.Value
		bit int
		set bool
	}
	bits := make([]src, w)
	off := 128 - w
	for _, s := range sets {
		l := Layout(s.Name, c, f)
		if s.V.Width() != l.Width() {
			panic(fmt.Sprintf("tlphdr: %s is %d bits in a %v header; the value is %d", s.Name, l.Width(), c, s.V.Width()))
		}
		b := s.V.Width() - 1
		for _, p := range l.Parts {
			for k := p.Hi; k >= p.Lo; k-- {
				i := Index(p.DW, k) - off
				if i < 0 || bits[i].set {
					panic(fmt.Sprintf("tlphdr: %s: header bit %d is outside the %d bits or taken", s.Name, i+off, w))
				}
				bits[i] = src{s.V, b, true}
				b--
			}
		}
	}
	var pieces []ir.Value
	for hi := w - 1; hi >= 0; {
		lo := hi
		if !bits[hi].set {
			for lo > 0 && !bits[lo-1].set {
				lo--
			}
			pieces = append(pieces, m.Const(hi-lo+1, 0))
		} else {
			for lo > 0 && bits[lo-1].set && bits[lo-1].v == bits[hi].v && bits[lo-1].bit == bits[lo].bit-1 {
				lo--
			}
			pieces = append(pieces, m.Slice(bits[hi].v, bits[lo].bit, hi-lo+1))
		}
		hi = lo - 1
	}
	return m.Concat(pieces...)
}

// TypeCode is kind k's Type field as the codec's table has it
// (tlp.FmtType; a message's with routing 0, its low three bits).
func TypeCode(k tlp.Kind) uint64 {
	_, t, _ := tlp.FmtType(k, false, 0)
	return uint64(t)
}

// IsType is whether typ, a header's 5-bit Type field, is kind k's.
func IsType(m *ir.Module, typ ir.Value, k tlp.Kind) ir.Value {
	return m.Eq(typ, m.Const(5, TypeCode(k)))
}

// IsMessage is whether typ, a header's 5-bit Type field, is a message's
// (the codec's 10rrr, whatever the routing rrr).
func IsMessage(m *ir.Module, typ ir.Value) ir.Value {
	return m.Eq(m.Slice(typ, 3, 2), m.Const(2, TypeCode(tlp.Msg)>>3))
}
