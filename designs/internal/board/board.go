// Package board holds the boards onic generates a top for: each preset's
// part, PCIe block and pins, and the transceiver cages its two optical
// ports use, as the boards' public documentation gives them; and the
// board top itself (Top): the PCIe reference-clock buffer and reset, the
// PCIe IP, onic_top, and a GTY wrapper (designs/internal/gty) and
// transceiver IP per port, with the board's XDC.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package board

import (
	"fmt"
	"slices"
	"strings"

	"onic/pcie/lanes"
)

// Board is one board preset.
type Board struct {
	// Name is what --board takes (u55c).
	Name string
	// Title is the board's name as its vendor writes it.
	Title string
	// Part is the FPGA on it.
	Part string
	// MaxLaneGbps is the GTY's highest line rate in the part's speed
	// grade (AMD DS923: 28.21 Gb/s in -2 and -2L).
	MaxLaneGbps float64
	// PCIe is the edge connector's link and the block that serves it.
	PCIe PCIe
	// Cages are the transceiver cages the optical ports use: Cages[0]
	// port A, Cages[1] port B.
	Cages [2]Cage
	// Sources says what was taken from which document.
	Sources []string
}

// PCIe is a board's PCIe edge connector and the integrated block behind
// it.
type PCIe struct {
	// IP is the Vivado IP of the block: pcie4_uscale_plus (PG213), or
	// pcie4c_uscale_plus on the HBM parts (PCIE4C; PG213 too).
	IP string
	// Lanes and Gen are the link the card trains to (the O-NIC is Gen3
	// x16 whatever the board can do more).
	Lanes, Gen int
	// Block is the integrated block's site (PCIE4C_X1Y0), or "" to leave
	// the IP's default for the part.
	Block string
	// Quad is the GT quad of lane 0 (GTY_Quad_227), or "" for the IP's
	// default.
	Quad string
	// RefclkP and RefclkN are the 100 MHz reference clock's package pins.
	RefclkP, RefclkN string
	// Perst is PERST#'s pin, PerstIO its I/O standard, PerstPullup
	// whether the board wants the FPGA's pull-up on it.
	Perst, PerstIO string
	PerstPullup    bool
	// ExtConfigBase is the first byte of the user extended configuration
	// space the block hands to the card (PG213, "Configuration Extend
	// Interface": 0x480 on PCIE4, 0xE80 on PCIE4C).
	ExtConfigBase int
}

// Cage is a transceiver cage an optical port uses.
type Cage struct {
	// Name is the board's name for it (QSFP0).
	Name string
	// Quad is its GTY quad (Quad 231), for the reader.
	Quad string
	// Channels are its GTY channel sites, lane 0 first.
	Channels []string
	// RefclkP and RefclkN are the pins of the reference clock the
	// preset uses, at RefclkMHz.
	RefclkP, RefclkN string
	RefclkMHz        float64
	// MaxLaneGbps is the cage's rated lane rate (QSFP28: 25.78125 Gb/s
	// and a little more for 28 Gb/s modules; the part's limit applies
	// too).
	MaxLaneGbps float64
	// Sideband are the module's control pins the FPGA drives, if the
	// board wires them to it: ResetL and LPMode (held at 1 and 0), and
	// their I/O standard. Empty: a board controller owns them.
	ResetL, LPMode, SidebandIO string
}

// Presets are the boards onic knows, by name.
var Presets = []Board{
	{
		Name: "u55c", Title: "AMD Alveo U55C", Part: "xcu55c-fsvh2892-2L-e", MaxLaneGbps: 28.21,
		PCIe: PCIe{IP: "pcie4c_uscale_plus", Lanes: 16, Gen: 3, Block: "PCIE4C_X1Y0", Quad: "GTY_Quad_227",
			RefclkP: "AR15", RefclkN: "AR14", Perst: "BF41", PerstIO: "LVCMOS18", ExtConfigBase: 0xE80},
		Cages: [2]Cage{
			{Name: "QSFP0", Quad: "Quad 130", Channels: []string{"X0Y24", "X0Y25", "X0Y26", "X0Y27"},
				RefclkP: "AD42", RefclkN: "AD43", RefclkMHz: 161.1328125, MaxLaneGbps: 28},
			{Name: "QSFP1", Quad: "Quad 131", Channels: []string{"X0Y28", "X0Y29", "X0Y30", "X0Y31"},
				RefclkP: "AB42", RefclkN: "AB43", RefclkMHz: 161.1328125, MaxLaneGbps: 28},
		},
		Sources: []string{
			"part, PCIe Gen3 x16 edge, two QSFP28 cages: AMD UG1469 (Alveo U55C Data Center Accelerator Card User Guide)",
			"PCIe reference clock AR15/AR14 and PERST# BF41 (LVCMOS18), QSFP0 on GTY X0Y24-27 with its 161.1328125 MHz clock on AD42/AD43, QSFP1 on X0Y28-31 with AB42/AB43: as AMD's OpenNIC shell constrains the U55C (constr/au55c/pins.xdc, cmac_usplus_*_au55c.tcl)",
			"PCIE4C block PCIE4C_X1Y0 beside GTY quad 227: public QDMA configurations for this package; the QSFP modules' control pins go to the card's satellite controller, not the FPGA (UG1469)",
			"PCIE4C hands the user extended configuration space at 0xE80-0xFFF (PG213, Configuration Extend Interface)",
		},
	},
	{
		Name: "u250", Title: "AMD Alveo U250", Part: "xcu250-figd2104-2L-e", MaxLaneGbps: 28.21,
		PCIe: PCIe{IP: "pcie4_uscale_plus", Lanes: 16, Gen: 3, Quad: "GTY_Quad_227",
			RefclkP: "AM11", RefclkN: "AM10", Perst: "BD21", PerstIO: "LVCMOS12", PerstPullup: true, ExtConfigBase: 0x480},
		Cages: [2]Cage{
			{Name: "QSFP0", Quad: "Quad 231", Channels: []string{"X1Y44", "X1Y45", "X1Y46", "X1Y47"},
				RefclkP: "M11", RefclkN: "M10", RefclkMHz: 156.25, MaxLaneGbps: 28,
				ResetL: "BE17", LPMode: "BD18", SidebandIO: "LVCMOS12"},
			{Name: "QSFP1", Quad: "Quad 230", Channels: []string{"X1Y40", "X1Y41", "X1Y42", "X1Y43"},
				RefclkP: "T11", RefclkN: "T10", RefclkMHz: 156.25, MaxLaneGbps: 28,
				ResetL: "BC18", LPMode: "AV22", SidebandIO: "LVCMOS12"},
		},
		Sources: []string{
			"part, PCIe Gen3 x16 edge, two QSFP28 cages: AMD UG1289 (Alveo U200 and U250 Data Center Accelerator Cards User Guide)",
			"PCIe lanes on GTY X1Y16-31 (quads 224-227, lane 0 in 227), reference clock AM11/AM10 (MGTREFCLK0 of quad 226), PERST# BD21 (LVCMOS12, pulled up): as Corundum constrains the U250 (fpga/mqnic/AU250/fpga_100g/fpga.xdc)",
			"QSFP0 on quad 231 (X1Y44-47), QSFP1 on quad 230 (X1Y40-43), each with its 156.25 MHz MGTREFCLK0 (M11/M10, T11/T10) as AMD's OpenNIC shell uses it (constr/au250/pins.xdc, cmac_usplus_*_au250.tcl); RESETL and LPMODE pins from Corundum's XDC",
			"the PCIe block's site is left to the IP's default for the part",
		},
	},
	{
		Name: "vcu118", Title: "AMD VCU118 evaluation kit", Part: "xcvu9p-flga2104-2L-e", MaxLaneGbps: 28.21,
		PCIe: PCIe{IP: "pcie4_uscale_plus", Lanes: 16, Gen: 3, Block: "PCIE40E4_X1Y2", Quad: "GTY_Quad_227",
			RefclkP: "AC9", RefclkN: "AC8", Perst: "AM17", PerstIO: "LVCMOS18", PerstPullup: true, ExtConfigBase: 0x480},
		Cages: [2]Cage{
			{Name: "QSFP1", Quad: "Quad 231", Channels: []string{"X1Y48", "X1Y49", "X1Y50", "X1Y51"},
				RefclkP: "W9", RefclkN: "W8", RefclkMHz: 156.25, MaxLaneGbps: 28,
				ResetL: "BA22", LPMode: "AN21", SidebandIO: "LVCMOS18"},
			{Name: "QSFP2", Quad: "Quad 232", Channels: []string{"X1Y52", "X1Y53", "X1Y54", "X1Y55"},
				RefclkP: "R9", RefclkN: "R8", RefclkMHz: 156.25, MaxLaneGbps: 28,
				ResetL: "AY22", LPMode: "AT24", SidebandIO: "LVCMOS18"},
		},
		Sources: []string{
			"part, PCIe Gen3 x16 edge, QSFP28 cages QSFP1 and QSFP2: AMD UG1224 (VCU118 Evaluation Board User Guide)",
			"PCIe lanes on GTY X1Y20-35 (lane 0 in quad 227), reference clock AC9/AC8 (MGTREFCLK0 of quad 227), PERST# AM17 (LVCMOS18, pulled up), QSFP1 on quad 231 (X1Y48-51) with its 156.25 MHz clock on W9/W8, QSFP2 on quad 232 (X1Y52-55) with R9/R8, and the modules' RESETL and LPMODE pins: as Corundum constrains the VCU118 (fpga/mqnic/VCU118/fpga_100g/fpga.xdc)",
			"PCIe block PCIE40E4_X1Y2: public VCU118 designs place the x16 endpoint there",
		},
	},
}

// DefaultPlan is a board's lane plan when none is given: a QSFP28
// cage's four lanes at 25.78125 Gb/s.
var DefaultPlan = lanes.Plan{Lanes: 4, KbpsPerLane: 25_781_250}

// Names are the presets' names, in order.
func Names() []string {
	var ns []string
	for _, b := range Presets {
		ns = append(ns, b.Name)
	}
	return ns
}

// Lookup returns the preset called name (any case).
func Lookup(name string) (Board, error) {
	i := slices.IndexFunc(Presets, func(b Board) bool { return strings.EqualFold(b.Name, name) })
	if i < 0 {
		return Board{}, fmt.Errorf("board %q: not a preset (one of %s)", name, strings.Join(Names(), ", "))
	}
	return Presets[i], nil
}

// Check says whether plan fits the board's cages: no more lanes than a
// cage has, a lane count the GTY wrapper takes, and a line rate within
// the cage's and the part's.
func (b Board) Check(plan lanes.Plan) error {
	if err := plan.Check(); err != nil {
		return err
	}
	for _, c := range b.Cages {
		if plan.Lanes > len(c.Channels) {
			return fmt.Errorf("board %s: lane plan %v needs %d lanes a port; %s has %d (try %v)", b.Name, plan, plan.Lanes, c.Name, len(c.Channels), DefaultPlan)
		}
		if g := plan.LaneGbps(); g > c.MaxLaneGbps || g > b.MaxLaneGbps {
			return fmt.Errorf("board %s: lane plan %v runs lanes at %g Gb/s; %s takes up to %g Gb/s and %s's GTYs %g", b.Name, plan, g, c.Name, c.MaxLaneGbps, b.Part, b.MaxLaneGbps)
		}
	}
	switch plan.Lanes {
	case 1, 2, 4:
	default:
		return fmt.Errorf("board %s: lane plan %v: the GTY wrapper stripes a word over 1, 2 or 4 of a cage's lanes", b.Name, plan)
	}
	return nil
}
