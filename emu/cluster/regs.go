package cluster

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"onic/emu/sim"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// The O-NIC's register BAR as software sees it: the PCIe manager's
// AXI-Lite register block (designs/manager: ID, VERSION, CAPS, STATUS,
// window enables, LUT programming, access rule slots, outcome counters)
// in its first 4 KB,
// the MSI-X table and PBA where the function's MSI-X capability puts
// them, and the first block of the card's counters (the port pipelines':
// pmgr.PortInCounters) from pcie.ONICCountersOffset. The generated RTL's register map (onic_pcie_manager_regs.h)
// gives the offsets; reads of anything else return 0 and writes to it are
// ignored, as on the AXI-Lite bus.

// msixTableOff is where pcie.NewONIC puts the MSI-X table in BAR0,
// msixPBAOff its Pending Bit Array and msixVectors its size.
const (
	msixTableOff = pcie.ONICMSIXTableOffset
	msixPBAOff   = pcie.ONICMSIXPBAOffset
	msixVectors  = pcie.ONICMSIXVectors
)

// regFile is the register BAR's state: the AXI-Lite block (the
// generated RTL's behaviour, designs/manager.Regs, bound to the running
// manager), the MSI-X table and its Pending Bits.
type regFile struct {
	block *pmgr.Regs
	msix  [msixVectors * 16]byte
	pba   uint64
	// msixSent counts the MSI-X messages sent (the card's msix_sent).
	msixSent uint64
}

// resetRegs gives the register block of a freshly started (or reflashed)
// manager. (The MSI-X table and PBA: resetMSIX.)
func (o *onicNode) resetRegs() { o.regs.block = pmgr.NewRegs(o.mgr, o.pl.width) }

// resetMSIX gives the MSI-X table its state at power-on and after a
// full reflash (the table and PBA are the card's logic, as the block's
// "MSI-X External" mode has them; the capability's Message Control is
// the block's and keeps what the host wrote): every vector masked
// (Vector Control's Mask Bit resets to 1, PCIe Base §7.7.2), none
// pending.
func (o *onicNode) resetMSIX() {
	for v := range msixVectors {
		binary.LittleEndian.PutUint32(o.regs.msix[16*v+12:], 1)
	}
	o.regs.pba = 0
}

// raiseMSIX fires MSI-X vector v (a task shell's: its slot's number): it
// is pending until the function may send it (PCIe Base §6.1.4.5), sent at
// once if it may. The card does the same through the PCIe block's MSI-X
// interface (docs/hdl.md, "Interrupts").
func (o *onicNode) raiseMSIX(v int, at sim.Time) {
	o.regs.pba |= 1 << v
	o.sendMSIX(at)
}

// configChanged follows a configuration write by the host's software:
// the MSI-X Enable and Function Mask bits may have changed. A card is
// told (its PCIe block shows them to the card on cfg_interrupt_msix_*);
// the model sends what is pending and may now go.
func (o *onicNode) configChanged() {
	if o.hw >= 0 {
		en, mask := o.fn.MSIXControl()
		if err := o.c.hw.x.SetMSIX(o.hw, en, mask); err != nil && o.c.hw.err == nil {
			o.c.hw.err = err
		}
		return
	}
	o.sendMSIX(o.c.s.Now())
}

// sendMSIX sends, lowest vector first, every pending vector the function
// may send now: MSI-X enabled, the function not masked, bus mastering on
// and the vector's own Mask Bit clear. Each message is its table entry's
// data written to its address (the address's two low bits, reserved for
// DW alignment, taken as zero) and clears its Pending Bit. With no
// software attached nobody's memory is there to write: they stay pending.
func (o *onicNode) sendMSIX(at sim.Time) {
	en, fmask := o.fn.MSIXControl()
	s := o.host.soft
	if o.regs.pba == 0 || !en || fmask || !o.fn.BusMaster() || s == nil || s.gone {
		return
	}
	for v := range msixVectors {
		e := o.regs.msix[16*v:]
		if o.regs.pba>>v&1 == 0 || binary.LittleEndian.Uint32(e[12:])&1 != 0 {
			continue
		}
		o.regs.pba &^= 1 << v
		o.regs.msixSent++
		addr := binary.LittleEndian.Uint64(e) &^ 3
		s.deviceWrite(o, addr, slices.Clone(e[8:12]), at)
	}
}

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
		return o.cardCounter(int(off-pcie.ONICCountersOffset) / 4)
	case off >= msixPBAOff && off < msixPBAOff+8:
		return uint32(o.regs.pba >> (8 * (off - msixPBAOff)))
	}
	if k, reg := o.shellAt(off); k != nil {
		return k.shellRead(reg)
	}
	return 0 // unmapped space
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
	if off >= msixTableOff && off < msixTableOff+uint64(len(o.regs.msix)) {
		o.sendMSIX(o.c.s.Now()) // an entry unmasked
	}
}

// cardCounter is counter i of the card's counter region
// (pmgr.CardCounters for the O-NIC's slots and down policy), as the
// emulator counts it, saturating at 2^32-1; 0 past the list. Counts of
// what the emulator cannot see read 0: the host tag table never
// overflows (a request waits for a tag), a kernel's output and a port's
// frames are never malformed (its TLPs are structs).
func (o *onicNode) cardCounter(i int) uint32 {
	if i < len(pmgr.PortInCounters()) {
		return o.mgr.PortInCounter(i)
	}
	slots := min(o.mgr.Tables().KernelSlots(), maxKernelSlots)
	pair := make([]bool, slots)
	for k := range pair {
		pair[k] = o.kernels[k] != nil && o.kernels[k].inputs == 2
	}
	names := pmgr.CardCounters(pair, o.d.Hold)
	if i >= len(names) {
		return 0
	}
	return uint32(min(o.counter(names[i]), 1<<32-1))
}

// counter is the count behind the card's counter name (one of
// pmgr.CardCounters past the port pipelines' block).
func (o *onicNode) counter(name string) uint64 {
	if p, what, ok := strings.Cut(name, "_"); ok && p == "port" && len(what) > 2 && what[1] == '_' {
		pt := o.ports[what[0]-'a']
		e := pt.linkErrors()
		switch what[2:] {
		case "hold_drops":
			return pt.holdDrops
		case "down_drops":
			return pt.downDrops
		case "egress_stalls":
			return pt.w.stalls
		case "stalls":
			return pt.w.retrain
		case "lost":
			return pt.lost
		case "replays":
			return e.Replays
		case "crc_errors":
			return e.CRCErrors
		case "naks":
			return e.Naks
		}
		return 0 // malformed
	}
	switch name {
	case "msix_sent":
		return o.regs.msixSent
	case "msix_failed":
		return 0 // the model sends only what the function may: the block fails nothing
	}
	var k int
	var what string
	if n, _ := fmt.Sscanf(name, "slot%d_", &k); n != 1 || k < 0 || k >= maxKernelSlots {
		return 0 // host_np_overflows
	}
	_, what, _ = strings.Cut(name, "_")
	kn := o.kernels[k]
	if what == "drop_closed" {
		// Closed: no kernel, or a task-driven one with no task running.
		if kn != nil {
			return o.closed[k] + kn.dropped[dropNoTask]
		}
		return o.closed[k]
	}
	if kn == nil {
		return 0
	}
	switch what {
	case "drop_not_write":
		return kn.dropped[dropNotWrite]
	case "drop_no_proxy":
		return kn.noProxy
	case "drop_not_input":
		return kn.dropped[dropNotInput]
	case "drop_pair_full":
		return kn.dropped[dropPairFull]
	case "drop_pair_length":
		return kn.dropped[dropPairLength]
	}
	return 0 // out_malformed
}
