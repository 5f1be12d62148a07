package tlp

import (
	"fmt"
	"strconv"
)

// ID is a PCIe routing ID: bus (8 bits), device (5 bits) and function
// (3 bits), as carried in requester, completer and configuration target
// fields.
type ID uint16

// NewID builds an ID from bus, device and function numbers. Out-of-range
// device or function bits are masked.
func NewID(bus, dev, fn uint8) ID {
	return ID(uint16(bus)<<8 | uint16(dev&31)<<3 | uint16(fn&7))
}

// Bus returns the bus number.
func (id ID) Bus() uint8 { return uint8(id >> 8) }

// Device returns the device number.
func (id ID) Device() uint8 { return uint8(id>>3) & 31 }

// Function returns the function number.
func (id ID) Function() uint8 { return uint8(id) & 7 }

// String formats the ID as lspci does: "bb:dd.f" in hex.
func (id ID) String() string {
	var b [7]byte
	return string(id.appendTo(b[:0]))
}

func (id ID) appendTo(b []byte) []byte {
	const hx = "0123456789abcdef"
	bus, dev := id.Bus(), id.Device()
	return append(b, hx[bus>>4], hx[bus&15], ':', hx[dev>>4], hx[dev&15], '.', hx[id.Function()])
}

// ParseID parses "bb:dd.f" (hex bus and device, function 0-7).
func ParseID(s string) (ID, error) {
	if len(s) < 5 || len(s) > 7 {
		return 0, fmt.Errorf("routing ID %q: want bb:dd.f", s)
	}
	var colon, dot = -1, -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			colon = i
		case '.':
			dot = i
		}
	}
	if colon < 1 || dot < colon+2 || dot != len(s)-2 {
		return 0, fmt.Errorf("routing ID %q: want bb:dd.f", s)
	}
	bus, err1 := strconv.ParseUint(s[:colon], 16, 8)
	dev, err2 := strconv.ParseUint(s[colon+1:dot], 16, 8)
	fn, err3 := strconv.ParseUint(s[dot+1:], 8, 8)
	if err1 != nil || err2 != nil || err3 != nil || dev > 31 || fn > 7 {
		return 0, fmt.Errorf("routing ID %q: want bus 00-ff, device 00-1f, function 0-7", s)
	}
	return NewID(uint8(bus), uint8(dev), uint8(fn)), nil
}

// Attr holds the three attribute bits: IDO (bit 2), RO (bit 1) and NS
// (bit 0).
type Attr uint8

// Attribute bits.
const (
	AttrNS  Attr = 1 << 0 // No Snoop
	AttrRO  Attr = 1 << 1 // Relaxed Ordering
	AttrIDO Attr = 1 << 2 // ID-Based Ordering
)

// Status is a completion status (3 bits).
type Status uint8

// Completion status values (PCIe Base Specification 5.0 §2.2.9).
const (
	StatusSC  Status = 0b000 // Successful Completion
	StatusUR  Status = 0b001 // Unsupported Request
	StatusCRS Status = 0b010 // Configuration Request Retry Status
	StatusCA  Status = 0b100 // Completer Abort
)

// String returns the spec abbreviation, or "reserved(n)".
func (s Status) String() string {
	switch s {
	case StatusSC:
		return "SC"
	case StatusUR:
		return "UR"
	case StatusCRS:
		return "CRS"
	case StatusCA:
		return "CA"
	}
	return "reserved(" + strconv.Itoa(int(s)) + ")"
}

// ParseStatus parses SC, UR, CRS, CA or reserved(n), the forms String
// returns.
func ParseStatus(s string) (Status, bool) {
	for v := Status(0); v < 8; v++ {
		if v.String() == s {
			return v, true
		}
	}
	return 0, false
}

// Valid reports whether s is one of the four defined status values.
func (s Status) Valid() bool {
	return s == StatusSC || s == StatusUR || s == StatusCRS || s == StatusCA
}
