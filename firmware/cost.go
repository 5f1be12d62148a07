package firmware

import (
	"onic/internal/fpgapart"

	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Part is an FPGA device the firmware can target: its resources, the
// size of its full configuration bitstream and its configuration ports.
// The figures are AMD's (product tables; UG570 and UG909 for bitstream
// sizes and ports), collected in docs/firmware.md.
type Part struct {
	Device    string // xcvu9p: a part name starts with it
	Family    string
	Resources Resources
	// FullBits is the full (uncompressed) bitstream length in bits.
	FullBits int64
	// Dies is the count of super logic regions: multi-die parts run ICAP
	// at 125 MHz, not 200 (UG909).
	Dies int
}

// FrameBytes is one configuration frame: 123 32-bit words on UltraScale+
// (UG570).
const FrameBytes = 123 * 4

// Frames is the count of configuration frames in a full bitstream.
func (p Part) Frames() int64 { return (p.FullBits/8 + FrameBytes - 1) / FrameBytes }

// FullBytes is the full bitstream's size in bytes.
func (p Part) FullBytes() int64 { return (p.FullBits + 7) / 8 }

// Parts are the devices onic knows, by device name.
var Parts = []Part{
	{Device: "xcvu9p", Family: "virtex-ultrascale+", Resources: Resources{LUT: 1182240, FF: 2364480, BRAM: 2160, DSP: 6840}, FullBits: 611_600_000, Dies: 3},
	{Device: "xcku15p", Family: "kintex-ultrascale+", Resources: Resources{LUT: 522720, FF: 1045440, BRAM: 984, DSP: 1968}, FullBits: 277_300_000, Dies: 1},
	{Device: "xcau25p", Family: "artix-ultrascale+", Resources: Resources{LUT: 141000, FF: 282000, BRAM: 300, DSP: 1200}, FullBits: 117_700_000, Dies: 1},
}

// DefaultPart is the O-NIC's reference FPGA: an UltraScale+ part with
// PCIe Gen3 x16 hard blocks, as on the VCU118 board. Scenarios, specs and
// onic hdl gen use it when no part is named.
const DefaultPart = "xcvu9p-flga2104-2L-e"

// LookupPart finds the device of a full part name (xcvu9p-flga2104-2L-e).
func LookupPart(part string) (Part, error) {
	if err := fpgapart.Check(part); err != nil {
		return Part{}, err
	}
	dev, _, _ := strings.Cut(strings.ToLower(part), "-")
	for _, p := range Parts {
		if p.Device == dev {
			return p, nil
		}
	}
	var known []string
	for _, p := range Parts {
		known = append(known, p.Device)
	}
	return Part{}, fmt.Errorf("%q: unknown device %q (known: %s)", part, dev, strings.Join(known, ", "))
}

// RegionBytes estimates the partial bitstream of a region: the region's
// share of the device (the largest of its shares of LUTs, flip-flops,
// block RAMs and DSPs: a pblock spans whole columns of every kind) of the
// device's configuration frames, rounded up to whole frames. It is the
// size of an uncompressed partial bitstream, what Vivado writes by
// default; compressed ones of sparse designs are smaller.
func (p Part) RegionBytes(r Resources) int64 {
	share := 0.0
	for _, f := range [][2]int{{r.LUT, p.Resources.LUT}, {r.FF, p.Resources.FF}, {r.BRAM, p.Resources.BRAM}, {r.DSP, p.Resources.DSP}} {
		if f[1] > 0 {
			share = max(share, float64(f[0])/float64(f[1]))
		}
	}
	share = min(share, 1)
	return int64(math.Ceil(share*float64(p.Frames()))) * FrameBytes
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

// WithDefaults fills b's zero fields with the defaults for part p.
func (b Board) WithDefaults(p Part) Board {
	if b.ConfigMBps == 0 {
		b.ConfigMBps = DefaultConfigMBps
	}
	if b.ICAPMBps == 0 {
		b.ICAPMBps = DefaultICAPMBps
		if p.Dies > 1 {
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

// Cost is what one reconfiguration costs.
type Cost struct {
	Kind  string `json:"kind"`  // full or partial
	Slot  int    `json:"slot"`  // partial: the slot; full: -1
	Bytes int64  `json:"bytes"` // bitstream bytes written
	// Estimated is true when Bytes is the region estimate, not an
	// attached bitstream.
	Estimated bool          `json:"estimated"`
	Load      time.Duration `json:"load_ns"` // Bytes over the port
	// LinkDown, Rescan and Optical are a full reconfiguration's (0 for a
	// partial one: the host link stays up).
	LinkDown time.Duration `json:"link_down_ns"`
	Rescan   time.Duration `json:"rescan_ns"`
	Optical  time.Duration `json:"optical_ns"`
	// Total is the time the O-NIC (full) or the slot (partial) is out.
	Total time.Duration `json:"total_ns"`
}

// transfer is the time to write n bytes at mbps megabytes a second.
func transfer(n int64, mbps float64) time.Duration {
	return time.Duration(math.Ceil(float64(n) / mbps * 1e3)) // bytes / (MB/s) = µs; *1e3 = ns
}

// FullCost is a full reconfiguration with a bitstream of n bytes: the
// load over the configuration port, then the host link down and
// retrained, the host's rescan, and the optical ports brought up.
func (b Board) FullCost(n int64, estimated bool) Cost {
	c := Cost{Kind: "full", Slot: -1, Bytes: n, Estimated: estimated, Load: transfer(n, b.ConfigMBps),
		LinkDown: b.LinkDown, Rescan: b.Rescan, Optical: b.OpticalBringUp}
	c.Total = c.Load + c.LinkDown + c.Rescan + c.Optical
	return c
}

// PartialCost is a partial reconfiguration of a slot with n bytes over
// ICAP: only the slot is out, for the load.
func (b Board) PartialCost(slot int, n int64, estimated bool) Cost {
	c := Cost{Kind: "partial", Slot: slot, Bytes: n, Estimated: estimated, Load: transfer(n, b.ICAPMBps)}
	c.Total = c.Load
	return c
}

// CostTable is what deploying an image costs on a board: the full
// reconfiguration and each slot's kernel by partial reconfiguration.
// Planners that place tasks across O-NICs read it as JSON.
type CostTable struct {
	Image   string       `json:"image"`
	Version string       `json:"version"`
	Part    string       `json:"part"`
	Board   Board        `json:"board"`
	Full    *Cost        `json:"full,omitempty"` // an image's (not a kernel image's)
	Kernels []KernelCost `json:"kernels"`
}

// KernelCost is one slot's kernel and its partial reconfiguration.
type KernelCost struct {
	Kernel string `json:"kernel"` // empty: the empty slot
	Cost   Cost   `json:"cost"`
}

// CostTableOf prices an image on board b (zero fields: defaults).
func CostTableOf(im *Image, b Board) (CostTable, error) {
	if err := b.Check(); err != nil {
		return CostTable{}, fmt.Errorf("board: %v", err)
	}
	m := &im.Manifest
	p, err := LookupPart(m.Part)
	if err != nil {
		return CostTable{}, err
	}
	b = b.WithDefaults(p)
	t := CostTable{Image: m.Name, Version: m.Version, Part: m.Part, Board: b}
	if m.Kind == KindImage {
		c := b.FullCost(m.FullBytes, m.FullEstimated)
		t.Full = &c
	}
	for _, s := range m.Slots {
		t.Kernels = append(t.Kernels, KernelCost{Kernel: s.Kernel, Cost: b.PartialCost(s.Slot, s.Bytes, s.Estimated)})
	}
	return t, nil
}

// WriteText writes the table for people.
func (t CostTable) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s %s on %s (configuration port %g MB/s, ICAP %g MB/s)\n", t.Image, t.Version, t.Part, t.Board.ConfigMBps, t.Board.ICAPMBps)
	if t.Full != nil {
		c := t.Full
		fmt.Fprintf(w, "full reflash   %12d bytes  %v load + %v link down + %v rescan + %v optical = %v\n",
			c.Bytes, c.Load, c.LinkDown, c.Rescan, c.Optical, c.Total)
	}
	for _, k := range t.Kernels {
		name := k.Kernel
		if name == "" {
			name = "(empty)"
		}
		fmt.Fprintf(w, "slot %d %-16s %12d bytes  %v (partial; the host link stays up)\n", k.Cost.Slot, name, k.Cost.Bytes, k.Cost.Total)
	}
}
