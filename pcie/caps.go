package pcie

import (
	"fmt"

	"onic/tlp"
)

// Capability IDs (PCI Code and ID Assignment Specification).
const (
	CapPM      = 0x01 // Power Management
	CapMSI     = 0x05
	CapPCIe    = 0x10 // PCI Express
	CapMSIX    = 0x11
	ExtCapAER  = 0x0001 // Advanced Error Reporting
	ExtCapVSEC = 0x000B // Vendor-Specific Extended Capability
	ExtCapACS  = 0x000D // Access Control Services
)

// AddPM adds a Power Management capability (version 3, D0 and D3hot, PME
// from D3hot) and returns its offset.
func (f *Function) AddPM() (int, error) {
	s := f.Space
	off, err := s.addCap(CapPM, 8)
	if err != nil {
		return 0, err
	}
	s.Set16(off+2, 0x0003|1<<14) // PMC: version 3, PME from D3hot
	s.Set16(off+4, 0x0008)       // PMCSR: No_Soft_Reset
	s.SetAccess(off+4, 2, 0x0103, RW)
	s.SetAccess(off+4, 2, 0x8000, RW1C)
	return off, nil
}

// MSIConfig describes an MSI capability.
type MSIConfig struct {
	Vectors          int  // 1, 2, 4, 8, 16 or 32
	Addr64           bool // 64-bit message address
	PerVectorMasking bool
}

// AddMSI adds an MSI capability and returns its offset.
func (f *Function) AddMSI(c MSIConfig) (int, error) {
	log2 := -1
	for i := 0; i <= 5; i++ {
		if c.Vectors == 1<<i {
			log2 = i
		}
	}
	if log2 < 0 {
		return 0, fmt.Errorf("msi.vectors %d: must be 1, 2, 4, 8, 16 or 32", c.Vectors)
	}
	length := 0x0C // 32-bit address, data
	if c.Addr64 {
		length = 0x10
	}
	dataOff := length - 4
	if c.PerVectorMasking {
		length += 8 // mask and pending bits
	}
	s := f.Space
	off, err := s.addCap(CapMSI, length)
	if err != nil {
		return 0, err
	}
	ctl := uint16(log2) << 1
	if c.Addr64 {
		ctl |= 1 << 7
	}
	if c.PerVectorMasking {
		ctl |= 1 << 8
	}
	s.Set16(off+2, ctl)
	s.SetAccess(off+2, 2, 0x0071, RW) // MSI enable, multiple message enable
	s.SetAccess(off+4, 4, 0xFFFFFFFC, RW)
	if c.Addr64 {
		s.SetAccess(off+8, 4, 0xFFFFFFFF, RW)
	}
	s.SetAccess(off+dataOff, 2, 0xFFFF, RW)
	if c.PerVectorMasking {
		s.SetAccess(off+dataOff+4, 4, uint32(uint64(1)<<c.Vectors-1), RW)
	}
	return off, nil
}

// MSIXConfig describes an MSI-X capability: the vector table and the
// pending bit array live in memory BARs of the function.
type MSIXConfig struct {
	Vectors                int // 1 to 2048
	TableBAR, PBABAR       int
	TableOffset, PBAOffset uint32
}

// AddMSIX adds an MSI-X capability and returns its offset. The table
// (16 bytes per vector) and PBA (one bit per vector, in QWs) must lie inside
// their memory BARs, 8-byte aligned, without overlapping each other.
func (f *Function) AddMSIX(c MSIXConfig) (int, error) {
	if c.Vectors < 1 || c.Vectors > 2048 {
		return 0, fmt.Errorf("msix.vectors %d: must be 1 to 2048", c.Vectors)
	}
	tableLen := uint64(c.Vectors) * 16
	pbaLen := uint64((c.Vectors+63)/64) * 8
	for _, r := range []struct {
		name string
		bar  int
		off  uint32
		n    uint64
	}{{"table", c.TableBAR, c.TableOffset, tableLen}, {"pba", c.PBABAR, c.PBAOffset, pbaLen}} {
		if r.bar < 0 || r.bar > 5 || f.BARs[r.bar].Kind == BARNone || f.BARs[r.bar].Kind == BARIO {
			return 0, fmt.Errorf("msix.%s_bar %d: not a memory BAR of %s", r.name, r.bar, f.Name)
		}
		if r.off%8 != 0 {
			return 0, fmt.Errorf("msix.%s_offset %#x: must be 8-byte aligned", r.name, r.off)
		}
		if uint64(r.off)+r.n > f.BARs[r.bar].Size {
			return 0, fmt.Errorf("msix.%s_offset %#x: %d bytes do not fit BAR %d of %#x bytes", r.name, r.off, r.n, r.bar, f.BARs[r.bar].Size)
		}
	}
	if c.TableBAR == c.PBABAR && uint64(c.TableOffset) < uint64(c.PBAOffset)+pbaLen && uint64(c.PBAOffset) < uint64(c.TableOffset)+tableLen {
		return 0, fmt.Errorf("msix: table at %#x and PBA at %#x overlap in BAR %d", c.TableOffset, c.PBAOffset, c.TableBAR)
	}
	s := f.Space
	off, err := s.addCap(CapMSIX, 12)
	if err != nil {
		return 0, err
	}
	s.Set16(off+2, uint16(c.Vectors-1))
	s.SetAccess(off+2, 2, 0xC000, RW) // enable, function mask
	s.Set32(off+4, c.TableOffset|uint32(c.TableBAR))
	s.Set32(off+8, c.PBAOffset|uint32(c.PBABAR))
	return off, nil
}

// PortType is the Device/Port Type of the PCI Express capability.
type PortType uint8

// Device/port types (§7.5.3.2).
const (
	PortEndpoint       PortType = 0x0
	PortLegacyEndpoint PortType = 0x1
	PortRootPort       PortType = 0x4
	PortUpstream       PortType = 0x5 // switch upstream port
	PortDownstream     PortType = 0x6 // switch downstream port
	PortRCiEP          PortType = 0x9 // root complex integrated endpoint
)

// PCIeConfig describes a PCI Express capability.
type PCIeConfig struct {
	Type       PortType
	MaxPayload int     // largest MPS supported, 128-4096 bytes
	MaxSpeed   tlp.Gen // highest supported link speed
	MaxWidth   int     // 1, 2, 4, 8, 16 or 32 lanes
	Speed      tlp.Gen // negotiated link speed
	Width      int     // negotiated width
	PortNumber uint8
	Slot       bool // downstream and root ports: a slot is implemented
	// ExtTag10 advertises 10-bit tag completer and requester support.
	ExtTag10 bool
	// AtomicCompleter advertises 32/64-bit AtomicOp and 128-bit CAS completion.
	AtomicCompleter bool
}

// encodeSize maps 128..4096 bytes to the 3-bit MPS/MRRS encoding.
func encodeSize(v int) (uint16, bool) {
	for e := uint16(0); e <= 5; e++ {
		if 128<<e == v {
			return e, true
		}
	}
	return 0, false
}

// AddPCIe adds a PCI Express capability (version 2) and returns its offset.
// Device Control starts at MPS 128 and MRRS 512, as after reset.
func (f *Function) AddPCIe(c PCIeConfig) (int, error) {
	mps, ok := encodeSize(c.MaxPayload)
	if !ok {
		return 0, fmt.Errorf("pcie.max_payload %d: must be a power of two from 128 to 4096", c.MaxPayload)
	}
	if !c.MaxSpeed.Valid() || !c.Speed.Valid() || c.Speed > c.MaxSpeed {
		return 0, fmt.Errorf("pcie.speed Gen%d / max_speed Gen%d: must be 1-5 with speed <= max_speed", c.Speed, c.MaxSpeed)
	}
	okWidth := func(w int) bool { return w == 1 || w == 2 || w == 4 || w == 8 || w == 16 || w == 32 }
	if !okWidth(c.MaxWidth) || !okWidth(c.Width) || c.Width > c.MaxWidth {
		return 0, fmt.Errorf("pcie.width x%d / max_width x%d: must be 1, 2, 4, 8, 16 or 32 with width <= max_width", c.Width, c.MaxWidth)
	}
	isPort := c.Type == PortRootPort || c.Type == PortDownstream
	if c.Slot && !isPort {
		return 0, fmt.Errorf("pcie.slot: only root and downstream ports implement slots")
	}
	s := f.Space
	off, err := s.addCap(CapPCIe, 0x3C)
	if err != nil {
		return 0, err
	}
	capReg := uint16(2) | uint16(c.Type)<<4
	if c.Slot {
		capReg |= 1 << 8
	}
	s.Set16(off+0x02, capReg)
	devCap := uint32(mps) | 1<<5 | 1<<15 // MPS, 8-bit extended tags, role-based error reporting
	if c.Type == PortEndpoint {
		devCap |= 1 << 28 // function level reset
	}
	s.Set32(off+0x04, devCap)
	s.Set16(off+0x08, 0x2810)              // Device Control: relaxed ordering, no snoop, MRRS 512
	s.SetAccess(off+0x08, 2, 0x7FFF, RW)   // error reporting enables, RO, MPS, ext tag, phantom, aux, NS, MRRS
	s.SetAccess(off+0x0A, 2, 0x000F, RW1C) // Device Status: error detected bits
	linkCap := uint32(c.MaxSpeed) | uint32(c.MaxWidth)<<4 | uint32(c.PortNumber)<<24
	if isPort {
		linkCap |= 1<<20 | 1<<21 // data link layer active reporting, bandwidth notification
	}
	s.Set32(off+0x0C, linkCap)
	linkCtlRW := uint32(0x0FC3) // ASPM, common clock, extended synch, clock PM, HW width disable, BW interrupts
	if isPort {
		linkCtlRW |= 0x0030 // link disable, retrain link
	}
	if c.Type == PortEndpoint || c.Type == PortLegacyEndpoint || c.Type == PortUpstream {
		linkCtlRW |= 0x0008 // RCB is set by software to match the root port
	} else if c.Type == PortRootPort {
		s.Set16(off+0x10, 0x0008) // RCB 128 bytes
	}
	s.SetAccess(off+0x10, 2, linkCtlRW, RW)
	linkSta := uint16(c.Speed) | uint16(c.Width)<<4 | 1<<12 // slot clock configuration
	if isPort {
		linkSta |= 1 << 13 // data link layer link active
	}
	s.Set16(off+0x12, linkSta)
	s.SetAccess(off+0x12, 2, 0xC000, RW1C)
	if c.Slot {
		s.Set32(off+0x14, uint32(c.PortNumber)<<19|1<<6) // physical slot number, hot-plug surprise off, power controller absent
		s.SetAccess(off+0x18, 2, 0x1FFF, RW)
		s.SetAccess(off+0x1A, 2, 0x011F, RW1C)
		s.Set16(off+0x1A, 1<<6) // presence detect state
	}
	if c.Type == PortRootPort {
		s.SetAccess(off+0x1C, 2, 0x001F, RW) // root control
		s.SetAccess(off+0x20, 4, 0x00010000, RW1C)
	}
	devCap2 := uint32(0xF) | 1<<4 // all completion timeout ranges, timeout disable
	if c.ExtTag10 {
		devCap2 |= 1<<16 | 1<<17
	}
	if c.AtomicCompleter {
		devCap2 |= 1<<7 | 1<<8 | 1<<9
	}
	if isPort || c.Type == PortUpstream {
		devCap2 |= 1 << 5 // ARI forwarding
	}
	s.Set32(off+0x24, devCap2)
	s.SetAccess(off+0x28, 2, 0x17FF, RW) // Device Control 2
	speeds := uint32(0)
	for g := tlp.Gen1; g <= c.MaxSpeed; g++ {
		speeds |= 1 << g
	}
	s.Set32(off+0x2C, speeds)             // supported link speeds vector
	s.Set16(off+0x30, uint16(c.MaxSpeed)) // target link speed
	s.SetAccess(off+0x30, 2, 0x0FFF, RW)
	return off, nil
}

// AddAER adds an Advanced Error Reporting extended capability (version 2),
// with the root port registers when the function is a root port, ECRC
// generation and checking capable. It returns the offset.
func (f *Function) AddAER(rootPort bool) (int, error) {
	s := f.Space
	off, err := s.addExtCap(ExtCapAER, 2, 0x48)
	if err != nil {
		return 0, err
	}
	const uncorr = 1<<4 | 1<<5 | 1<<12 | 1<<13 | 1<<14 | 1<<15 | 1<<16 | 1<<17 | 1<<18 | 1<<19 | 1<<20 | 1<<21
	const corr = 1<<0 | 1<<6 | 1<<7 | 1<<8 | 1<<12 | 1<<13 | 1<<14 | 1<<15
	s.SetAccess(off+0x04, 4, uncorr, RW1C)
	s.SetAccess(off+0x08, 4, uncorr, RW)
	s.Set32(off+0x0C, 1<<4|1<<5|1<<13|1<<17|1<<18) // fatal by default: DL protocol, surprise down, FC protocol, overflow, malformed
	s.SetAccess(off+0x0C, 4, uncorr, RW)
	s.SetAccess(off+0x10, 4, corr, RW1C)
	s.Set32(off+0x14, 1<<13) // advisory non-fatal masked
	s.SetAccess(off+0x14, 4, corr, RW)
	s.Set32(off+0x18, 1<<5|1<<7) // ECRC generation and check capable
	s.SetAccess(off+0x18, 4, 1<<6|1<<8, RW)
	if rootPort {
		s.SetAccess(off+0x2C, 4, 0x7, RW)
		s.SetAccess(off+0x30, 4, 0x7F, RW1C)
	}
	return off, nil
}

// ACS capability and control bits (§7.7.8).
const (
	ACSSourceValidation    = 1 << 0
	ACSTranslationBlocking = 1 << 1
	ACSRequestRedirect     = 1 << 2
	ACSCompletionRedirect  = 1 << 3
	ACSUpstreamForwarding  = 1 << 4
	ACSEgressControl       = 1 << 5
	ACSDirectTranslated    = 1 << 6
)

// AddACS adds an Access Control Services extended capability advertising
// the given controls and returns its offset.
func (f *Function) AddACS(controls uint16) (int, error) {
	if controls > 0x7F {
		return 0, fmt.Errorf("acs controls %#x: only bits 0-6 are defined", controls)
	}
	s := f.Space
	off, err := s.addExtCap(ExtCapACS, 1, 8)
	if err != nil {
		return 0, err
	}
	s.Set16(off+4, controls)
	s.SetAccess(off+6, 2, uint32(controls), RW)
	return off, nil
}

// AddVSEC adds a Vendor-Specific Extended Capability with the given VSEC ID
// and revision whose body (after the 8 header bytes) is payload, and
// returns its offset.
func (f *Function) AddVSEC(id uint16, rev uint8, payload []byte) (int, error) {
	length := 8 + len(payload)
	if length > 0xFFF {
		return 0, fmt.Errorf("vsec %#04x: %d bytes exceed the 12-bit length field", id, length)
	}
	s := f.Space
	off, err := s.addExtCap(ExtCapVSEC, 1, length)
	if err != nil {
		return 0, err
	}
	s.Set32(off+4, uint32(id)|uint32(rev&15)<<16|uint32(length)<<20)
	copy(s.b[off+8:], payload)
	return off, nil
}

// MSIXTable returns where f's MSI-X vector table is, as its capability
// says: the BAR and the byte range [off, end) in it (16 bytes per
// vector); bar is -1 when f has no MSI-X capability.
func (f *Function) MSIXTable() (bar int, off, end uint64) {
	c := f.CapOffset(CapMSIX, false)
	if c == 0 {
		return -1, 0, 0
	}
	n := uint64(f.Space.Read16(c+2)&0x7FF) + 1
	tbl := f.Space.Read32(c + 4)
	return int(tbl & 7), uint64(tbl &^ 7), uint64(tbl&^7) + 16*n
}

// MSIXControl returns the MSI-X Enable and Function Mask bits of f's MSI-X
// Message Control register (PCIe Base §7.7.2.2): a function may send MSI-X
// messages only while enabled, and none while the function is masked; a
// vector that fires then is left pending (§6.1.4.5). Both are false for a
// function without an MSI-X capability.
func (f *Function) MSIXControl() (enable, mask bool) {
	c := f.CapOffset(CapMSIX, false)
	if c == 0 {
		return false, false
	}
	mc := f.Space.Read16(c + 2)
	return mc&0x8000 != 0, mc&0x4000 != 0
}

// BusMaster says whether f's Command register lets it issue memory
// requests (Bus Master Enable, PCIe Base §7.5.1.1.3): an MSI-X message is
// one.
func (f *Function) BusMaster() bool { return f.Space.Read16(0x04)&0x4 != 0 }

// DeviceSizes are the sizes a function's PCI Express capability says it
// uses (PCIe Base §7.5.3.4 Device Control; §7.5.3.7 Link Control):
// the Max_Payload_Size its TLPs and completions stay within, the
// Max_Read_Request_Size its reads stay within, and the Read Completion
// Boundary its completions of a read may be split at.
type DeviceSizes struct {
	MPS, MRRS, RCB int
}

// Sizes returns what f's Device Control and Link Control registers say;
// ok is false for a function without a PCI Express capability.
func (f *Function) Sizes() (s DeviceSizes, ok bool) {
	off := f.capOffset(CapPCIe, false)
	if off == 0 {
		return DeviceSizes{}, false
	}
	ctl := f.Space.Read16(off + 8)
	s.MPS, s.MRRS = 128<<(ctl>>5&7), 128<<(ctl>>12&7)
	s.RCB = 64
	if f.Space.Read16(off+0x10)&0x8 != 0 {
		s.RCB = 128
	}
	return s, true
}

// SetSizes programs f's Device Control MPS and MRRS and Link Control's
// RCB bit through configuration writes, as system software does after
// enumeration. MPS must be a power of two from 128 to what the function
// supports (Device Capabilities), MRRS a power of two from 128 to 4096,
// RCB 64 or 128.
func (f *Function) SetSizes(s DeviceSizes) error {
	off := f.capOffset(CapPCIe, false)
	if off == 0 {
		return fmt.Errorf("%s: no PCI Express capability", f.Name)
	}
	mps, ok := encodeSize(s.MPS)
	if most := 128 << (f.Space.Read32(off+4) & 7); !ok || s.MPS > most {
		return fmt.Errorf("%s: MPS %d: must be a power of two from 128 to %d, the most it supports (PCIe Base §7.5.3.3)", f.Name, s.MPS, most)
	}
	mrrs, ok := encodeSize(s.MRRS)
	if !ok {
		return fmt.Errorf("%s: MRRS %d: must be a power of two from 128 to 4096", f.Name, s.MRRS)
	}
	if s.RCB != 64 && s.RCB != 128 {
		return fmt.Errorf("%s: RCB %d: must be 64 or 128", f.Name, s.RCB)
	}
	ctl := uint32(f.Space.Read16(off + 8))
	f.Space.Write(off+8, 2, ctl&^0x70E0|uint32(mps)<<5|uint32(mrrs)<<12)
	lc := f.Space.Read16(off + 0x10)
	if s.RCB == 128 {
		lc |= 0x8
	} else {
		lc &^= 0x8
	}
	if PortType(f.Space.Read16(off+2)>>4&0xF) == PortRootPort {
		// A root port's RCB is read-only: the root complex's own, which
		// is what is being set.
		f.Space.Set16(off+0x10, lc)
	} else {
		f.Space.Write(off+0x10, 2, uint32(lc))
	}
	return nil
}
