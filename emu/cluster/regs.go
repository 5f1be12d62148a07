package cluster

import (
	"encoding/binary"

	hmgr "onic/hdlgen/manager"
	"onic/pcie"
	"onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// The O-NIC's register BAR as software sees it: the PCIe manager's
// AXI-Lite register block (hdlgen/manager: ID, VERSION, CAPS, STATUS,
// window enables, LUT programming, outcome counters) in its first 4 KB,
// and the MSI-X table and PBA where the function's MSI-X capability puts
// them. The generated RTL's register map (onic_pcie_manager_regs.h)
// gives the offsets; reads of anything else return 0 and writes to it are
// ignored, as on the AXI-Lite bus.

// msixTableOff is where pcie.NewONIC puts the MSI-X table in BAR0 and
// msixVectors its size. (The PBA reads 0: nothing pending.)
const (
	msixTableOff = pcie.ONICMSIXTableOffset
	msixVectors  = pcie.ONICMSIXVectors
)

// regFile is the register state that is not the manager's tables.
type regFile struct {
	lutIndex, lutLo, lutHi, lutCtrl uint32
	msix                            [msixVectors * 16]byte
}

// reg32 is the 32-bit register at byte offset off of the AXI-Lite block.
func (o *onicNode) reg32(off uint64) uint32 {
	switch off {
	case hmgr.RegID:
		return hmgr.IDValue
	case hmgr.RegVersion:
		return hmgr.VersionValue
	case hmgr.RegCaps:
		return uint32(len(o.mgr.Tables().Windows())) | uint32(len(o.mgr.Tables().LUT().Entries))<<8 | 512/32<<24
	case hmgr.RegStatus:
		v := uint32(1) // the LUT is filled from the configuration when the O-NIC starts
		for i, down := range o.mgr.PortDown {
			if down {
				v |= 2 << i
			}
		}
		return v
	case hmgr.RegWinEnLo, hmgr.RegWinEnHi:
		var v uint32
		for i, w := range o.mgr.Tables().Windows() {
			if w.Enabled && i/32 == int(off-hmgr.RegWinEnLo)/4 {
				v |= 1 << (i % 32)
			}
		}
		return v
	case hmgr.RegLUTIndex:
		return o.regs.lutIndex
	case hmgr.RegLUTAddrLo:
		return o.regs.lutLo
	case hmgr.RegLUTAddrHi:
		return o.regs.lutHi
	case hmgr.RegLUTCtrl:
		return o.regs.lutCtrl
	}
	if off >= hmgr.RegCount0 && off < hmgr.RegCount0+4*uint64(len(manager.Reasons())) {
		r := manager.Reason((off - hmgr.RegCount0) / 4)
		return uint32(o.mgr.Count(r) + o.pastCounts[r])
	}
	return 0
}

// setReg32 writes the bytes of v that mask selects to register off.
func (o *onicNode) setReg32(off uint64, v, mask uint32) {
	merge := func(old uint32) uint32 { return old&^mask | v&mask }
	t := o.mgr.Tables()
	switch off {
	case hmgr.RegWinEnLo, hmgr.RegWinEnHi:
		n := merge(o.reg32(off))
		for i := range t.Windows() {
			if i/32 == int(off-hmgr.RegWinEnLo)/4 {
				t.SetWindowEnabled(i, n>>(i%32)&1 != 0)
			}
		}
	case hmgr.RegLUTIndex:
		o.regs.lutIndex = merge(o.regs.lutIndex)
	case hmgr.RegLUTAddrLo:
		o.regs.lutLo = merge(o.regs.lutLo)
	case hmgr.RegLUTAddrHi:
		o.regs.lutHi = merge(o.regs.lutHi)
	case hmgr.RegLUTCtrl:
		o.regs.lutCtrl = merge(o.regs.lutCtrl)
	case hmgr.RegLUTCommit:
		lut := t.LUT()
		i := int(o.regs.lutIndex)
		if i >= len(lut.Entries) {
			return // as the RTL: an index past the table writes nothing
		}
		ctrl := o.regs.lutCtrl
		addr := (uint64(o.regs.lutHi)<<32 | uint64(o.regs.lutLo)) &^ (lut.EntrySize - 1)
		e := ntb.LUTEntry{Enabled: ctrl&1 != 0, Egress: ntb.Egress{Kind: ntb.EgressKind(ctrl >> 1 & 7), Slot: uint8(ctrl >> 8)}, Translated: addr}
		_ = t.SetLUTEntry(i, e) // aligned by the mask above, in range by the check
	}
}

// regRead answers a read t of the register BAR at offset off: a CplD
// with the registers' bytes.
func (o *onicNode) regRead(off uint64, t *tlp.TLP) tlp.TLP {
	n := int(t.Length) * 4
	data := make([]byte, n)
	base := off &^ 3
	for i := 0; i < n; i += 4 {
		binary.LittleEndian.PutUint32(data[i:], o.barWord(base+uint64(i)))
	}
	cpl := pcie.Completion(t, o.self, tlp.StatusSC, data)
	bc, la := tlp.ReadByteCount(t.Address, t.Length, t.FirstBE, t.LastBE)
	cpl.ByteCount, cpl.LowerAddress = uint16(bc&0xFFF), la
	return cpl
}

// barWord is the 32-bit word at offset off of the register BAR.
func (o *onicNode) barWord(off uint64) uint32 {
	switch {
	case off < 0x1000:
		return o.reg32(off)
	case off >= msixTableOff && off < msixTableOff+uint64(len(o.regs.msix)):
		return binary.LittleEndian.Uint32(o.regs.msix[off-msixTableOff:])
	}
	if k, reg := o.shellAt(off); k != nil {
		return k.shellRead(reg)
	}
	return 0 // the PBA (nothing pending) and unmapped space
}

// regWrite takes a write t to the register BAR at offset off.
func (o *onicNode) regWrite(off uint64, t *tlp.TLP) {
	eachDW(off, t, func(a uint64, v, mask uint32) {
		switch {
		case a < 0x1000:
			o.setReg32(a, v, mask)
		case a >= msixTableOff && a < msixTableOff+uint64(len(o.regs.msix)):
			w := o.regs.msix[a-msixTableOff:]
			binary.LittleEndian.PutUint32(w, binary.LittleEndian.Uint32(w)&^mask|v&mask)
		}
	})
}
