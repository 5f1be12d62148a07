package manager

import (
	"onic/hdlgen/translate"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
)

// Regs is the register block's behaviour in Go, acting on the manager
// model the emulator runs (pcie/manager): what software reads and writes
// over the AXI-Lite interface at the offsets of Registers. The emulator's
// O-NIC register BAR runs it, and the co-simulation (testbenches/cosim)
// holds the generated RTL equal to it, read for read and TLP for TLP.
//
// Like the hardware after reset, a new Regs has the window enables the
// configuration gives, every staging register zero and every rule slot
// off; counters read the manager's.
type Regs struct {
	mgr   *pmgr.Manager
	caps  uint32
	winEn [2]uint32 // WIN_EN_LO/HI as written (bits past the windows are kept)

	lutIndex, lutLo, lutHi, lutCtrl          uint32
	aclIndex, aclBaseLo, aclBaseHi, aclPages uint32
	aclCtrl                                  uint32
}

// NewRegs returns the register block of mgr on a data path of dataWidth
// bits (256 or 512).
func NewRegs(mgr *pmgr.Manager, dataWidth int) *Regs {
	t := mgr.Tables()
	ws := t.Windows()
	en := translate.Enables(ws)
	return &Regs{mgr: mgr, caps: Caps(len(ws), len(t.LUT().Entries), mgr.Access().RuleSlots(), dataWidth),
		winEn: [2]uint32{uint32(en), uint32(en >> 32)}}
}

// Read returns the 32-bit register at byte offset off (unmapped offsets
// read 0).
func (r *Regs) Read(off uint32) uint32 {
	slots := r.mgr.Access().RuleSlots() > 0
	switch {
	case off == RegID:
		return IDValue
	case off == RegVersion:
		return VersionValue
	case off == RegCaps:
		return r.caps
	case off == RegStatus:
		v := uint32(1) // the LUT is filled from the configuration right after reset
		for i, down := range r.mgr.PortDown {
			if down {
				v |= 2 << i
			}
		}
		return v
	case off == RegWinEnLo || off == RegWinEnHi:
		return r.winEn[(off-RegWinEnLo)/4]
	case off == RegLUTIndex:
		return r.lutIndex
	case off == RegLUTAddrLo:
		return r.lutLo
	case off == RegLUTAddrHi:
		return r.lutHi
	case off == RegLUTCtrl:
		return r.lutCtrl
	case off == RegACLIndex && slots:
		return r.aclIndex
	case off == RegACLBaseLo && slots:
		return r.aclBaseLo
	case off == RegACLBaseHi && slots:
		return r.aclBaseHi
	case off == RegACLPages && slots:
		return r.aclPages
	case off == RegACLCtrl && slots:
		return r.aclCtrl
	case off >= RegCount0 && off < RegCount0+4*uint32(len(pmgr.Reasons())):
		return uint32(r.mgr.Count(pmgr.Reason((off - RegCount0) / 4)))
	}
	return 0
}

// Write writes the bytes of v that mask selects (0xFF per enabled write
// strobe) to the register at byte offset off; writes to read-only or
// unmapped offsets are ignored, as on the AXI-Lite bus.
func (r *Regs) Write(off, v, mask uint32) {
	upd := func(reg *uint32) { *reg = *reg&^mask | v&mask }
	slots := r.mgr.Access().RuleSlots() > 0
	t := r.mgr.Tables()
	switch {
	case off == RegWinEnLo || off == RegWinEnHi:
		upd(&r.winEn[(off-RegWinEnLo)/4])
		en := uint64(r.winEn[1])<<32 | uint64(r.winEn[0])
		for i := range t.Windows() {
			t.SetWindowEnabled(i, en>>i&1 != 0)
		}
	case off == RegLUTIndex:
		upd(&r.lutIndex)
	case off == RegLUTAddrLo:
		upd(&r.lutLo)
	case off == RegLUTAddrHi:
		upd(&r.lutHi)
	case off == RegLUTCtrl:
		upd(&r.lutCtrl)
	case off == RegLUTCommit:
		lut := t.LUT()
		if int64(r.lutIndex) >= int64(len(lut.Entries)) {
			return // an index past the table writes nothing
		}
		e := ntb.LUTEntry{Enabled: r.lutCtrl&1 != 0, Egress: ntb.Egress{Kind: ntb.EgressKind(r.lutCtrl >> 1 & 7), Slot: uint8(r.lutCtrl >> 8)},
			Translated: (uint64(r.lutHi)<<32 | uint64(r.lutLo)) &^ (lut.EntrySize - 1)}
		_ = t.SetLUTEntry(int(r.lutIndex), e) // in range by the check above, aligned by the mask
	case !slots:
	case off == RegACLIndex:
		upd(&r.aclIndex)
	case off == RegACLBaseLo:
		upd(&r.aclBaseLo)
	case off == RegACLBaseHi:
		upd(&r.aclBaseHi)
	case off == RegACLPages:
		upd(&r.aclPages)
	case off == RegACLCtrl:
		upd(&r.aclCtrl)
	case off == RegACLCommit:
		a := r.mgr.Access()
		if int64(r.aclIndex) >= int64(a.RuleSlots()) {
			return // an index past the slots writes nothing
		}
		c := r.aclCtrl
		_ = a.SetRuleSlot(int(r.aclIndex), acl.RuleSlot{Enabled: c&1 != 0, Read: c>>1&1 != 0, Write: c>>2&1 != 0, Domain: uint16(c >> 16),
			Base: uint64(r.aclBaseHi)<<32 | uint64(r.aclBaseLo)&^(acl.Page-1), Pages: r.aclPages}) // in range, aligned
	}
}
