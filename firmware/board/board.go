// Package board holds what an O-NIC's board is to the rest of onic: the
// FPGA parts onic knows by name, the reference part, and the reflash
// costs of a board (its configuration ports and the PCIe and optical
// times around a full reconfiguration). It is below both the firmware
// package (images, the loader, the cost model) and the scenario schema,
// which names a part and a board without importing either.
package board

import (
	"fmt"
	"strings"
	"time"

	"onic/internal/fpgapart"
)

// DefaultPart is the O-NIC's reference FPGA: an UltraScale+ part with
// PCIe Gen3 x16 hard blocks, as on the VCU118 board. Scenarios, specs and
// onic hdl gen use it when no part is named.
const DefaultPart = "xcvu9p-flga2104-2L-e"

// Devices are the FPGA devices onic knows (firmware.Parts has their
// resources and bitstream sizes; a test holds the two lists equal).
var Devices = []string{"xcvu9p", "xcku15p", "xcau25p"}

// CheckPart checks a full part name (xcvu9p-flga2104-2L-e): its form, and
// that onic knows its device.
func CheckPart(part string) error {
	if err := fpgapart.Check(part); err != nil {
		return err
	}
	dev, _, _ := strings.Cut(strings.ToLower(part), "-")
	for _, d := range Devices {
		if d == dev {
			return nil
		}
	}
	return fmt.Errorf("%q: unknown device %q (known: %s)", part, dev, strings.Join(Devices, ", "))
}

// Board is what a reflash costs on one board: its configuration ports
// and the PCIe and optical times around a full reconfiguration. Zero
// fields take the defaults of DefaultBoard for the part (docs/firmware.md
// has the sources).
type Board struct {
	// ConfigMBps is the full-configuration port (SelectMAP from the
	// board's flash: 500 MB/s).
	ConfigMBps float64 `mapstructure:"config_mbps" json:"config_mbps"`
	// ICAPMBps is the partial-reconfiguration port (ICAP/MCAP at 200 MHz
	// x 32 bits = 800 MB/s; 500 on multi-die parts).
	ICAPMBps float64 `mapstructure:"icap_mbps" json:"icap_mbps"`
	// LinkDown is the host PCIe link down and retraining after a full
	// reconfiguration (100 ms: the time PCIe allows a device to answer
	// after reset).
	LinkDown time.Duration `mapstructure:"link_down" json:"link_down"`
	// Rescan is the host re-enumerating the O-NIC (1 s: how long Linux
	// waits for a device after a reset).
	Rescan time.Duration `mapstructure:"rescan" json:"rescan"`
	// OpticalBringUp is the optical ports retraining after a full
	// reconfiguration (1 ms, the emulator's MEMS bring-up default: an
	// assumption, no public O-NIC figure exists).
	OpticalBringUp time.Duration `mapstructure:"optical_bring_up" json:"optical_bring_up"`
}

// Board defaults (REFERENCE: AMD UG909, PG213; PCIe and Linux reset
// timing).
const (
	DefaultConfigMBps       = 500
	DefaultICAPMBps         = 800
	DefaultICAPMBpsMultiDie = 500
	DefaultLinkDown         = 100 * time.Millisecond
	DefaultRescan           = time.Second
	DefaultOpticalBringUp   = time.Millisecond
)

// WithDefaults fills b's zero fields with the defaults for a part of
// dies super logic regions (multi-die parts run ICAP slower).
func (b Board) WithDefaults(dies int) Board {
	if b.ConfigMBps == 0 {
		b.ConfigMBps = DefaultConfigMBps
	}
	if b.ICAPMBps == 0 {
		b.ICAPMBps = DefaultICAPMBps
		if dies > 1 {
			b.ICAPMBps = DefaultICAPMBpsMultiDie
		}
	}
	if b.LinkDown == 0 {
		b.LinkDown = DefaultLinkDown
	}
	if b.Rescan == 0 {
		b.Rescan = DefaultRescan
	}
	if b.OpticalBringUp == 0 {
		b.OpticalBringUp = DefaultOpticalBringUp
	}
	return b
}

// Board limits: a rate 0 means the default; any other must lie in
// [MinMBps, MaxMBps] (below it a reflash would take days; a JTAG cable
// is some 4 MB/s), and a delay in [0, MaxBoardDelay].
const (
	MinMBps       = 0.1
	MaxMBps       = 1e7 // far above any real port: a scenario may shorten reflashes
	MaxBoardDelay = time.Hour
)

// Check names the first bad field.
func (b Board) Check() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"config_mbps", b.ConfigMBps}, {"icap_mbps", b.ICAPMBps}} {
		if r.v != 0 && !(r.v >= MinMBps && r.v <= MaxMBps) {
			return fmt.Errorf("%s %g: must be %g to %g MB/s (or left out for the default)", r.name, r.v, float64(MinMBps), float64(MaxMBps))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"link_down", b.LinkDown}, {"rescan", b.Rescan}, {"optical_bring_up", b.OpticalBringUp}} {
		if d.v < 0 || d.v > MaxBoardDelay {
			return fmt.Errorf("%s %v: must be 0 to %v", d.name, d.v, MaxBoardDelay)
		}
	}
	return nil
}
