package pg213

import (
	"encoding/binary"
	"fmt"

	"onic/pcie"
)

// The configuration extend interface (PG213, "Configuration Extend
// Interface"). With PCI Express Extended Configuration Space Enable set in
// the IP's user-defined configuration capabilities (build.tcl:
// CONFIG.ext_pcie_cfg_space_enabled), the block chains its own extended
// capabilities to byte 0x480 and hands every configuration read to the
// user logic as a one-cycle cfg_ext_read_received with the Dword's number
// on cfg_ext_register_number. The logic must answer the reads of Dwords
// 0x120 to 0x13F (bytes 0x480 to 0x4FF) with cfg_ext_read_data and a
// one-cycle cfg_ext_read_data_valid, and no other read; writes arrive the
// same way on cfg_ext_write_received. Everything below 0x480 is the
// block's own.
const (
	// ExtFirstReg is the first Dword of the user's extended space.
	ExtFirstReg = 0x120
	// ExtRegs is how many Dwords it has (128 bytes).
	ExtRegs = 32
)

// InUserExtended reports whether the block hands configuration Dword reg
// (cfg_ext_register_number) to the user logic to answer.
func InUserExtended(reg int) bool { return reg >= ExtFirstReg && reg < ExtFirstReg+ExtRegs }

// ExtSpace is a block's user extended configuration space: Regs Dwords
// from FirstReg (PG213, "Configuration Extend Interface": 0x480-0x4FF on
// the PCIE4 block, 0xE80-0xFFF on the HBM parts' PCIE4C).
type ExtSpace struct{ FirstReg, Regs int }

// The blocks' user extended spaces.
var (
	ExtPCIE4  = ExtSpace{FirstReg: ExtFirstReg, Regs: ExtRegs}
	ExtPCIE4C = ExtSpace{FirstReg: 0xE80 / 4, Regs: (0x1000 - 0xE80) / 4}
)

// ExtSpaceAt is the user extended space that starts at byte base: the
// PCIE4's (0x480) or the PCIE4C's (0xE80).
func ExtSpaceAt(base int) (ExtSpace, error) {
	switch base {
	case 4 * ExtPCIE4.FirstReg:
		return ExtPCIE4, nil
	case 4 * ExtPCIE4C.FirstReg:
		return ExtPCIE4C, nil
	}
	return ExtSpace{}, fmt.Errorf("user extended configuration space at %#x: the PCIE4 block's is at 0x480 and the PCIE4C's at 0xE80 (PG213)", base)
}

// UserExtended returns what the user logic serves in the block's user
// extended space for function f: f's vendor-specific extended
// capabilities (its VSECs; for an O-NIC the description capability of
// pcie.NewONIC) moved to byte 0x480 and chained in order, the last
// pointing nowhere, and zero after them. Their headers and bodies are
// f's bytes; only the next pointers change. The block itself implements
// the other extended capabilities f has that the IP offers (AER); it
// fails if f's VSECs do not fit in the 128 bytes.
func UserExtended(f *pcie.Function) ([ExtRegs]uint32, error) {
	var out [ExtRegs]uint32
	words, err := UserExtendedIn(f, ExtPCIE4)
	copy(out[:], words)
	return out, err
}

// UserExtendedIn is UserExtended for the user extended space sp: its
// Dwords, sp.Regs of them, the VSECs from sp.FirstReg on.
func UserExtendedIn(f *pcie.Function, sp ExtSpace) ([]uint32, error) {
	out := make([]uint32, sp.Regs)
	space := f.Space.Bytes()
	var caps []pcie.CapInfo
	for _, c := range f.Space.Caps() {
		if c.Extended && c.ID == pcie.ExtCapVSEC {
			caps = append(caps, c)
		}
	}
	at := 0 // Dword index into out
	for i, c := range caps {
		n := (c.Length + 3) / 4
		if at+n > sp.Regs {
			return out, fmt.Errorf("%s: vendor-specific capabilities of %d bytes do not fit the block's %d bytes of user extended space (PG213: %#x-%#x)", f.Name, 4*(at+n), 4*sp.Regs, 4*sp.FirstReg, 4*(sp.FirstReg+sp.Regs)-1)
		}
		for j := range n {
			out[at+j] = binary.LittleEndian.Uint32(space[c.Offset+4*j:])
		}
		next := uint32(0)
		if i+1 < len(caps) {
			next = uint32(4 * (sp.FirstReg + at + n))
		}
		out[at] = out[at]&0x000FFFFF | next<<20
		at += n
	}
	return out, nil
}
