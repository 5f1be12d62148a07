package manager

import (
	"fmt"
	"strings"

	"onic/pcie/acl"
	"onic/pcie/dll"
	"onic/pcie/ntb"
)

// This file is the manager's hardware contract: the register map software
// sees over AXI-Lite, the register block's behaviour, the CAPS word, and
// the pipeline's latency and initiation interval. The emulator runs it
// (emu/cluster), the RTL generator (designs/manager) implements it, and
// its tests and the co-simulation (testbenches/cosim) hold the generated
// design to it.

// Depth is the generated manager's latency in cycles, from a beat on
// s_host_tlp to the same beat on an output when nothing stalls: the input
// slice, four stages and the output slice. II is its initiation interval:
// it takes a beat every cycle. The emulator's timing uses both.
const (
	Depth = 6
	II    = 1
)

// Fixed register offsets.
const (
	RegID        = 0x000
	RegVersion   = 0x004
	RegCaps      = 0x008
	RegStatus    = 0x00C
	RegWinEnLo   = 0x010
	RegWinEnHi   = 0x014
	RegLUTIndex  = 0x020
	RegLUTAddrLo = 0x024
	RegLUTAddrHi = 0x028
	RegLUTCtrl   = 0x02C
	RegLUTCommit = 0x030
	// The run-time access rules (present when the configuration has
	// access.rule_slots): staging registers and a commit, like the LUT's.
	RegACLIndex  = 0x040
	RegACLBaseLo = 0x044
	RegACLBaseHi = 0x048
	RegACLPages  = 0x04C
	RegACLCtrl   = 0x050
	RegACLCommit = 0x054
	RegCount0    = 0x100 // + 4 * reason
	// IDValue is "ONIC" in ASCII.
	IDValue = 0x4F4E4943
	// VersionValue is the register map's version, major.minor in 16 bits each.
	VersionValue = 0x0002_0000
)

// Register is one 32-bit register of the AXI-Lite interface.
type Register struct {
	Name   string
	Offset uint32
	Access string // "RO", "RW" or "WO"
	Reset  uint32
	Doc    string
}

// Caps is the CAPS register of a manager with that many direct windows,
// LUT entries and access rule slots and a data path of dataWidth bits.
func Caps(windows, lutEntries, ruleSlots, dataWidth int) uint32 {
	return uint32(windows)&0xFF | uint32(lutEntries)&0x3FF<<8 | uint32(ruleSlots)&0x3F<<18 | uint32(dataWidth/32)<<24
}

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
	mgr   *Manager
	caps  uint32
	winEn [2]uint32 // WIN_EN_LO/HI as written (bits past the windows are kept)

	lutIndex, lutLo, lutHi, lutCtrl          uint32
	aclIndex, aclBaseLo, aclBaseHi, aclPages uint32
	aclCtrl                                  uint32
}

// NewRegs returns the register block of mgr on a data path of dataWidth
// bits (256 or 512).
func NewRegs(mgr *Manager, dataWidth int) *Regs {
	t := mgr.Tables()
	ws := t.Windows()
	en := ntb.Enables(ws)
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
	case off >= RegCount0 && off < RegCount0+4*uint32(len(Reasons())):
		// The host's TLPs only, as the generated manager (its host
		// pipeline) counts them; saturating, as its counters do.
		return uint32(min(r.mgr.CountFrom(FromHost, Reason((off-RegCount0)/4)), 1<<32-1))
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

// RegisterMap is the AXI-Lite register map of a manager with these direct
// windows, that many LUT entries and access rule slots, and a data path
// of dataWidth bits: every register's name, offset, access, reset value
// and meaning, in offset order. The generator documents and decodes it,
// Regs implements it.
func RegisterMap(windows []ntb.Window, lutEntries, ruleSlots, dataWidth int) []Register {
	en := ntb.Enables(windows)
	regs := []Register{
		{"ID", RegID, "RO", IDValue, `"ONIC" in ASCII: the register block is there`},
		{"VERSION", RegVersion, "RO", VersionValue, "register map version, major in [31:16], minor in [15:0]"},
		{"CAPS", RegCaps, "RO", Caps(len(windows), lutEntries, ruleSlots, dataWidth), "[7:0] direct windows, [17:8] LUT entries, [23:18] access rule slots, [31:24] data path width in DWs"},
		{"STATUS", RegStatus, "RO", 0, "[0] LUT filled from the configuration (TLPs are accepted from then on), [2:1] port_down (B, A)"},
		{"WIN_EN_LO", RegWinEnLo, "RW", uint32(en), "enable bit of direct windows 0-31 (window order of the generated README)"},
		{"WIN_EN_HI", RegWinEnHi, "RW", uint32(en >> 32), "enable bit of direct windows 32-63"},
		{"LUT_INDEX", RegLUTIndex, "RW", 0, "LUT entry LUT_COMMIT writes"},
		{"LUT_ADDR_LO", RegLUTAddrLo, "RW", 0, "translated base [31:0] of the entry (bits below the entry size are ignored)"},
		{"LUT_ADDR_HI", RegLUTAddrHi, "RW", 0, "translated base [63:32]"},
		{"LUT_CTRL", RegLUTCtrl, "RW", 0, "[0] enabled, [3:1] egress (1 port A, 2 port B, 3 kernel, 4 local), [15:8] kernel slot"},
		{"LUT_COMMIT", RegLUTCommit, "WO", 0, "any write stores LUT_ADDR_HI/LO and LUT_CTRL into entry LUT_INDEX (an index past the table writes nothing); TLPs see it two cycles later"},
	}
	if n := ruleSlots; n > 0 {
		regs = append(regs,
			Register{"ACL_INDEX", RegACLIndex, "RW", 0, fmt.Sprintf("access rule slot ACL_COMMIT writes (0-%d)", n-1)},
			Register{"ACL_BASE_LO", RegACLBaseLo, "RW", 0, "base address [31:12] of the rule's range (bits [11:0] are ignored: rules cover whole 4 KiB pages)"},
			Register{"ACL_BASE_HI", RegACLBaseHi, "RW", 0, "base address [63:32]"},
			Register{"ACL_PAGES", RegACLPages, "RW", 0, "length of the range in 4 KiB pages"},
			Register{"ACL_CTRL", RegACLCtrl, "RW", 0, "[0] enabled, [1] read, [2] write, [31:16] domain (configuration order of access.domains)"},
			Register{"ACL_COMMIT", RegACLCommit, "WO", 0, "any write stores ACL_BASE_HI/LO, ACL_PAGES and ACL_CTRL into slot ACL_INDEX (an index past the slots writes nothing); TLPs see it the next cycle"},
		)
	}
	for i, r := range Reasons() {
		regs = append(regs, Register{"COUNT_" + strings.ToUpper(strings.ReplaceAll(r.String(), "-", "_")), RegCount0 + 4*uint32(i), "RO", 0,
			fmt.Sprintf("TLPs from the host whose outcome had reason %q (saturates at 2^32-1)", r.String())})
	}
	return regs
}

// PortInCounters are the names of the first counters of the card's
// counter region (pcie.ONICCountersOffset, 4 bytes each, in this order):
// the port pipelines' TLPs from both optical ports by reason
// (port_in_count_<reason>_total) and their denials by access rule
// (port_in_deny_<rule>_total). The generated card's list
// (designs/internal/card.Counters) starts with them; the emulator's O-NIC
// serves them from PortInCounter.
func PortInCounters() []string {
	var names []string
	for _, r := range Reasons() {
		names = append(names, "port_in_count_"+strings.ReplaceAll(r.String(), "-", "_")+"_total")
	}
	for _, r := range acl.Denials() {
		names = append(names, "port_in_deny_"+strings.ReplaceAll(r.String(), "-", "_")+"_total")
	}
	return names
}

// The card's egress buffers and watch, as the emulator's O-NIC models
// them: what one model and the RTL must agree on, so written once here.
const (
	// DefaultHoldTLPs is how many TLPs a port's hold buffer keeps by
	// default (a scenario's hold_tlps); HoldBeats is the data beats it has
	// room for (64 KiB of block RAM a port at 512 bits): a TLP is held
	// only while both allow.
	DefaultHoldTLPs = 1024
	// FailEgressTLPs is how many TLPs a port's egress buffer holds in
	// front of its link under the fail policy (the card's failBuffer, the
	// emulator's link queue): one leaving while the next goes in.
	FailEgressTLPs = 2
	HoldBeats      = 1024
	// DefaultEgressStallCycles is how long, in the manager's clock, a TLP
	// may wait at an up port's egress that takes nothing before the port
	// counts as stalled (16.384 µs at 250 MHz); DefaultCreditTimeoutCycles
	// how long the optical link waits for credits before it goes down and
	// retrains (65.5 µs), four stall timeouts.
	DefaultEgressStallCycles   = 4096
	DefaultCreditTimeoutCycles = dll.CreditTimeoutCycles
)

// SlowTLPs is the egress watch's slow rule, the card's and the
// emulator's O-NIC's alike: a port whose egress waited half of a window
// of cycles cycles (the egress stall timeout) while fewer than
// SlowTLPs(cycles) TLPs got past it in the window counts as stalled. One
// per 64 cycles, at least one: 64 at the default 4,096, about 8 Gb/s of
// 256-byte writes at 250 MHz.
func SlowTLPs(cycles int) int { return max(1, cycles/64) }

// CardCounters are the names of all of the card's counters, in the order
// of its counter region (pcie.ONICCountersOffset, 4 bytes each), for an
// O-NIC whose kernel slots hold two-input kernels where pair says (one
// entry per slot of its translation tables) and whose ports hold (true)
// or fail (false) what comes for them while down: PortInCounters, the
// host tag table's overflows, each slot's drops, the MSI-X messages sent
// and those the PCIe block failed, then each port's
// (hold_drops under hold, down_drops under fail; egress_stalls; its
// optical link's replays, lost, stalls, crc_errors, naks, malformed).
// The generated card's list (designs/internal/card.Counters) is this one;
// the emulator's O-NIC serves each by name.
func CardCounters(pair []bool, hold bool) []string {
	names := append(PortInCounters(), "host_np_overflows")
	for k, two := range pair {
		slot := []string{"drop_not_write", "drop_closed", "drop_no_proxy", "out_malformed"}
		if two {
			slot = []string{"drop_pair_length", "drop_not_write", "drop_closed", "drop_no_proxy", "drop_not_input", "drop_pair_full", "out_malformed"}
		}
		for _, n := range slot {
			names = append(names, fmt.Sprintf("slot%d_%s", k, n))
		}
	}
	names = append(names, "msix_sent", "msix_failed")
	drops := "down_drops"
	if hold {
		drops = "hold_drops"
	}
	for _, p := range []string{"port_a_", "port_b_"} {
		for _, n := range []string{drops, "egress_stalls", "replays", "lost", "stalls", "crc_errors", "naks", "malformed"} {
			names = append(names, p+n)
		}
	}
	return names
}

// PortInCounter is counter i of PortInCounters as the card reads it: the
// TLPs from both ports, saturating at 2^32-1; 0 past the list.
func (m *Manager) PortInCounter(i int) uint32 {
	var n uint64
	rs, ds := Reasons(), acl.Denials()
	switch {
	case i >= 0 && i < len(rs):
		n = m.CountFrom(FromPortA, rs[i]) + m.CountFrom(FromPortB, rs[i])
	case i >= len(rs) && i < len(rs)+len(ds):
		r := ds[i-len(rs)]
		n = m.DenialsFrom(FromPortA, r) + m.DenialsFrom(FromPortB, r)
	}
	return uint32(min(n, 1<<32-1))
}
