package pcie

import (
	"encoding/binary"
	"fmt"

	"onic/tlp"
)

// Identity of the emulated O-NIC. 0x0ACE is not assigned in the PCI ID
// database; a real board uses its own vendor's ID. Both are configurable.
const (
	ONICVendorID = 0x0ACE
	ONICDeviceID = 0x0001
	ONICVSECID   = 0x0001 // the O-NIC description capability
	ONICVSECRev  = 1
)

// Layout of the O-NIC's register BAR (BAR0, 64 KiB): the PCIe manager's
// registers from 0, kernel task shells from 0x1000 (package kernels), the
// MSI-X table and its pending-bit array, and the card's counters.
const (
	ONICRegBAR          = 0
	ONICWindowBAR       = 2
	ONICLUTBAR          = 4
	ONICMSIXTableOffset = 0x8000
	ONICMSIXPBAOffset   = 0xC000
	ONICMSIXVectors     = 64
	// ONICMSIXLinkVector is the MSI-X vector of optical port A's link
	// changes (up or down), port B's the next; vectors below it are the
	// kernel slots' task ends, one a slot.
	ONICMSIXLinkVector = 16
	// ONICCountersOffset is where the card's counters are, 4 bytes each,
	// up to ONICCountersEnd (docs/hdl.md, "The card's counters in the
	// register BAR").
	ONICCountersOffset = 0xD000
	ONICCountersEnd    = 0xE000
)

// ONICInfo is what an O-NIC tells software about itself through its
// vendor-specific extended capability (layout in docs/pcie.md).
type ONICInfo struct {
	Ports         uint8   // optical ports (2 on a FLEET O-NIC)
	Wavelengths   uint8   // wavelengths per port, one per lane (16)
	PortGen       tlp.Gen // PCIe-equivalent generation carried per port
	KernelSlots   uint8   // reconfigurable kernel regions
	DirectWindows uint8   // direct translation windows
	LUTEntries    uint16  // LUT window entries
	LUTEntryKiB   uint16  // size of one LUT entry in KiB
	RIDEntries    uint16  // requester-ID translation table entries
	WindowBAR     uint8   // BAR holding the direct windows
	LUTBAR        uint8   // BAR holding the LUT window
	RegisterBAR   uint8   // BAR holding registers and MSI-X
}

// Encode returns the VSEC body (after the 8-byte header).
func (i ONICInfo) Encode() []byte {
	b := make([]byte, 16)
	b[0] = 1 // layout version
	b[1] = i.Ports
	b[2] = i.Wavelengths
	b[3] = uint8(i.PortGen)
	b[4] = i.KernelSlots
	b[5] = i.DirectWindows
	binary.LittleEndian.PutUint16(b[6:], i.LUTEntries)
	binary.LittleEndian.PutUint16(b[8:], i.LUTEntryKiB)
	binary.LittleEndian.PutUint16(b[10:], i.RIDEntries)
	b[12] = i.RegisterBAR
	b[13] = i.WindowBAR
	b[14] = i.LUTBAR
	return b
}

// DecodeONICInfo reads a VSEC body written by Encode.
func DecodeONICInfo(b []byte) (ONICInfo, error) {
	if len(b) < 16 || b[0] != 1 {
		return ONICInfo{}, fmt.Errorf("O-NIC VSEC: want a version-1 body of 16 bytes")
	}
	return ONICInfo{
		Ports: b[1], Wavelengths: b[2], PortGen: tlp.Gen(b[3]), KernelSlots: b[4], DirectWindows: b[5],
		LUTEntries:  binary.LittleEndian.Uint16(b[6:]),
		LUTEntryKiB: binary.LittleEndian.Uint16(b[8:]),
		RIDEntries:  binary.LittleEndian.Uint16(b[10:]),
		RegisterBAR: b[12], WindowBAR: b[13], LUTBAR: b[14],
	}, nil
}

// DefaultONICWindowBytes is the size of an O-NIC's direct-window BAR
// (BAR2) in the default topology.
const DefaultONICWindowBytes = 16 << 30

// DefaultONICInfo is the default O-NIC: two optical ports of 16 wavelengths
// carrying Gen3 x16 (FLEET Phase 1), four kernel slots, and translation
// resources sized like a Microchip Switchtec NTB: 6 direct windows, a LUT
// of 512 entries of 64 KiB and 512 requester-ID entries (shared/REFERENCE.md).
var DefaultONICInfo = ONICInfo{
	Ports: 2, Wavelengths: 16, PortGen: tlp.Gen3, KernelSlots: 4,
	DirectWindows: 6, LUTEntries: 512, LUTEntryKiB: 64, RIDEntries: 512,
	RegisterBAR: 0, WindowBAR: 2, LUTBAR: 4,
}

// NewONIC builds the host-facing function of an O-NIC: a Gen3 x16
// endpoint (network controller, other) with three 64-bit BARs — registers
// and MSI-X (BAR0, 64 KiB), the direct translation windows (BAR2,
// prefetchable, windowBytes) and the LUT window (BAR4, prefetchable, entries
// × entry size) — and PM, MSI, MSI-X, PCI Express, AER, ACS and the O-NIC
// description capability.
func NewONIC(name string, info ONICInfo, windowBytes uint64) (*Function, error) {
	lutBytes := uint64(info.LUTEntries) * uint64(info.LUTEntryKiB) * 1024
	f, err := NewEndpoint(Config{
		Name: name, VendorID: ONICVendorID, DeviceID: ONICDeviceID, Revision: 1,
		Class: 0x028000, SubsystemVendorID: ONICVendorID, SubsystemID: ONICDeviceID,
		InterruptPin: 1,
		BARs: [6]BAR{
			ONICRegBAR:    {Kind: BARMem64, Size: 64 << 10},
			ONICWindowBAR: {Kind: BARMem64, Prefetchable: true, Size: windowBytes},
			ONICLUTBAR:    {Kind: BARMem64, Prefetchable: true, Size: lutBytes},
		},
	})
	if err != nil {
		return nil, err
	}
	steps := []func() (int, error){
		f.AddPM,
		func() (int, error) { return f.AddMSI(MSIConfig{Vectors: 32, Addr64: true, PerVectorMasking: true}) },
		func() (int, error) {
			return f.AddMSIX(MSIXConfig{Vectors: ONICMSIXVectors, TableBAR: ONICRegBAR, TableOffset: ONICMSIXTableOffset, PBABAR: ONICRegBAR, PBAOffset: ONICMSIXPBAOffset})
		},
		func() (int, error) {
			// No 10-bit tags (Device Capabilities 2 bits 16 and 17 clear):
			// the card's PCIe block, AMD's UltraScale+ integrated block,
			// carries 8-bit tags in its CQ and RQ descriptors (PG213,
			// "Extended Tag Field": 256 tags), and a Gen3 function need
			// not complete 10-bit tags (PCIe Base §2.2.6.2: only 16 GT/s
			// and faster must), so its hosts give it 8-bit tags.
			return f.AddPCIe(PCIeConfig{Type: PortEndpoint, MaxPayload: 1024, MaxSpeed: tlp.Gen3, MaxWidth: 16,
				Speed: tlp.Gen3, Width: 16, AtomicCompleter: true})
		},
		func() (int, error) { return f.AddAER(false) },
		func() (int, error) {
			return f.AddACS(ACSSourceValidation | ACSRequestRedirect | ACSCompletionRedirect | ACSUpstreamForwarding | ACSEgressControl)
		},
		func() (int, error) { return f.AddVSEC(ONICVSECID, ONICVSECRev, info.Encode()) },
	}
	for _, step := range steps {
		if _, err := step(); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
	}
	return f, nil
}

// NewSwitchPort builds a switch port (upstream or downstream) or root port
// as a type 1 function with PM, MSI, PCI Express, AER and (for downstream
// and root ports) ACS.
func NewSwitchPort(name string, t PortType, port uint8, gen tlp.Gen, width int) (*Function, error) {
	f, err := NewBridge(Config{Name: name, VendorID: ONICVendorID, DeviceID: 0x0100 + uint16(t), Class: 0x060400})
	if err != nil {
		return nil, err
	}
	down := t == PortDownstream || t == PortRootPort
	steps := []func() (int, error){
		f.AddPM,
		func() (int, error) { return f.AddMSI(MSIConfig{Vectors: 1, Addr64: true}) },
		func() (int, error) {
			return f.AddPCIe(PCIeConfig{Type: t, MaxPayload: 512, MaxSpeed: gen, MaxWidth: width, Speed: gen, Width: width,
				PortNumber: port, Slot: down, ExtTag10: true})
		},
		func() (int, error) { return f.AddAER(t == PortRootPort) },
	}
	if down {
		steps = append(steps, func() (int, error) {
			return f.AddACS(ACSSourceValidation | ACSTranslationBlocking | ACSRequestRedirect | ACSCompletionRedirect | ACSUpstreamForwarding)
		})
	}
	for _, step := range steps {
		if _, err := step(); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
	}
	return f, nil
}
