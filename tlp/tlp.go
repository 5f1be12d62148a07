package tlp

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// TLP holds the decoded fields of one Transaction Layer Packet. Decode fills
// it from wire bytes without allocating (Prefixes and Data are views into the
// decoded buffer); AppendBinary encodes it. A TLP is reused across Decode
// calls; every field is overwritten.
//
// Which fields mean something depends on the kind (see Kind): a field that
// the kind does not carry is zero after Decode and ignored by AppendBinary.
type TLP struct {
	Fmt  Fmt   // 3-bit Fmt field
	Type uint8 // 5-bit Type field (for messages, bits 2:0 are the routing subfield)

	TC     uint8  // traffic class, 0-7
	Attr   Attr   // IDO, RO, NS
	LN     bool   // Lightweight Notification
	TH     bool   // TLP Processing Hints present
	TD     bool   // TLP Digest (ECRC) present
	EP     bool   // poisoned
	AT     uint8  // Address Type, 0-3
	Tag    uint16 // 10-bit tag (T9, T8 and the 8-bit Tag field)
	Length uint16 // DW count 1-1024 where the kind defines Length; the raw field (0-1023) for Msg and Cpl/CplLk, where it is reserved

	RequesterID ID // requests and completions

	// The fields below depend on the kind. They are laid out together so
	// Decode can clear the ones a kind does not carry in a few wide stores.

	FirstBE      uint8  // First DW Byte Enables (requests)
	LastBE       uint8  // Last DW Byte Enables (requests)
	PH           uint8  // Processing Hint, the two low bits of the address DW
	Status       Status // completion status
	BCM          bool   // Byte Count Modified
	LowerAddress uint8  // 7-bit lower address of the first enabled byte
	MessageCode  uint8
	CompleterID  ID     // completions: the completer; configuration requests: the target bus/device/function
	Register     uint16 // configuration register byte offset, 0-4092, a multiple of 4
	ByteCount    uint16 // remaining byte count, 1-4096
	// MessageData holds header bytes 8-15 of a message not routed by
	// address (for ID routing, bytes 0-1 are the destination ID).
	MessageData [8]byte
	Address     uint64

	Prefixes []byte // TLP prefixes, whole DWs, in wire order
	Data     []byte // payload, Length*4 bytes for kinds with data
	Digest   uint32 // ECRC DW as received (big-endian), when TD is set

	// Snapped is set by DecodeSnapped: only the prefixes and header were
	// captured (a pcap record snapped to the header), so Data is nil and
	// Digest 0 while Length still gives the payload's size. Validate
	// skips the checks that need the payload; AppendBinary refuses such a
	// TLP, and pcap.Writer.WriteTLP (package onic/tlp/pcap) writes it snapped again.
	Snapped bool

	hdrLen     uint8    // 12 or 16 after Decode; 0 for a TLP built from fields
	snapping   bool     // DecodeSnapped's word to Decode: a header alone is whole
	keepDigest bool     // set by UnmarshalJSON for an explicit ecrc: encode Digest as is
	hdr        [16]byte // a copy of the decoded header, for reserved-bit and ECRC checks
}

// Kind returns the kind given by Fmt and Type.
func (t *TLP) Kind() Kind { return KindOf(t.Fmt, t.Type) }

// Routing returns the routing subfield of a message.
func (t *TLP) Routing() Routing { return Routing(t.Type & 7) }

// DestinationID returns the target of a message routed by ID.
func (t *TLP) DestinationID() ID { return ID(binary.BigEndian.Uint16(t.MessageData[:2])) }

// SetDestinationID sets the target of a message routed by ID.
func (t *TLP) SetDestinationID(id ID) { binary.BigEndian.PutUint16(t.MessageData[:2], uint16(id)) }

// SteeringTag returns the 8-bit Steering Tag of a memory request with TH
// set: it replaces the Tag field in posted writes and the byte enables in
// reads and atomics (PCIe Base Specification 5.0 §2.2.7.1).
func (t *TLP) SteeringTag() uint8 {
	if t.Kind() == MWr {
		return uint8(t.Tag)
	}
	return t.LastBE<<4 | t.FirstBE
}

// HeaderLen is the header length in bytes, without prefixes.
func (t *TLP) HeaderLen() int { return t.Fmt.HeaderLen() }

// Len is the encoded length in bytes: prefixes, header, payload and digest.
func (t *TLP) Len() int {
	n := len(t.Prefixes) + t.Fmt.HeaderLen() + len(t.Data)
	if t.TD {
		n += 4
	}
	return n
}

// DecodeValidate decodes b as Decode does and then checks the TLP as
// Validate does, returning the first error of the two. For a memory request
// without prefixes or digest (the bulk of traffic) the rules are checked on
// the header words as they are decoded, so the pair costs little more than
// Decode alone; every other TLP goes through Validate. The result is always
// that of Decode followed by Validate (a test proves it).
func (t *TLP) DecodeValidate(b []byte) error {
	if mayBeMemory(b) && !generalOnly {
		if done, valid := t.decodeMemory(b, true); done {
			if valid {
				return nil
			}
			return t.Validate()
		}
	}
	if err := t.Decode(b); err != nil {
		return err
	}
	return t.Validate()
}

// mayBeMemory is a first look for Decode's straight path: b is long
// enough for a 3 DW header and its first byte has Fmt 0xx and Type 0000x,
// the encodings of MRd, MRdLk and MWr (and of a few reserved ones).
func mayBeMemory(b []byte) bool { return len(b) >= 12 && b[0]&0x9E == 0 }

// generalOnly makes Decode and DecodeValidate skip the straight path, so
// tests can hold it against the general decoder.
var generalOnly bool

// decodeMemory is Decode's straight path for a memory request (MRd, MRdLk,
// MWr) without prefixes whose length matches its header. done is false,
// and t untouched, for any other b. With check set, valid reports whether
// the request also has no digest and passes Validate's memory rules
// (memoryOK, worked out here on the header words); Decode leaves check off
// so as not to pay for it.
func (t *TLP) decodeMemory(b []byte, check bool) (done, valid bool) {
	if len(b) < 12 {
		return false, false
	}
	dw0 := binary.BigEndian.Uint32(b)
	f := Fmt(get(dw0, fmtLo, fmtW))
	k := kindTable[f][get(dw0, typeLo, typeW)]
	if kindClass[k] != ClassMemory {
		return false, false
	}
	length := get(dw0, lengthLo, lengthW)
	if length == 0 {
		length = 1024
	}
	hl := 12 + 4*int(f&1)
	n := hl + 4*int(get(dw0, tdLo, 1)) // header and digest
	if f&2 != 0 {
		n += 4 * int(length)
	}
	if len(b) != n {
		return false, false
	}
	dw1 := binary.BigEndian.Uint32(b[4:])
	dw2 := binary.BigEndian.Uint32(b[8:])
	hi, lo := uint32(0), dw2 // address bits 63:32, and 31:2 with PH
	if f&1 != 0 {
		hi, lo = dw2, binary.BigEndian.Uint32(b[12:16])
		t.hdr = [16]byte(b[:16])
	} else {
		t.hdr = [16]byte{}
		*(*[12]byte)(t.hdr[:12]) = [12]byte(b[:12])
	}
	fbe, lbe := uint8(get(dw1, firstBELo, beW)), uint8(get(dw1, lastBELo, beW))
	th := bit(dw0, thLo)
	if check {
		valid = !bit(dw0, tdLo) && (f&1 == 0 || hi != 0) && (get(lo, phLo, phW) == 0 || th) &&
			lo&0xFFC+length*4 <= 4096 &&
			(length > 1 && contiguousBE[uint8(dw1)] ||
				th && k != MWr ||
				length == 1 && lbe == 0 ||
				length == 2 && lo&4 == 0 && fbe != 0 && lbe != 0)
	}
	t.Fmt, t.Type = f, uint8(get(dw0, typeLo, typeW))
	t.TC = uint8(get(dw0, tcLo, tcW))
	t.Attr = attrOf(dw0)
	t.LN, t.TH = bit(dw0, lnLo), bit(dw0, thLo)
	t.TD, t.EP = bit(dw0, tdLo), bit(dw0, epLo)
	t.AT = uint8(get(dw0, atLo, atW))
	t.Length = uint16(length)
	t.Tag = tag10(dw0, dw1)
	t.RequesterID = ID(get(dw1, reqIDLo, idW))
	t.FirstBE, t.LastBE, t.PH = fbe, lbe, uint8(get(lo, phLo, phW))
	t.Status, t.BCM, t.LowerAddress, t.MessageCode = 0, false, 0, 0
	t.CompleterID, t.Register, t.ByteCount = 0, 0, 0
	t.MessageData = [8]byte{}
	t.Address = uint64(hi)<<32 | uint64(lo&addrMask)
	t.Prefixes = b[:0:0]
	t.hdrLen = uint8(hl)
	t.keepDigest, t.Snapped = false, false
	end := n
	t.Digest = 0
	if bit(dw0, tdLo) {
		end -= 4
		t.Digest = binary.BigEndian.Uint32(b[end:])
	}
	t.Data = b[hl:end:end]
	return true, valid
}

// contiguousBE[lbe<<4|fbe] reports whether the First and Last DW Byte
// Enables are both contiguous (§2.2.5; 0000b is not among the contiguous
// patterns), as a request longer than one DW needs them unless it is a
// QW-aligned 2 DW request.
var contiguousBE = func() (tab [256]bool) {
	for i := range tab {
		tab[i] = contigFirst&(1<<(i&15)) != 0 && contigLast&(1<<(i>>4)) != 0
	}
	return tab
}()

// Decode parses one TLP from b: any prefixes, the header, the payload and the
// digest. b must hold exactly one TLP. It checks only what it needs to find
// the parts (a reserved Fmt/Type, truncation, a payload that does not match
// Length); Validate checks the rest of the specification's rules. Decode
// does not copy: Prefixes, Data and the header view keep referring to b.
func (t *TLP) Decode(b []byte) error {
	snapping := t.snapping
	t.snapping = false
	if mayBeMemory(b) && !generalOnly {
		if done, _ := t.decodeMemory(b, false); done {
			return nil
		}
	}
	// The general decoder, for any TLP. (It is here rather than in a
	// function of its own because the call would cost completions about
	// 1.5 ns.)
	off := 0
	for off < len(b) && Fmt(b[off]>>5) == FmtPrefix {
		off += 4
	}
	if off+4 > len(b) {
		return t.decodeErr(b)
	}
	h := b[off:]
	dw0 := binary.BigEndian.Uint32(h)
	f, typ := Fmt(get(dw0, fmtLo, fmtW)), uint8(get(dw0, typeLo, typeW))
	k := kindTable[f][typ]
	hl := 12 + 4*int(f&1)
	if k == KindInvalid || len(h) < hl {
		return t.decodeErr(b)
	}
	dw1 := binary.BigEndian.Uint32(h[4:])
	dw2 := binary.BigEndian.Uint32(h[8:])

	// Assign every field, so a reused TLP keeps nothing from its last use.
	// (A struct literal here would be built in a temporary and copied,
	// which costs more than the rest of Decode together.)
	t.Fmt, t.Type = f, typ
	t.TC = uint8(get(dw0, tcLo, tcW))
	t.Attr = attrOf(dw0)
	t.LN, t.TH = bit(dw0, lnLo), bit(dw0, thLo)
	t.TD, t.EP = bit(dw0, tdLo), bit(dw0, epLo)
	t.AT = uint8(get(dw0, atLo, atW))
	length := uint16(get(dw0, lengthLo, lengthW))
	if length == 0 && k.lengthDefined() {
		length = 1024
	}
	t.Length = length
	t.Prefixes = b[:off:off]
	if f&1 != 0 {
		t.hdr = [16]byte(h[:16])
	} else {
		t.hdr = [16]byte{}
		*(*[12]byte)(t.hdr[:12]) = [12]byte(h[:12])
	}
	t.hdrLen = uint8(hl)
	t.keepDigest, t.Snapped = false, false
	t.FirstBE, t.LastBE, t.PH, t.Status, t.BCM, t.LowerAddress, t.MessageCode = 0, 0, 0, 0, false, 0, 0
	t.CompleterID, t.Register, t.ByteCount = 0, 0, 0
	t.MessageData, t.Address = [8]byte{}, 0
	t.RequesterID = ID(get(dw1, reqIDLo, idW))
	t.Tag = tag10(dw0, dw1)
	c := kindClass[k]
	if c == ClassMemory || c == ClassIO || c == ClassAtomic { // the bulk of traffic: tested first
		t.FirstBE, t.LastBE = uint8(get(dw1, firstBELo, beW)), uint8(get(dw1, lastBELo, beW))
		hi, lo := uint32(0), dw2
		if f&1 != 0 {
			hi, lo = dw2, binary.BigEndian.Uint32(h[12:])
		}
		t.Address = uint64(hi)<<32 | uint64(lo&addrMask)
		t.PH = uint8(get(lo, phLo, phW))
	} else {
		t.decodeOther(c, h, typ, dw0, dw1, dw2)
	}
	need := 0
	if f.HasData() {
		need = int(t.Length) * 4
	}
	dig := 0
	if t.TD {
		dig = 4
	}
	t.Digest = 0
	if len(h)-hl != need+dig {
		t.Data = nil
		if snapping && len(h) == hl {
			t.Snapped = true
			return nil
		}
		return t.decodeErr(b)
	}
	t.Data = h[hl : hl+need : hl+need]
	if dig != 0 {
		t.Digest = binary.BigEndian.Uint32(h[hl+need:])
	}
	return nil
}

// DecodeSnapped parses a TLP of which b holds only the prefixes and
// header: the start of a TLP whose payload and digest a capture left out
// (a pcap record snapped to the header, its captured length less than its
// length). It sets Snapped, with Data nil and Digest 0. A b that holds a
// whole TLP is decoded as Decode does (Snapped clear); a b that holds
// more than the header but less than the whole TLP fails as Decode does.
// Like Decode it does not copy or allocate for a TLP it accepts.
func (t *TLP) DecodeSnapped(b []byte) error {
	t.snapping = true
	return t.Decode(b)
}

// decodeOther fills the fields of configuration requests, messages and
// completions.
func (t *TLP) decodeOther(c Class, h []byte, typ uint8, dw0, dw1, dw2 uint32) {
	switch c {
	case ClassConfig:
		t.FirstBE, t.LastBE = uint8(get(dw1, firstBELo, beW)), uint8(get(dw1, lastBELo, beW))
		t.CompleterID = ID(get(dw2, reqIDLo, idW))
		t.Register = uint16(get(dw2, registerLo, registerW)) << registerLo
	case ClassMessage:
		t.MessageCode = uint8(get(dw1, msgCodeLo, 8))
		if Routing(typ&7) == RouteByAddress {
			t.Address = binary.BigEndian.Uint64(h[8:])
		} else {
			t.MessageData = [8]byte(h[8:16])
		}
	case ClassCompletion:
		t.CompleterID = ID(get(dw1, reqIDLo, idW))
		t.Status, t.BCM = Status(get(dw1, statusLo, statusW)), bit(dw1, bcmLo)
		t.ByteCount = uint16(get(dw1, byteCountLo, bcW))
		if t.ByteCount == 0 {
			t.ByteCount = 4096
		}
		t.RequesterID = ID(get(dw2, reqIDLo, idW))
		t.Tag = tag10(dw0, dw2)
		t.LowerAddress = uint8(get(dw2, lowerAddrLo, lowerAddrW))
	}
}

// decodeErr works out why Decode rejected b and returns that error. It is
// kept out of Decode so the hot path carries no error formatting. The
// header fields Decode already filled stay (the caller may inspect a TLP
// whose payload is cut short); a TLP without a usable header is zeroed.
//
//go:noinline
func (t *TLP) decodeErr(b []byte) error {
	off := 0
	for off < len(b) && Fmt(b[off]>>5) == FmtPrefix {
		off += 4
	}
	if off+4 > len(b) {
		*t = TLP{}
		if off > len(b) {
			return ruleErr(ErrTruncatedHeader, len(b), "TLP prefix needs 4 bytes, have %d", len(b)-(off-4))
		}
		return ruleErr(ErrTruncatedHeader, len(b), "%d bytes after %d prefix bytes, need at least 4", len(b)-off, off)
	}
	h := Header(b[off:])
	f, typ := h.Fmt(), h.Type()
	k := KindOf(f, typ)
	if k == KindInvalid {
		*t = TLP{}
		return ruleErr(ErrReservedFmtType, off, "Fmt %03bb Type %05bb is reserved", uint8(f), typ)
	}
	hl := f.HeaderLen()
	if len(h) < hl {
		*t = TLP{}
		return ruleErr(ErrTruncatedHeader, len(b), "%s needs a %d-byte header, have %d", k, hl, len(h))
	}
	need, dig := 0, 0
	if f.HasData() {
		need = int(h.Length()) * 4
	}
	if h.TD() {
		dig = 4
	}
	rest := len(h) - hl
	if rest < need+dig {
		what := "payload"
		if rest >= need {
			what = "ECRC digest"
		}
		return ruleErr(ErrTruncatedPayload, len(b), "%s with Length %d and TD=%d needs %d bytes after the header, have %d (%s cut short)",
			k, t.Length, b2u(t.TD), need+dig, rest, what)
	}
	return ruleErr(ErrLengthMismatch, off+hl+need+dig, "%s with Length %d and TD=%d takes %d bytes after the header, have %d",
		k, t.Length, b2u(t.TD), need+dig, rest)
}

// AppendBinary appends the encoded TLP to b and returns the extended slice.
// It fails, leaving b's contents unchanged, when a field does not fit its
// bit width or contradicts the kind. When TD is set it computes the ECRC
// and ignores Digest, unless the TLP was read from JSON with an explicit
// ecrc. AppendBinary allocates only if b must grow.
func (t *TLP) AppendBinary(b []byte) ([]byte, error) {
	if t.Snapped {
		return b, ruleErr(ErrTruncatedPayload, -1, "%s: its payload was not captured (snapped to the header), so it cannot be encoded whole", t.Kind())
	}
	if err := t.checkRanges(true); err != nil {
		return b, err
	}
	k := t.Kind()
	hl := t.Fmt.HeaderLen()
	start := len(b)
	n := t.Len()
	b = slices.Grow(b, n)[:start+n]
	out := b[start:]
	copy(out, t.Prefixes)
	h := Header(out[len(t.Prefixes) : len(t.Prefixes)+hl])
	t.encodeHeader(h, k)
	p := len(t.Prefixes) + hl
	copy(out[p:], t.Data)
	if t.TD {
		crc := t.Digest
		if !t.keepDigest {
			crc = ecrc(t.Prefixes, h, t.Data)
		}
		binary.BigEndian.PutUint32(out[p+len(t.Data):], crc)
	}
	return b, nil
}

// AppendHeader appends t's prefixes and header, without payload or digest,
// and returns the extended slice: what a capture snapped to the header
// keeps (pcap.Writer.WriteSnapped). It checks the fields as AppendBinary
// does, except that Data need not match Length, and works for a Snapped
// TLP too.
func (t *TLP) AppendHeader(b []byte) ([]byte, error) {
	if err := t.checkRanges(false); err != nil {
		return b, err
	}
	hl := t.Fmt.HeaderLen()
	start := len(b)
	b = slices.Grow(b, len(t.Prefixes)+hl)[:start+len(t.Prefixes)+hl]
	copy(b[start:], t.Prefixes)
	t.encodeHeader(Header(b[start+len(t.Prefixes):]), t.Kind())
	return b, nil
}

// encodeHeader writes the header fields the kind carries into h (12 or 16
// bytes), composing each DW from the field table's positions.
func (t *TLP) encodeHeader(h Header, k Kind) {
	tag := uint32(t.Tag)
	dw0 := uint32(t.Fmt)<<fmtLo | uint32(t.Type)<<typeLo | tag>>9&1<<t9Lo | uint32(t.TC)<<tcLo | tag>>8&1<<t8Lo |
		uint32(t.Attr)>>2&1<<idoLo | uint32(b2u(t.LN))<<lnLo | uint32(b2u(t.TH))<<thLo | uint32(b2u(t.TD))<<tdLo |
		uint32(b2u(t.EP))<<epLo | uint32(t.Attr)&(1<<attrW-1)<<attrLo | uint32(t.AT)<<atLo | uint32(t.Length)&(1<<lengthW-1)
	var dw1, dw2, dw3 uint32
	switch kindClass[k] {
	case ClassMemory, ClassIO, ClassAtomic:
		dw1 = uint32(t.RequesterID)<<reqIDLo | tag&(1<<tagW-1)<<tagLo | uint32(t.LastBE)<<lastBELo | uint32(t.FirstBE)<<firstBELo
		lo := uint32(t.Address) | uint32(t.PH)<<phLo
		if t.Fmt.Is4DW() {
			dw2, dw3 = uint32(t.Address>>32), lo
		} else {
			dw2 = lo
		}
	case ClassConfig:
		dw1 = uint32(t.RequesterID)<<reqIDLo | tag&(1<<tagW-1)<<tagLo | uint32(t.LastBE)<<lastBELo | uint32(t.FirstBE)<<firstBELo
		dw2 = uint32(t.CompleterID)<<reqIDLo | uint32(t.Register)>>registerLo<<registerLo
	case ClassMessage:
		dw1 = uint32(t.RequesterID)<<reqIDLo | tag&(1<<tagW-1)<<tagLo | uint32(t.MessageCode)<<msgCodeLo
		if t.Routing() == RouteByAddress {
			dw2, dw3 = uint32(t.Address>>32), uint32(t.Address)
		} else {
			dw2, dw3 = binary.BigEndian.Uint32(t.MessageData[:4]), binary.BigEndian.Uint32(t.MessageData[4:])
		}
	case ClassCompletion:
		dw1 = uint32(t.CompleterID)<<reqIDLo | uint32(t.Status)<<statusLo | uint32(b2u(t.BCM))<<bcmLo |
			uint32(t.ByteCount)&(1<<bcW-1)<<byteCountLo
		dw2 = uint32(t.RequesterID)<<reqIDLo | tag&(1<<tagW-1)<<tagLo | uint32(t.LowerAddress)<<lowerAddrLo
	}
	binary.BigEndian.PutUint32(h, dw0)
	binary.BigEndian.PutUint32(h[4:], dw1)
	binary.BigEndian.PutUint32(h[8:], dw2)
	if len(h) == 16 {
		binary.BigEndian.PutUint32(h[12:], dw3)
	}
}

// MarshalBinary encodes the TLP into a new slice.
func (t *TLP) MarshalBinary() ([]byte, error) { return t.AppendBinary(make([]byte, 0, t.Len())) }

// checkRanges rejects field values that cannot be encoded: they do not fit
// their bit width or contradict the kind. withData also holds Data to
// Length (off when only the header is written).
func (t *TLP) checkRanges(withData bool) error {
	k := t.Kind()
	if t.Fmt > 7 || t.Type > 31 || k == KindInvalid {
		return ruleErr(ErrReservedFmtType, -1, "Fmt %03bb Type %05bb is reserved", uint8(t.Fmt), t.Type)
	}
	if len(t.Prefixes)%4 != 0 {
		return ruleErr(ErrFieldRange, -1, "prefixes are %d bytes, not whole DWs", len(t.Prefixes))
	}
	for i := 0; i < len(t.Prefixes); i += 4 {
		if Fmt(t.Prefixes[i]>>5) != FmtPrefix {
			return ruleErr(ErrFieldRange, -1, "prefix DW %d does not start with Fmt 100b", i/4)
		}
	}
	switch {
	case t.TC > 7:
		return rangeErr("tc", uint64(t.TC), 7)
	case t.Tag > 1023:
		return rangeErr("tag", uint64(t.Tag), 1023)
	case t.Attr > 7:
		return rangeErr("attr", uint64(t.Attr), 7)
	case t.AT > 3:
		return rangeErr("at", uint64(t.AT), 3)
	case t.PH > 3:
		return rangeErr("ph", uint64(t.PH), 3)
	case t.FirstBE > 15:
		return rangeErr("first_be", uint64(t.FirstBE), 15)
	case t.LastBE > 15:
		return rangeErr("last_be", uint64(t.LastBE), 15)
	case t.Status > 7:
		return rangeErr("status", uint64(t.Status), 7)
	case t.LowerAddress > 127:
		return rangeErr("lower_address", uint64(t.LowerAddress), 127)
	}
	if k.lengthDefined() {
		if t.Length < 1 || t.Length > 1024 {
			return ruleErr(ErrFieldRange, -1, "length %d DW is outside 1-1024", t.Length)
		}
	} else if t.Length > 1023 {
		return rangeErr("length", uint64(t.Length), 1023)
	}
	switch {
	case !withData: // only the header is written: Data does not matter
	case k.HasData() && len(t.Data) != int(t.Length)*4:
		return ruleErr(ErrLengthMismatch, -1, "%s with Length %d DW needs %d data bytes, have %d", k, t.Length, int(t.Length)*4, len(t.Data))
	case !k.HasData() && len(t.Data) != 0:
		return ruleErr(ErrLengthMismatch, -1, "%s carries no data, have %d data bytes", k, len(t.Data))
	}
	switch k.Class() {
	case ClassMemory, ClassIO, ClassAtomic:
		if !t.Fmt.Is4DW() && t.Address > 0xFFFFFFFF {
			return ruleErr(ErrFieldRange, -1, "address %#x does not fit the 32-bit format of a 3 DW header", t.Address)
		}
		if t.Address&3 != 0 {
			return ruleErr(ErrFieldRange, -1, "address %#x is not DW aligned (bits 1:0 carry PH)", t.Address)
		}
	case ClassConfig:
		if t.Register > 4095 || t.Register&3 != 0 {
			return ruleErr(ErrFieldRange, -1, "register offset %#x is not a DW offset below 4096", t.Register)
		}
	case ClassCompletion:
		if t.ByteCount < 1 || t.ByteCount > 4096 {
			return ruleErr(ErrFieldRange, -1, "byte count %d is outside 1-4096", t.ByteCount)
		}
	}
	return nil
}

func rangeErr(field string, v, max uint64) error {
	return ruleErr(ErrFieldRange, -1, "%s %d exceeds its maximum %d", field, v, max)
}

// String returns a one-line readable summary of the TLP (the format of
// `onic tlp decode --text`).
func (t *TLP) String() string { return string(t.AppendText(nil)) }

// AppendText appends the one-line summary to b.
func (t *TLP) AppendText(b []byte) []byte {
	k := t.Kind()
	b = append(b, k.String()...)
	if k.Class() == ClassMemory || k.Class() == ClassAtomic {
		if t.Fmt.Is4DW() {
			b = append(b, "64"...)
		} else {
			b = append(b, "32"...)
		}
	}
	if k.Class() == ClassMessage {
		b = fmt.Appendf(b, " %s code=%#02x(%s)", t.Routing(), t.MessageCode, MessageName(t.MessageCode))
	}
	switch k.Class() {
	case ClassCompletion:
		b = fmt.Appendf(b, " cpl=%s req=%s tag=%#x %s bc=%d la=%#02x", t.CompleterID, t.RequesterID, t.Tag, t.Status, t.ByteCount, t.LowerAddress)
		if t.BCM {
			b = append(b, " bcm"...)
		}
	case ClassConfig:
		b = fmt.Appendf(b, " req=%s tag=%#x dst=%s reg=%#03x be=%x", t.RequesterID, t.Tag, t.CompleterID, t.Register, t.FirstBE)
	case ClassMessage:
		b = fmt.Appendf(b, " req=%s tag=%#x", t.RequesterID, t.Tag)
		switch t.Routing() {
		case RouteByAddress:
			b = fmt.Appendf(b, " addr=%#x", t.Address)
		case RouteByID:
			b = fmt.Appendf(b, " dst=%s", t.DestinationID())
		}
	default:
		b = fmt.Appendf(b, " req=%s tag=%#x addr=%#x be=%x/%x", t.RequesterID, t.Tag, t.Address, t.FirstBE, t.LastBE)
		if t.TH {
			b = fmt.Appendf(b, " ph=%d st=%#02x", t.PH, t.SteeringTag())
		}
	}
	if k.lengthDefined() {
		b = fmt.Appendf(b, " len=%d", t.Length)
	}
	if t.TC != 0 {
		b = fmt.Appendf(b, " tc=%d", t.TC)
	}
	if t.Attr != 0 {
		b = fmt.Appendf(b, " attr=%03b", uint8(t.Attr))
	}
	if t.AT != 0 {
		b = fmt.Appendf(b, " at=%d", t.AT)
	}
	if t.EP {
		b = append(b, " EP"...)
	}
	if t.LN {
		b = append(b, " LN"...)
	}
	if t.TD && !t.Snapped {
		b = fmt.Appendf(b, " ecrc=%08x", t.Digest)
	}
	if len(t.Prefixes) > 0 {
		b = fmt.Appendf(b, " prefixes=%x", t.Prefixes)
	}
	if t.Snapped {
		b = append(b, " (payload not captured)"...)
	}
	if len(t.Data) > 0 {
		const show = 16
		if len(t.Data) <= show {
			b = fmt.Appendf(b, " data=%x", t.Data)
		} else {
			b = fmt.Appendf(b, " data=%x…(%dB)", t.Data[:show], len(t.Data))
		}
	}
	return b
}

// Size returns the length in bytes of the TLP that starts at b[0], as its
// prefixes and first header DW announce (prefixes, header, Length DWs of
// data for kinds with data, and the digest when TD is set). It reads only
// the prefixes and DW0, so it frames a stream of back-to-back TLPs. It
// fails if b ends before DW0 or the Fmt/Type is reserved.
func Size(b []byte) (int, error) {
	off := 0
	for off < len(b) && Fmt(b[off]>>5) == FmtPrefix {
		off += 4
	}
	if off+4 > len(b) {
		return 0, ruleErr(ErrTruncatedHeader, len(b), "%d bytes end before the header's first DW", len(b))
	}
	h := Header(b[off:])
	k := h.Kind()
	if k == KindInvalid {
		return 0, ruleErr(ErrReservedFmtType, off, "Fmt %03bb Type %05bb is reserved", uint8(h.Fmt()), h.Type())
	}
	n := off + h.HeaderLen()
	if h.Fmt().HasData() {
		n += int(h.Length()) * 4
	}
	if h.TD() {
		n += 4
	}
	return n, nil
}
