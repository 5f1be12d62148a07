package firmware

import (
	"onic/firmware/board"

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

// DefaultPart is the O-NIC's reference FPGA (board.DefaultPart).
const DefaultPart = board.DefaultPart

// LookupPart finds the device of a full part name (xcvu9p-flga2104-2L-e).
func LookupPart(part string) (Part, error) {
	if err := board.CheckPart(part); err != nil {
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

// Board is what a reflash costs on one board (package firmware/board,
// below the scenario schema, which names a board without importing the
// firmware package).
type Board = board.Board

// Board defaults and limits (firmware/board).
const (
	DefaultConfigMBps       = board.DefaultConfigMBps
	DefaultICAPMBps         = board.DefaultICAPMBps
	DefaultICAPMBpsMultiDie = board.DefaultICAPMBpsMultiDie
	DefaultLinkDown         = board.DefaultLinkDown
	DefaultRescan           = board.DefaultRescan
	DefaultOpticalBringUp   = board.DefaultOpticalBringUp
	MinMBps                 = board.MinMBps
	MaxMBps                 = board.MaxMBps
	MaxBoardDelay           = board.MaxBoardDelay
)

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

// FullCost is a full reconfiguration on board b with a bitstream of n bytes: the
// load over the configuration port, then the host link down and
// retrained, the host's rescan, and the optical ports brought up.
func FullCost(b Board, n int64, estimated bool) Cost {
	c := Cost{Kind: "full", Slot: -1, Bytes: n, Estimated: estimated, Load: transfer(n, b.ConfigMBps),
		LinkDown: b.LinkDown, Rescan: b.Rescan, Optical: b.OpticalBringUp}
	c.Total = c.Load + c.LinkDown + c.Rescan + c.Optical
	return c
}

// PartialCost is a partial reconfiguration on board b of a slot with n
// bytes over ICAP: only the slot is out, for the load.
func PartialCost(b Board, slot int, n int64, estimated bool) Cost {
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
	b = b.WithDefaults(p.Dies)
	t := CostTable{Image: m.Name, Version: m.Version, Part: m.Part, Board: b}
	if m.Kind == KindImage {
		c := FullCost(b, m.FullBytes, m.FullEstimated)
		t.Full = &c
	}
	for _, s := range m.Slots {
		t.Kernels = append(t.Kernels, KernelCost{Kernel: s.Kernel, Cost: PartialCost(b, s.Slot, s.Bytes, s.Estimated)})
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
