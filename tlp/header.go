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

// Fmt returns the Fmt field.
func (h Header) Fmt() Fmt { return Fmt(h[0] >> 5) }

// Type returns the 5-bit Type field.
func (h Header) Type() uint8 { return h[0] & 31 }

// Kind returns the kind encoded by Fmt and Type.
func (h Header) Kind() Kind { return KindOf(h.Fmt(), h.Type()) }

// HeaderLen returns 12 or 16, from Fmt.
func (h Header) HeaderLen() int { return h.Fmt().HeaderLen() }

// SetFmtType sets the Fmt and Type fields.
func (h Header) SetFmtType(f Fmt, typ uint8) { h[0] = uint8(f&7)<<5 | typ&31 }

// TC returns the traffic class.
func (h Header) TC() uint8 { return h[1] >> 4 & 7 }

// SetTC sets the traffic class.
func (h Header) SetTC(tc uint8) { h[1] = h[1]&^0x70 | (tc&7)<<4 }

// Attr returns the attribute bits: IDO (bit 2, byte 1), RO and NS (byte 2).
func (h Header) Attr() Attr { return Attr(h[1]&4 | h[2]>>4&3) }

// SetAttr sets the attribute bits.
func (h Header) SetAttr(a Attr) {
	h[1] = h[1]&^4 | uint8(a)&4
	h[2] = h[2]&^0x30 | (uint8(a)&3)<<4
}

// LN returns the Lightweight Notification bit.
func (h Header) LN() bool { return h[1]&2 != 0 }

// TH returns the TLP Processing Hints bit.
func (h Header) TH() bool { return h[1]&1 != 0 }

// TD returns the TLP Digest bit: an ECRC follows the payload.
func (h Header) TD() bool { return h[2]&0x80 != 0 }

// EP returns the Error Poisoned bit.
func (h Header) EP() bool { return h[2]&0x40 != 0 }

// SetFlags sets LN, TH, TD and EP.
func (h Header) SetFlags(ln, th, td, ep bool) {
	h[1] = h[1]&^3 | b2u(ln)<<1 | b2u(th)
	h[2] = h[2]&^0xC0 | b2u(td)<<7 | b2u(ep)<<6
}

// AT returns the 2-bit Address Type field.
func (h Header) AT() uint8 { return h[2] >> 2 & 3 }

// SetAT sets the Address Type field.
func (h Header) SetAT(at uint8) { h[2] = h[2]&^0x0C | (at&3)<<2 }

// LengthField returns the raw 10-bit Length field (0 encodes 1024 DW).
func (h Header) LengthField() uint16 { return uint16(h[2]&3)<<8 | uint16(h[3]) }

// Length returns the length in DW, 1 to 1024 (the field value 0 means 1024).
func (h Header) Length() uint16 {
	if n := h.LengthField(); n != 0 {
		return n
	}
	return 1024
}

// SetLength sets the Length field from a DW count; 1024 is encoded as 0.
func (h Header) SetLength(dw uint16) {
	dw &= 0x3FF
	h[2] = h[2]&^3 | uint8(dw>>8)
	h[3] = uint8(dw)
}

func (h Header) isCompletion() bool { return h[0]&0x1E == 0x0A }

// Tag returns the 10-bit tag (T9, T8 from byte 1 and the 8-bit tag field,
// which is in DW1 for requests and DW2 for completions).
func (h Header) Tag() uint16 {
	t := uint16(h[1]>>7&1)<<9 | uint16(h[1]>>3&1)<<8
	if h.isCompletion() {
		return t | uint16(h[10])
	}
	return t | uint16(h[6])
}

// SetTag sets the 10-bit tag.
func (h Header) SetTag(tag uint16) {
	h[1] = h[1]&^0x88 | uint8(tag>>9&1)<<7 | uint8(tag>>8&1)<<3
	if h.isCompletion() {
		h[10] = uint8(tag)
	} else {
		h[6] = uint8(tag)
	}
}

// RequesterID returns the requester ID (DW1 for requests, DW2 for
// completions).
func (h Header) RequesterID() ID {
	if h.isCompletion() {
		return ID(binary.BigEndian.Uint16(h[8:]))
	}
	return ID(binary.BigEndian.Uint16(h[4:]))
}

// SetRequesterID sets the requester ID.
func (h Header) SetRequesterID(id ID) {
	if h.isCompletion() {
		binary.BigEndian.PutUint16(h[8:], uint16(id))
	} else {
		binary.BigEndian.PutUint16(h[4:], uint16(id))
	}
}

// CompleterID returns the completer ID of a completion, or the target
// bus/device/function of a configuration request.
func (h Header) CompleterID() ID {
	if h.isCompletion() {
		return ID(binary.BigEndian.Uint16(h[4:]))
	}
	return ID(binary.BigEndian.Uint16(h[8:]))
}

// SetCompleterID sets the completer ID (completions) or configuration target
// (configuration requests).
func (h Header) SetCompleterID(id ID) {
	if h.isCompletion() {
		binary.BigEndian.PutUint16(h[4:], uint16(id))
	} else {
		binary.BigEndian.PutUint16(h[8:], uint16(id))
	}
}

// FirstBE returns the First DW Byte Enables of a request.
func (h Header) FirstBE() uint8 { return h[7] & 15 }

// LastBE returns the Last DW Byte Enables of a request.
func (h Header) LastBE() uint8 { return h[7] >> 4 }

// SetBE sets the First and Last DW Byte Enables.
func (h Header) SetBE(first, last uint8) { h[7] = last<<4 | first&15 }

// MessageCode returns the message code of a Msg or MsgD.
func (h Header) MessageCode() uint8 { return h[7] }

// SetMessageCode sets the message code.
func (h Header) SetMessageCode(c uint8) { h[7] = c }

// Address returns the address of a memory, I/O or atomic request, or of an
// address-routed message: bits 63:2 from a 4 DW header, bits 31:2 from a
// 3 DW header. The two low bits are zero; they carry PH (see PH).
func (h Header) Address() uint64 {
	if h.Fmt().Is4DW() {
		return binary.BigEndian.Uint64(h[8:]) &^ 3
	}
	return uint64(binary.BigEndian.Uint32(h[8:]) &^ 3)
}

// PH returns the Processing Hint bits (the two low bits of the address DW).
func (h Header) PH() uint8 {
	if h.Fmt().Is4DW() {
		return h[15] & 3
	}
	return h[11] & 3
}

// SetAddress sets the address (bits 1:0 ignored) and the PH bits.
func (h Header) SetAddress(addr uint64, ph uint8) {
	if h.Fmt().Is4DW() {
		binary.BigEndian.PutUint64(h[8:], addr&^3|uint64(ph&3))
	} else {
		binary.BigEndian.PutUint32(h[8:], uint32(addr)&^3|uint32(ph&3))
	}
}

// Register returns the byte offset of the register a configuration request
// addresses: Extended Register Number (bits 11:8) and Register Number
// (bits 7:2).
func (h Header) Register() uint16 { return uint16(h[10]&15)<<8 | uint16(h[11]&0xFC) }

// SetRegister sets the configuration register byte offset (bits 1:0 and
// 15:12 are ignored).
func (h Header) SetRegister(off uint16) {
	h[10] = h[10]&^15 | uint8(off>>8)&15
	h[11] = h[11]&3 | uint8(off)&0xFC
}

// Status returns the completion status.
func (h Header) Status() Status { return Status(h[6] >> 5) }

// BCM returns the Byte Count Modified bit of a completion.
func (h Header) BCM() bool { return h[6]&0x10 != 0 }

// ByteCountField returns the raw 12-bit Byte Count field (0 encodes 4096).
func (h Header) ByteCountField() uint16 { return uint16(h[6]&15)<<8 | uint16(h[7]) }

// ByteCount returns the completion byte count, 1 to 4096.
func (h Header) ByteCount() uint16 {
	if n := h.ByteCountField(); n != 0 {
		return n
	}
	return 4096
}

// SetCompletion sets status, BCM and byte count (4096 is encoded as 0).
func (h Header) SetCompletion(s Status, bcm bool, byteCount uint16) {
	byteCount &= 0xFFF
	h[6] = uint8(s&7)<<5 | b2u(bcm)<<4 | uint8(byteCount>>8)
	h[7] = uint8(byteCount)
}

// LowerAddress returns the 7-bit Lower Address of a completion.
func (h Header) LowerAddress() uint8 { return h[11] & 0x7F }

// SetLowerAddress sets the Lower Address (bit 7 is reserved and cleared).
func (h Header) SetLowerAddress(la uint8) { h[11] = la & 0x7F }

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
