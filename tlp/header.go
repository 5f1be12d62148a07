package tlp

import "encoding/binary"

// Header is a zero-copy view of a TLP header (the bytes after any prefixes,
// starting with the Fmt/Type byte). Accessors read and setters write the
// underlying bytes in place. Accessors whose field lives in DW2 or DW3 need
// a slice at least HeaderLen bytes long; use Check first on untrusted bytes.
//
// Field positions follow PCIe Base Specification 5.0 §2.2 (non-flit mode).
// Fields whose position depends on the kind (tag, requester ID, address)
// pick the position from the header's own Fmt/Type.
type Header []byte

// Check reports whether h is long enough for the header its Fmt announces.
func (h Header) Check() bool {
	return len(h) >= 4 && Fmt(h[0]>>5) != FmtPrefix && len(h) >= Fmt(h[0]>>5).HeaderLen()
}

// dw returns DW i of the header, read big-endian.
func (h Header) dw(i int) uint32 { return binary.BigEndian.Uint32(h[4*i:]) }

// put writes v into w bits of DW i from bit lo, keeping the other bits.
func (h Header) put(i int, lo, w uint, v uint32) {
	m := uint32(1)<<w - 1
	binary.BigEndian.PutUint32(h[4*i:], h.dw(i)&^(m<<lo)|(v&m)<<lo)
}

// Fmt returns the Fmt field.
func (h Header) Fmt() Fmt { return Fmt(get(h.dw(0), fmtLo, fmtW)) }

// Type returns the 5-bit Type field.
func (h Header) Type() uint8 { return uint8(get(h.dw(0), typeLo, typeW)) }

// Kind returns the kind encoded by Fmt and Type.
func (h Header) Kind() Kind { return KindOf(h.Fmt(), h.Type()) }

// HeaderLen returns 12 or 16, from Fmt.
func (h Header) HeaderLen() int { return h.Fmt().HeaderLen() }

// SetFmtType sets the Fmt and Type fields.
func (h Header) SetFmtType(f Fmt, typ uint8) {
	h.put(0, fmtLo, fmtW, uint32(f))
	h.put(0, typeLo, typeW, uint32(typ))
}

// TC returns the traffic class.
func (h Header) TC() uint8 { return uint8(get(h.dw(0), tcLo, tcW)) }

// SetTC sets the traffic class.
func (h Header) SetTC(tc uint8) { h.put(0, tcLo, tcW, uint32(tc)) }

// Attr returns the attribute bits: IDO (bit 2), RO and NS.
func (h Header) Attr() Attr { return attrOf(h.dw(0)) }

// attrOf gathers the attribute bits from DW0.
func attrOf(dw0 uint32) Attr { return Attr(dw0>>(idoLo-2)&4 | get(dw0, attrLo, attrW)) }

// SetAttr sets the attribute bits.
func (h Header) SetAttr(a Attr) {
	h.put(0, idoLo, 1, uint32(a)>>2)
	h.put(0, attrLo, attrW, uint32(a))
}

// LN returns the Lightweight Notification bit.
func (h Header) LN() bool { return bit(h.dw(0), lnLo) }

// TH returns the TLP Processing Hints bit.
func (h Header) TH() bool { return bit(h.dw(0), thLo) }

// TD returns the TLP Digest bit: an ECRC follows the payload.
func (h Header) TD() bool { return bit(h.dw(0), tdLo) }

// EP returns the Error Poisoned bit.
func (h Header) EP() bool { return bit(h.dw(0), epLo) }

// SetFlags sets LN, TH, TD and EP.
func (h Header) SetFlags(ln, th, td, ep bool) {
	h.put(0, lnLo, 1, uint32(b2u(ln)))
	h.put(0, thLo, 1, uint32(b2u(th)))
	h.put(0, tdLo, 1, uint32(b2u(td)))
	h.put(0, epLo, 1, uint32(b2u(ep)))
}

// AT returns the 2-bit Address Type field.
func (h Header) AT() uint8 { return uint8(get(h.dw(0), atLo, atW)) }

// SetAT sets the Address Type field.
func (h Header) SetAT(at uint8) { h.put(0, atLo, atW, uint32(at)) }

// LengthField returns the raw 10-bit Length field (0 encodes 1024 DW).
func (h Header) LengthField() uint16 { return uint16(get(h.dw(0), lengthLo, lengthW)) }

// Length returns the length in DW, 1 to 1024 (the field value 0 means 1024).
func (h Header) Length() uint16 {
	if n := h.LengthField(); n != 0 {
		return n
	}
	return 1024
}

// SetLength sets the Length field from a DW count; 1024 is encoded as 0.
func (h Header) SetLength(dw uint16) { h.put(0, lengthLo, lengthW, uint32(dw)) }

// isCompletion reports a completion Type (0101xb, whatever the Fmt), as
// the RTL decoder also tells them apart.
func (h Header) isCompletion() bool { return isCplType(h.dw(0)) }

func isCplType(dw0 uint32) bool { return get(dw0, typeLo+1, typeW-1) == 0b0101 }

// idDW is the DW that holds the requester ID and tag: DW1 in requests,
// DW2 in completions. The completer ID (or configuration target) is in
// the other of the two.
func (h Header) idDW() int {
	if h.isCompletion() {
		return 2
	}
	return 1
}

// Tag returns the 10-bit tag (T9 and T8 from DW0 and the 8-bit tag field,
// which is in DW1 for requests and DW2 for completions).
func (h Header) Tag() uint16 {
	dw0, i := binary.BigEndian.Uint32(h), 4
	if isCplType(dw0) {
		i = 8
	}
	return tag10(dw0, binary.BigEndian.Uint32(h[i:]))
}

// tag10 gathers the 10-bit tag from DW0 and the DW with the tag field.
func tag10(dw0, dw uint32) uint16 {
	return uint16(dw0>>(t9Lo-9)&(1<<9) | dw0>>(t8Lo-8)&(1<<8) | get(dw, tagLo, tagW))
}

// SetTag sets the 10-bit tag.
func (h Header) SetTag(tag uint16) {
	h.put(0, t9Lo, 1, uint32(tag)>>9)
	h.put(0, t8Lo, 1, uint32(tag)>>8)
	h.put(h.idDW(), tagLo, tagW, uint32(tag))
}

// RequesterID returns the requester ID (DW1 for requests, DW2 for
// completions).
func (h Header) RequesterID() ID {
	i := 4
	if h.isCompletion() {
		i = 8
	}
	return ID(get(binary.BigEndian.Uint32(h[i:]), reqIDLo, idW))
}

// SetRequesterID sets the requester ID.
func (h Header) SetRequesterID(id ID) { h.put(h.idDW(), reqIDLo, idW, uint32(id)) }

// CompleterID returns the completer ID of a completion, or the target
// bus/device/function of a configuration request.
func (h Header) CompleterID() ID { return ID(get(h.dw(3-h.idDW()), reqIDLo, idW)) }

// SetCompleterID sets the completer ID (completions) or configuration target
// (configuration requests).
func (h Header) SetCompleterID(id ID) { h.put(3-h.idDW(), reqIDLo, idW, uint32(id)) }

// FirstBE returns the First DW Byte Enables of a request.
func (h Header) FirstBE() uint8 { return uint8(get(h.dw(1), firstBELo, beW)) }

// LastBE returns the Last DW Byte Enables of a request.
func (h Header) LastBE() uint8 { return uint8(get(h.dw(1), lastBELo, beW)) }

// SetBE sets the First and Last DW Byte Enables.
func (h Header) SetBE(first, last uint8) {
	h.put(1, firstBELo, beW, uint32(first))
	h.put(1, lastBELo, beW, uint32(last))
}

// MessageCode returns the message code of a Msg or MsgD.
func (h Header) MessageCode() uint8 { return uint8(get(h.dw(1), msgCodeLo, 8)) }

// SetMessageCode sets the message code.
func (h Header) SetMessageCode(c uint8) { h.put(1, msgCodeLo, 8, uint32(c)) }

// addrDW is the DW with address bits 31:2 and PH: the last DW of the
// header.
func (h Header) addrDW() int {
	if h.Fmt().Is4DW() {
		return 3
	}
	return 2
}

// Address returns the address of a memory, I/O or atomic request, or of an
// address-routed message: bits 63:2 from a 4 DW header, bits 31:2 from a
// 3 DW header. The two low bits are zero; they carry PH (see PH).
func (h Header) Address() uint64 {
	if h.Fmt().Is4DW() {
		return binary.BigEndian.Uint64(h[8:]) & (0xFFFF_FFFF<<32 | addrMask)
	}
	return uint64(h.dw(2) & addrMask)
}

// PH returns the Processing Hint bits (the two low bits of the address DW).
func (h Header) PH() uint8 { return uint8(get(h.dw(h.addrDW()), phLo, phW)) }

// SetAddress sets the address (bits 1:0 ignored) and the PH bits.
func (h Header) SetAddress(addr uint64, ph uint8) {
	i := h.addrDW()
	if i == 3 {
		binary.BigEndian.PutUint32(h[8:], uint32(addr>>32))
	}
	h.put(i, addrLo, addrW, uint32(addr)>>addrLo)
	h.put(i, phLo, phW, uint32(ph))
}

// Register returns the byte offset of the register a configuration request
// addresses: Extended Register Number (bits 11:8) and Register Number
// (bits 7:2).
func (h Header) Register() uint16 { return uint16(get(h.dw(2), registerLo, registerW)) << registerLo }

// SetRegister sets the configuration register byte offset (bits 1:0 and
// 15:12 are ignored).
func (h Header) SetRegister(off uint16) { h.put(2, registerLo, registerW, uint32(off)>>registerLo) }

// Status returns the completion status.
func (h Header) Status() Status { return Status(get(h.dw(1), statusLo, statusW)) }

// BCM returns the Byte Count Modified bit of a completion.
func (h Header) BCM() bool { return bit(h.dw(1), bcmLo) }

// ByteCountField returns the raw 12-bit Byte Count field (0 encodes 4096).
func (h Header) ByteCountField() uint16 { return uint16(get(h.dw(1), byteCountLo, bcW)) }

// ByteCount returns the completion byte count, 1 to 4096.
func (h Header) ByteCount() uint16 {
	if n := h.ByteCountField(); n != 0 {
		return n
	}
	return 4096
}

// SetCompletion sets status, BCM and byte count (4096 is encoded as 0).
func (h Header) SetCompletion(s Status, bcm bool, byteCount uint16) {
	h.put(1, statusLo, statusW, uint32(s))
	h.put(1, bcmLo, 1, uint32(b2u(bcm)))
	h.put(1, byteCountLo, bcW, uint32(byteCount))
}

// LowerAddress returns the 7-bit Lower Address of a completion.
func (h Header) LowerAddress() uint8 { return uint8(get(h.dw(2), lowerAddrLo, lowerAddrW)) }

// SetLowerAddress sets the Lower Address (bit 7 is reserved and cleared).
func (h Header) SetLowerAddress(la uint8) { h.put(2, 0, 8, uint32(la)&(1<<lowerAddrW-1)) }

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
