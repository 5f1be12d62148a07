package cluster

import (
	"encoding/binary"

	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// The O-NIC's register BAR as software sees it: the PCIe manager's
// AXI-Lite register block (hdlgen/manager: ID, VERSION, CAPS, STATUS,
// window enables, LUT programming, access rule slots, outcome counters)
// in its first 4 KB,
// the MSI-X table and PBA where the function's MSI-X capability puts
// them, and the first block of the card's counters (the port pipelines':
// pmgr.PortInCounters) from pcie.ONICCountersOffset. The generated RTL's register map (onic_pcie_manager_regs.h)
// gives the offsets; reads of anything else return 0 and writes to it are
// ignored, as on the AXI-Lite bus.

// msixTableOff is where pcie.NewONIC puts the MSI-X table in BAR0 and
// msixVectors its size. (The PBA reads 0: nothing pending.)
const (
	msixTableOff = pcie.ONICMSIXTableOffset
	msixVectors  = pcie.ONICMSIXVectors
)

// regFile is the register BAR's state: the AXI-Lite block (the
// generated RTL's behaviour, hdlgen/manager.Regs, bound to the running
// manager) and the MSI-X table.
type regFile struct {
	block *pmgr.Regs
	msix  [msixVectors * 16]byte
}

// resetRegs gives the register block of a freshly started (or reflashed)
// manager; the MSI-X table, in the PCIe core's BAR logic, keeps what the
// driver wrote.
func (o *onicNode) resetRegs() { o.regs.block = pmgr.NewRegs(o.mgr, o.pl.width) }

// regRead answers a read t of the register BAR at offset off: CplDs
// with the registers' bytes, none longer than MPS.
func (o *onicNode) regRead(off uint64, t *tlp.TLP) []tlp.TLP {
	n := int(t.Length) * 4
	if t.Length == 0 {
		n = 4096
	}
	data := make([]byte, n)
	base := off &^ 3
	for i := 0; i < n; i += 4 {
		binary.LittleEndian.PutUint32(data[i:], o.barWord(base+uint64(i)))
	}
	// Split at the MPS the O-NIC's Device Control says, as the card's
	// register block splits at the block's cfg_max_payload.
	sz, _ := o.fn.Sizes()
	return pcie.ReadCompletions(t, o.self, data, sz.MPS)
}

// barWord is the 32-bit word at offset off of the register BAR.
func (o *onicNode) barWord(off uint64) uint32 {
	switch {
	case off < 0x1000:
		return o.regs.block.Read(uint32(off))
	case off >= msixTableOff && off < msixTableOff+uint64(len(o.regs.msix)):
		return binary.LittleEndian.Uint32(o.regs.msix[off-msixTableOff:])
	case off >= pcie.ONICCountersOffset && off < pcie.ONICCountersEnd:
		// The card's counters: the port pipelines' counts, as the
		// generated card has them first; the card's others (its links'
		// bit-level counters, drops before a dark link, the slots') have
		// no register here: the report counts what the emulator models
		// of them.
		return o.mgr.PortInCounter(int(off-pcie.ONICCountersOffset) / 4)
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
			o.regs.block.Write(uint32(a), v, mask)
		case a >= msixTableOff && a < msixTableOff+uint64(len(o.regs.msix)):
			w := o.regs.msix[a-msixTableOff:]
			binary.LittleEndian.PutUint32(w, binary.LittleEndian.Uint32(w)&^mask|v&mask)
		}
	})
}
