// Package pcie models PCIe semantics for onic's emulator and RTL generator:
// configuration space with per-bit write semantics and capabilities, BAR
// sizing, and functions answering configuration TLPs (PCI Express Base
// Specification 5.0, chapter 7; PCI Local Bus 3.0 for the legacy header).
package pcie

import (
	"encoding/binary"
	"fmt"
)

// SpaceSize is the size of a PCIe function's configuration space.
const SpaceSize = 4096

// Access says how software writes affect a register's bits.
type Access uint8

// Register bit attributes (PCIe Base Specification 5.0 §7.4).
const (
	RO     Access = iota // read-only: writes are ignored
	RW                   // read-write
	RW1C                 // read, write 1 to clear
	HwInit               // set by hardware or firmware, read-only to software
)

// Space is the 4 KB configuration space of one function: its bytes and, for
// every bit, whether software may write it (RW) or clear it by writing 1
// (RW1C). Everything else is read-only to software. Hardware-side setters
// (Set8, Set16, Set32) change bytes regardless.
type Space struct {
	b   [SpaceSize]byte
	rw  [SpaceSize]byte
	w1c [SpaceSize]byte

	// capability list bookkeeping
	capTail  int // offset of the last standard capability, 0 if none
	capNext  int // first free byte for the next standard capability
	extTail  int // offset of the last extended capability, 0 if none
	extNext  int
	capNames []CapInfo
}

// CapInfo records a capability added to a Space.
type CapInfo struct {
	Offset   int
	ID       uint16
	Extended bool
	Length   int
}

func newSpace() *Space {
	return &Space{capNext: 0x40, extNext: 0x100}
}

// Bytes returns a copy of the configuration space.
func (s *Space) Bytes() [SpaceSize]byte { return s.b }

// Read returns n (1, 2 or 4) bytes at off, little-endian. Reads outside the
// space return all ones, as an absent register would.
func (s *Space) Read(off, n int) uint32 {
	if off < 0 || off+n > SpaceSize || (n != 1 && n != 2 && n != 4) {
		return ^uint32(0) >> (32 - 8*min(max(n, 1), 4))
	}
	var v uint32
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint32(s.b[off+i])
	}
	return v
}

// Read32 returns the DW at off (which should be DW-aligned).
func (s *Space) Read32(off int) uint32 { return s.Read(off, 4) }

// Read16 returns the 16-bit register at off.
func (s *Space) Read16(off int) uint16 { return uint16(s.Read(off, 2)) }

// Read8 returns the byte at off.
func (s *Space) Read8(off int) uint8 { return uint8(s.Read(off, 1)) }

// Write applies a software write of n bytes of v at off, honouring each
// bit's access: RW bits take the new value, RW1C bits are cleared where v
// has ones, other bits keep their value.
func (s *Space) Write(off, n int, v uint32) {
	if off < 0 || off+n > SpaceSize {
		return
	}
	for i := 0; i < n; i++ {
		x := uint8(v >> (8 * i))
		p := off + i
		s.b[p] = s.b[p]&^s.rw[p] | x&s.rw[p]
		s.b[p] &^= x & s.w1c[p]
	}
}

// WriteDW applies a configuration write of the DW at reg (DW-aligned) with
// byte enables be (bit i enables byte reg+i), as a CfgWr TLP carries it.
func (s *Space) WriteDW(reg int, data [4]byte, be uint8) {
	for i := 0; i < 4; i++ {
		if be>>i&1 == 1 {
			s.Write(reg+i, 1, uint32(data[i]))
		}
	}
}

// Set8, Set16 and Set32 set bytes from the hardware side, ignoring access.
func (s *Space) Set8(off int, v uint8) { s.b[off] = v }

// Set16 sets a 16-bit register from the hardware side.
func (s *Space) Set16(off int, v uint16) { binary.LittleEndian.PutUint16(s.b[off:], v) }

// Set32 sets a 32-bit register from the hardware side.
func (s *Space) Set32(off int, v uint32) { binary.LittleEndian.PutUint32(s.b[off:], v) }

// SetAccess marks the bits of mask (n bytes at off, little-endian) with
// access a. Bits outside mask keep their access.
func (s *Space) SetAccess(off, n int, mask uint32, a Access) {
	for i := 0; i < n; i++ {
		m := uint8(mask >> (8 * i))
		p := off + i
		s.rw[p] &^= m
		s.w1c[p] &^= m
		switch a {
		case RW:
			s.rw[p] |= m
		case RW1C:
			s.w1c[p] |= m
		}
	}
}

// AccessOf returns the access of bit b of the byte at off.
func (s *Space) AccessOf(off int, bit uint) Access {
	switch {
	case s.rw[off]>>bit&1 == 1:
		return RW
	case s.w1c[off]>>bit&1 == 1:
		return RW1C
	}
	return RO
}

// Caps lists the capabilities added, in the order they were added.
func (s *Space) Caps() []CapInfo { return append([]CapInfo(nil), s.capNames...) }

// addCap allocates a standard capability of length bytes (DW-aligned in the
// first 256 bytes, after the header), links it into the list at 0x34 and
// sets the Capabilities List bit of the Status register.
func (s *Space) addCap(id uint8, length int) (int, error) {
	off := s.capNext
	length = (length + 3) &^ 3
	if off+length > 0x100 {
		return 0, fmt.Errorf("capability %#02x of %d bytes does not fit below 0x100 (next free %#x)", id, length, off)
	}
	s.b[off] = id
	s.b[off+1] = 0
	if s.capTail == 0 {
		s.b[0x34] = uint8(off)
	} else {
		s.b[s.capTail+1] = uint8(off)
	}
	s.capTail = off
	s.capNext = off + length
	s.b[0x06] |= 0x10 // Status: Capabilities List
	s.capNames = append(s.capNames, CapInfo{off, uint16(id), false, length})
	return off, nil
}

// addExtCap allocates an extended capability from 0x100 on, with its
// header (ID, version, next pointer).
func (s *Space) addExtCap(id uint16, version uint8, length int) (int, error) {
	off := s.extNext
	length = (length + 3) &^ 3
	if off+length > SpaceSize {
		return 0, fmt.Errorf("extended capability %#04x of %d bytes does not fit (next free %#x)", id, length, off)
	}
	s.Set32(off, uint32(id)|uint32(version&15)<<16)
	if s.extTail != 0 {
		hdr := s.Read32(s.extTail)
		s.Set32(s.extTail, hdr&0x000FFFFF|uint32(off)<<20)
	}
	s.extTail = off
	s.extNext = off + length
	s.capNames = append(s.capNames, CapInfo{off, id, true, length})
	return off, nil
}
