package tlp

import (
	"hash/crc32"
	"math/bits"
)

// Validate checks the TLP against the transaction-layer rules of the PCIe
// Base Specification that Decode does not already enforce, and returns the
// first rule broken as an *Error (errors.Is matches the Rule). It checks the
// ECRC and the reserved header bits of a TLP that came from Decode against
// the bytes it was decoded from. Validate does not allocate on valid TLPs.
//
// Rules that need context a single TLP does not carry (MPS, RCB, whether a
// CRS completion answers a configuration request) are left to the receiver
// model.
func (t *TLP) Validate() error {
	// Memory requests without digest or prefixes are the bulk of traffic:
	// they take a short path that touches nothing else.
	k := kindTable[t.Fmt&7][t.Type&31]
	if kindClass[k] == ClassMemory && !t.TD && len(t.Prefixes) == 0 && t.Fmt|Fmt(t.Type>>3) <= 7 {
		if t.memoryOK(k) {
			return nil
		}
		return t.memoryErr(k)
	}
	return t.validateGeneral(k)
}

// validateGeneral checks every kind, in the order the rules are listed.
func (t *TLP) validateGeneral(k Kind) error {
	if k == KindInvalid || t.Fmt|Fmt(t.Type>>3) > 7 {
		return ruleErr(ErrReservedFmtType, 0, "Fmt %03bb Type %05bb is reserved", uint8(t.Fmt), t.Type)
	}
	// A digest that does not match means no other field can be trusted, so
	// it is checked first.
	if t.TD && t.hdrLen != 0 && !t.Snapped {
		if want := ecrc(t.Prefixes, t.hdr[:t.hdrLen], t.Data); want != t.Digest {
			return ruleErr(ErrECRC, len(t.Prefixes)+int(t.hdrLen)+len(t.Data), "digest is %08x, the TLP's ECRC is %08x", t.Digest, want)
		}
	}
	if len(t.Prefixes) != 0 {
		if err := t.validatePrefixes(); err != nil {
			return err
		}
	}
	c := kindClass[k]
	switch c {
	case ClassMemory:
		// The common case in one expression; memoryErr names the rule.
		if !t.memoryOK(k) {
			return t.memoryErr(k)
		}
		return nil // TH and AT are allowed; Length is defined
	case ClassAtomic:
		if err := t.validateAddress(k); err != nil {
			return err
		}
		return t.validateAtomic(k)
	case ClassIO, ClassConfig:
		if t.Length != 1 {
			return ruleErr(ErrIOConfigLength, 2, "%s has Length %d DW", k, t.Length)
		}
		if t.TC != 0 || t.Attr != 0 || t.AT != 0 || t.TH || t.LastBE != 0 {
			return ruleErr(ErrIOConfigField, -1, "%s has TC %d, Attr %03b, AT %d, TH %d, Last DW BE %04b",
				k, t.TC, uint8(t.Attr), t.AT, b2u(t.TH), t.LastBE)
		}
		if t.PH != 0 {
			return ruleErr(ErrReservedBits, -1, "%s has address bits 1:0 = %02b", k, t.PH)
		}
		if t.hdrLen != 0 && c == ClassConfig && (t.hdr[10]&0xF0 != 0 || t.hdr[11]&3 != 0) {
			return ruleErr(ErrReservedBits, 10, "%s has reserved bits set in header bytes 10-11 (%02x %02x)", k, t.hdr[10], t.hdr[11])
		}
		return nil
	case ClassCompletion:
		if err := t.validateCompletion(k); err != nil {
			return err
		}
	case ClassMessage:
		if err := t.validateMessage(k); err != nil {
			return err
		}
	}
	// Completions and messages: TH and AT are reserved, and so is Length
	// where the kind carries no data.
	if !k.lengthDefined() && t.Length != 0 {
		return ruleErr(ErrReservedBits, 2, "%s has a reserved Length field of %d", k, t.Length)
	}
	if t.TH {
		return ruleErr(ErrReservedBits, 1, "TH is set in a %s; only memory requests carry processing hints", k)
	}
	if t.AT != 0 {
		return ruleErr(ErrReservedBits, 2, "AT is %d in a %s; it is reserved outside memory requests", t.AT, k)
	}
	return nil
}

// memoryOK reports whether a memory request passes the address, byte-enable
// and 4 KB rules; it states in one expression what validateAddress,
// validateBE and the 4 KB check test one by one (a test proves they agree).
func (t *TLP) memoryOK(k Kind) bool {
	addrOK := (t.Fmt&1 == 0 || t.Address >= 1<<32) && (t.TH || t.PH == 0)
	beOK := t.TH && k != MWr ||
		t.Length == 1 && t.LastBE == 0 ||
		t.Length > 1 && t.FirstBE != 0 && t.LastBE != 0 &&
			(t.Length == 2 && t.Address&7 == 0 || contigFirst&(1<<t.FirstBE) != 0 && contigLast&(1<<t.LastBE) != 0)
	return addrOK && beOK && int(t.Address&0xFFF)+int(t.Length)*4 <= 4096
}

// memoryErr returns the first rule a memory request breaks, checking them
// one by one.
//
//go:noinline
func (t *TLP) memoryErr(k Kind) error {
	if err := t.validateAddress(k); err != nil {
		return err
	}
	if err := t.validateBE(k); err != nil {
		return err
	}
	if int(t.Address&0xFFF)+int(t.Length)*4 > 4096 {
		return t.cross4KErr(k)
	}
	return nil
}

// validatePrefixes enforces the limit of four End-End TLP prefixes.
func (t *TLP) validatePrefixes() error {
	endEnd := 0
	for i := 0; i+4 <= len(t.Prefixes); i += 4 {
		if t.Prefixes[i]&0x10 != 0 {
			endEnd++
		}
	}
	if endEnd > 4 {
		return ruleErr(ErrPrefix, 0, "%d End-End TLP prefixes, at most 4 are allowed", endEnd)
	}
	return nil
}

func (t *TLP) validateAddress(k Kind) error {
	if t.Fmt.Is4DW() && t.Address < 1<<32 || !t.TH && t.PH != 0 {
		return t.addressErr(k)
	}
	return nil
}

// addressErr builds validateAddress's error out of line, so the check
// itself stays small enough to inline.
//
//go:noinline
func (t *TLP) addressErr(k Kind) error {
	if t.Fmt.Is4DW() && t.Address < 1<<32 {
		return ruleErr(ErrAddress64, 8, "%s uses a 4 DW header for address %#x", k, t.Address)
	}
	return ruleErr(ErrReservedBits, -1, "PH is %02b while TH is 0", t.PH)
}

// Contiguous byte-enable patterns: a First DW BE may only disable leading
// bytes, a Last DW BE only trailing ones.
const (
	contigFirst = 1<<0b1111 | 1<<0b1110 | 1<<0b1100 | 1<<0b1000
	contigLast  = 1<<0b1111 | 1<<0b0111 | 1<<0b0011 | 1<<0b0001
)

// validateBE applies the First/Last DW Byte Enable rules of §2.2.5. With TH
// set, a read's byte-enable fields carry the steering tag and are exempt.
func (t *TLP) validateBE(k Kind) error {
	if t.TH && k != MWr {
		return nil
	}
	if t.Length == 1 {
		if t.LastBE != 0 {
			return t.beErr()
		}
		return nil
	}
	if t.FirstBE == 0 || t.LastBE == 0 ||
		!(t.Length == 2 && t.Address&7 == 0) && (contigFirst&(1<<t.FirstBE) == 0 || contigLast&(1<<t.LastBE) == 0) {
		return t.beErr()
	}
	return nil
}

// beErr names the byte-enable rule a request breaks.
//
//go:noinline
func (t *TLP) beErr() error {
	switch {
	case t.Length == 1:
		return ruleErr(ErrLastBE, 7, "Length is 1 DW but Last DW BE is %04b", t.LastBE)
	case t.FirstBE == 0:
		return ruleErr(ErrFirstBEZero, 7, "Length is %d DW but First DW BE is 0000b", t.Length)
	case t.LastBE == 0:
		return ruleErr(ErrLastBE, 7, "Length is %d DW but Last DW BE is 0000b", t.Length)
	}
	return ruleErr(ErrBENonContiguous, 7, "Length %d DW at %#x with First DW BE %04b and Last DW BE %04b",
		t.Length, t.Address, t.FirstBE, t.LastBE)
}

func (t *TLP) validateAtomic(k Kind) error {
	payload := int(t.Length) * 4
	operand := payload
	switch k {
	case FetchAdd, Swap:
		if payload != 4 && payload != 8 {
			return ruleErr(ErrAtomicSize, 2, "%s carries %d bytes; the operand must be 4 or 8 bytes", k, payload)
		}
	case CAS:
		if payload != 8 && payload != 16 && payload != 32 {
			return ruleErr(ErrAtomicSize, 2, "CAS carries %d bytes; compare and swap operands must be 4, 8 or 16 bytes each", payload)
		}
		operand = payload / 2
	}
	if t.Address%uint64(operand) != 0 {
		return ruleErr(ErrAtomicAlign, 8, "%s with %d-byte operand at %#x", k, operand, t.Address)
	}
	return nil
}

func (t *TLP) validateCompletion(k Kind) error {
	if !t.Status.Valid() {
		return ruleErr(ErrCplStatus, 6, "completion status %03b is reserved", uint8(t.Status))
	}
	if k.HasData() && t.Status != StatusSC {
		return ruleErr(ErrCplStatus, 6, "%s with status %s; only successful completions carry data", k, t.Status)
	}
	if t.hdrLen != 0 && t.hdr[11]&0x80 != 0 {
		return ruleErr(ErrReservedBits, 11, "reserved bit 7 of header byte 11 is set")
	}
	if !k.HasData() || t.BCM {
		return nil
	}
	// The payload starts at the DW holding Lower Address. If the remaining
	// Byte Count ends inside this payload the completion is the last one and
	// must be exactly long enough; otherwise it must end on a naturally
	// aligned 64-byte boundary (RCB is 64 or 128 bytes).
	first := int(t.LowerAddress & 3)
	avail := int(t.Length)*4 - first
	if int(t.ByteCount) <= avail {
		if want := (first + int(t.ByteCount) + 3) / 4; int(t.Length) != want {
			return ruleErr(ErrByteCount, 6, "Byte Count %d from Lower Address %#02x needs Length %d DW, have %d",
				t.ByteCount, t.LowerAddress, want, t.Length)
		}
		return nil
	}
	if end := int(t.LowerAddress&^3) + int(t.Length)*4; end%64 != 0 {
		return ruleErr(ErrByteCount, 6, "partial completion (Byte Count %d > %d bytes carried) ends at lower address %#x, not on a 64-byte boundary",
			t.ByteCount, avail, end&0x7F)
	}
	return nil
}

func (t *TLP) validateMessage(k Kind) error {
	info, known := messageInfo(t.MessageCode)
	if !known {
		return nil
	}
	if info.routes&(1<<t.Routing()) == 0 {
		return ruleErr(ErrMessage, 0, "%s (code %#02x) routed %s", info.name, t.MessageCode, t.Routing())
	}
	switch info.data {
	case dataNone:
		if k != Msg {
			return ruleErr(ErrMessage, 0, "%s (code %#02x) carries no data but is sent as MsgD", info.name, t.MessageCode)
		}
	case dataOneDW:
		if k != MsgD || t.Length != 1 {
			return ruleErr(ErrMessage, 0, "%s (code %#02x) must be a MsgD with Length 1 DW", info.name, t.MessageCode)
		}
	}
	return nil
}

// ECRC computes the TLP digest of an encoded TLP (prefixes, header and
// payload, without the digest itself) as it appears on the wire, read as a
// big-endian DW. hdrOff is the offset of the header (the length of the
// prefixes).
func ECRC(tlp []byte, hdrOff int) uint32 {
	hl := Fmt(tlp[hdrOff] >> 5).HeaderLen()
	return ecrc(tlp[:hdrOff], tlp[hdrOff:hdrOff+hl], tlp[hdrOff+hl:])
}

// ecrc implements §2.7.1: CRC-32 (polynomial 04C11DB7h, seed FFFFFFFFh)
// over the End-End prefixes, the header and the payload, each byte fed bit 0
// first, with the variant bits (Type[0] and EP) taken as 1, the remainder
// complemented. With that bit order the result is the reflected CRC-32 of
// IEEE 802.3, and the digest's byte 0 carries its least significant byte.
// Local prefixes are not covered.
func ecrc(prefixes, hdr, data []byte) uint32 {
	crc := uint32(0)
	for i := 0; i+4 <= len(prefixes); i += 4 {
		if prefixes[i]&0x10 != 0 { // End-End prefix
			crc = crc32.Update(crc, crc32.IEEETable, prefixes[i:i+4])
		}
	}
	// The first header DW goes through a byte-wise update so the variant
	// bits can be forced without copying it to a buffer that would escape.
	c := ^crc
	for i, x := range hdr[:4] {
		switch i {
		case 0:
			x |= 0x01 // Type[0]
		case 2:
			x |= 0x40 // EP
		}
		c = crc32.IEEETable[byte(c)^x] ^ c>>8
	}
	crc = crc32.Update(^c, crc32.IEEETable, hdr[4:])
	crc = crc32.Update(crc, crc32.IEEETable, data)
	return bits.ReverseBytes32(crc)
}

//go:noinline
func (t *TLP) cross4KErr(k Kind) error {
	return ruleErr(ErrCross4K, -1, "%s at %#x with Length %d DW ends at %#x, past the 4 KB boundary %#x",
		k, t.Address, t.Length, t.Address+uint64(t.Length)*4, (t.Address|0xFFF)+1)
}
