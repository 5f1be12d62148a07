// Package bundle writes what an FPGA engineer takes to the vendor tools
// along with a generated PCIe manager: the Verilog, a file list, an XDC
// constraints template, a Vivado non-project build script, the register
// map as a C header and as Markdown, and a README. Every file is a pure
// function of the design, byte for byte: no dates, no paths of the
// machine that generated it.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package bundle

import (
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"

	"onic/desc"
	"onic/designs/internal/board"
	"onic/designs/internal/card"
	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/designs/onic"
	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
	"onic/internal/fpgapart"
	"onic/kernels"
	"onic/pcie"
	"onic/pcie/lanes"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
)

// Options are the choices that are not part of the design.
type Options struct {
	// Part is the FPGA part the Vivado script builds for (required;
	// firmware.DefaultPart is the O-NIC's reference part).
	Part string
	// Source names the configuration the design came from, for the README.
	Source string
	// PCIe4 makes the card's top, onic_top (designs/internal/card.Build):
	// AMD's PCIE4 block's CQ, CC, RQ and RC interfaces by the IP's own
	// port names around the manager's host and port pipelines, with an
	// optical link layer on each port; build.tcl then also creates the
	// block's IP.
	PCIe4 bool
	// Function is the O-NIC's host-facing function, whose IDs, class and
	// BARs configure the PCIE4 IP (required with PCIe4).
	Function *pcie.Function
	// Link configures the optical link layers of the card (zero: the
	// defaults of optlink.Config; tests train in tens of cycles).
	Link optlink.Config
	// Lanes is the optical ports' lane plan, which build.tcl's
	// transceiver IP is configured for (zero: lanes.Default, FLEET's).
	Lanes lanes.Plan
	// EgressStallCycles is how long a TLP may wait at an up port that
	// takes nothing before the card treats the port as down for
	// admission (zero: card.DefaultEgressStallCycles).
	EgressStallCycles int
	// Kernels are the kernels in the card's slots (desc.ONIC's: library
	// kernels, or empty slots of a firmware spec's shapes); every other
	// slot the tables number is generated empty. Each slot's kernel
	// module is a reconfigurable partition of the card in build.tcl.
	Kernels []desc.Kernel
	// Regions are what each slot's pblock must hold, by slot (a firmware
	// spec's slot regions); a slot with none gets a placeholder pblock
	// in build.tcl.
	Regions map[int]Region
	// Board, when set, adds a board top for it (board.Top, under
	// board.Dir): the PCIe IP, onic_top and a GTY wrapper and transceiver
	// IP per port on the board's cages, with its XDC; build.tcl's
	// default flow then builds that top, its IP placed as the board has
	// it. It needs the card (PCIe4), a lane plan the board's cages take
	// (Lanes), and Part is the board's.
	Board *board.Board
	// BoardMarkerWords shortens the GTY wrapper's alignment marker
	// spacing (zero: gty.DefaultMarkerWords), for simulations.
	BoardMarkerWords int
}

// DFXDir is the directory, among the generated files, of the black boxes
// the static design is synthesised around (one per kernel slot's module):
// a simulator or linter reading every .v of a bundle leaves it out, as
// each module's own file is there too.
const DFXDir = "dfx"

// Region is what a slot's pblock must hold.
type Region struct{ LUT, FF, BRAM, DSP int }

// File is one generated file.
type File struct {
	Name string
	Data []byte
}

// Files returns the generated files of d, in a fixed order.
func Files(d *manager.Design, o Options) ([]File, error) {
	fs, _, err := files(d, o, false)
	return fs, err
}

// ImageFiles returns the files of a firmware image (onic fw build): the
// static region's, and each kernel slot's (in slot order, each its
// reconfigurable module, the modules under it and a files.f listing
// them). The static region leaves out what only the slots' modules use,
// and none of its hardware files names a slot's kernel: its build.tcl
// reads each slot's sources from ../slot<N>/files.f. So kernels of one
// shape (one input or two, egress, translated base, pair buffers) build
// the same static region, and one built for another's image loads into
// it by partial reconfiguration. It needs the card (o.PCIe4).
func ImageFiles(d *manager.Design, o Options) (static []File, slots [][]File, err error) {
	if !o.PCIe4 {
		return nil, nil, fmt.Errorf("image: only the card (PCIe4) has kernel slots")
	}
	return files(d, o, true)
}

// Design is the O-NIC design o describes around d (designs/onic.Build):
// the card with o.PCIe4, else the manager alone.
func (o Options) Design(d *manager.Design) (*onic.Design, error) {
	oo := onic.Options{Card: o.PCIe4, Function: o.Function, Link: o.Link, EgressStallCycles: o.EgressStallCycles, Kernels: o.Kernels}
	if o.Board != nil {
		oo.ExtConfigBase = o.Board.PCIe.ExtConfigBase
	}
	return onic.Build(d, oo)
}

// files is Files, or with image ImageFiles: the design o describes,
// built (Options.Design) and rendered.
func files(d *manager.Design, o Options, image bool) ([]File, [][]File, error) {
	if o.Part == "" {
		return nil, nil, fmt.Errorf("part: required (the FPGA part build.tcl builds for)")
	}
	if err := fpgapart.Check(o.Part); err != nil { // it is written into build.tcl
		return nil, nil, fmt.Errorf("part: %v", err)
	}
	ds, err := o.Design(d)
	if err != nil {
		return nil, nil, err
	}
	return render(ds, o, image)
}

// render writes the files of the built design ds (with image, a firmware
// image's: the static region's, and each slot's).
//
// Long: it writes one file top to bottom, in the order the file reads.
func render(ds *onic.Design, o Options, image bool) ([]File, [][]File, error) {
	d, top, slots, counters := ds.Manager, ds.Top, ds.Slots, ds.Counters
	name := d.Module.Name()
	mods, err := verilog.EmitDesign(top)
	if err != nil {
		return nil, nil, err
	}
	// The static design: everything but the slots' modules and what only
	// they use.
	isRM := map[string]bool{}
	for _, s := range slots {
		isRM[s.RM.Name()] = true
	}
	static, err := verilog.EmitDesignWithout(top, func(m *ir.Module) bool { return isRM[m.Name()] })
	if err != nil {
		return nil, nil, err
	}
	if image {
		mods = static
	}
	var fs []File
	var vs, staticVs []string
	clk := clocks{"clk", "rst", false}
	topName := top.Name()
	if o.PCIe4 {
		// onic_top runs the card on the block's user clock and its
		// active-high reset, by the IP's own names.
		clk, topName = clocks{"user_clk", "user_reset", true}, "onic_top"
		fs = append(fs, File{topName + ".v", userClockTop(topName, top, clk)},
			File{cdcFIFOName + ".v", []byte(cdcFIFO)}, File{cdcSyncName + ".v", []byte(cdcSync)})
		vs = append(vs, topName+".v", cdcFIFOName+".v", cdcSyncName+".v")
		staticVs = append(staticVs, vs...)
	}
	for _, f := range mods {
		fs = append(fs, File{f.Name, f.Source})
		vs = append(vs, f.Name)
	}
	for _, f := range static {
		staticVs = append(staticVs, f.Name)
	}
	// Each slot's kernel module is a reconfigurable partition: the static
	// design is synthesised with a black box of it, the module itself on
	// its own.
	var parts []partition
	var slotFiles [][]File
	for _, s := range slots {
		files, err := verilog.EmitDesign(s.RM)
		if err != nil {
			return nil, nil, err
		}
		pt := partition{slot: s.Config.Slot, cell: fmt.Sprintf("card/slot%d_kernel", s.Config.Slot), module: s.RM.Name(), kernel: "empty", image: image}
		pt.region = o.Regions[s.Config.Slot]
		if s.Config.Kernel != nil {
			pt.kernel = s.Config.Kernel.Name
		}
		var sf []File
		for _, f := range files {
			pt.sources = append(pt.sources, f.Name)
			sf = append(sf, File{f.Name, f.Source})
			if f.Name == s.RM.Name()+".v" {
				stub, err := blackBox(f.Source)
				if err != nil {
					return nil, nil, err
				}
				// In a directory of its own: a simulator or linter
				// reading every .v here must not see the module twice.
				fs = append(fs, File{DFXDir + "/" + s.RM.Name() + "_stub.v", stub})
			}
		}
		parts = append(parts, pt)
		slotFiles = append(slotFiles, append(sf, File{"files.f", []byte(strings.Join(pt.sources, "\n") + "\n")}))
	}
	var boardFs []board.File
	if o.Board != nil {
		if !o.PCIe4 || image {
			return nil, nil, fmt.Errorf("board %s: a board top is generated for the whole card (not --manager-only, not a firmware image)", o.Board.Name)
		}
		if o.Part != o.Board.Part {
			return nil, nil, fmt.Errorf("board %s: part %s is not the board's (%s)", o.Board.Name, o.Part, o.Board.Part)
		}
		var err error
		boardFs, err = board.Top(*o.Board, board.Options{Plan: o.lanePlan(), Card: topPorts(top), MarkerWords: o.BoardMarkerWords})
		if err != nil {
			return nil, nil, err
		}
		for _, f := range boardFs {
			fs = append(fs, File{f.Name, f.Data})
		}
	} else if o.PCIe4 && !image {
		// No board: the GTY wrapper for the lane plan, for the board top
		// the user writes.
		ws, err := board.Wrappers(GTYDir, o.lanePlan(), o.BoardMarkerWords)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range ws {
			fs = append(fs, File{f.Name, f.Data})
		}
	}
	fs = append(fs,
		File{"files.f", []byte(strings.Join(vs, "\n") + "\n")},
		File{topName + ".xdc", xdc(d, top, topName, clk)},
		File{"build.tcl", tcl(topName, o, staticVs, parts, d.Config.StandIns, board.Sources(boardFs))},
		File{name + "_regs.h", header(d, counters)},
		File{name + "_regs.go", goRegs(d, counters)},
		File{"registers.md", markdown(d, counters)},
		File{"README.md", readme(d, o, vs, parts, counters)},
	)
	return fs, slotFiles, nil
}

// Write writes d's files into dir (created if needed) and returns their
// paths.
func Write(dir string, d *manager.Design, o Options) ([]string, error) {
	fs, err := Files(d, o)
	if err != nil {
		return nil, err
	}
	return WriteFiles(dir, fs)
}

// GTYDir is the directory, among a whole card's files without a board,
// of the GTY wrapper for its lane plan (with a board it is board.Dir's).
const GTYDir = "gty"

// WriteFiles writes fs into dir (created if needed) and returns their
// paths.
func WriteFiles(dir string, fs []File) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range fs {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// streams are the design's stream interfaces and their directions.
var streams = []struct{ prefix, dir, doc string }{
	{"s_host_tlp", "in", "TLPs from the host's PCIe core"},
	{"m_port_a_tlp", "out", "TLPs to optical port A"},
	{"m_port_b_tlp", "out", "TLPs to optical port B"},
	{"m_kernel_tlp", "out", "TLPs to the kernel slots (m_kernel_slot says which)"},
	{"m_local_tlp", "out", "TLPs for the O-NIC's own registers and configuration"},
	{"m_cpl_tlp", "out", "UR/CA completions the manager generates, back to the host"},
}

// clocks are the top's clock and reset port names, and whether its
// optical ports' lane interfaces run on their own clocks (onic_top:
// userClockTop).
type clocks struct {
	clk, rst string
	lanes    bool
}

// laneTx and laneRx are an optical port's lane signals on its
// transceiver's transmit and receive clocks (the suffixes after
// port_<x>_), in the order they pack into a crossing FIFO's word (the
// first on top).
var (
	laneTx = []string{"tx_ctl", "tx_data"}
	laneRx = []string{"rx_ctl", "rx_data"}
)

// laneOf says whether port name of the card is one of an optical port's
// lane signals, which onic_top carries across to the transceiver's
// clocks: the port's prefix, or "".
func laneOf(name string) string {
	for _, pt := range card.Ports {
		rest, ok := strings.CutPrefix(name, pt.Prefix+"_")
		if !ok {
			continue
		}
		switch rest {
		case "tx_data", "tx_ctl", "tx_valid", "tx_ready", "rx_data", "rx_ctl", "rx_valid", "phy_up":
			return pt.Prefix
		}
	}
	return ""
}

// userClockTop is the Verilog of module name: inner (the emitter always
// names its clock clk and its reset rst) with its clock and reset under
// the names c gives and every other port passed through by name, but for
// each optical port's lane interface, which crosses to the port's
// transceiver clocks (port_<x>_tx_clk, port_<x>_rx_clk) through an
// onic_cdc_fifo each way: the words the card sends are read out on the
// transmit clock, the words the wrapper delivers on the receive clock
// are written in on it (a word the full FIFO refuses sets
// port_<x>_rx_overflow, sticky until reset), and port_<x>_phy_up, on the
// receive clock, reaches the card through onic_cdc_sync. Each FIFO
// side's reset is user_reset, through onic_cdc_sync where its clock is
// not user_clk.
func userClockTop(name string, inner *ir.Module, c clocks) []byte {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	width := func(n int) string {
		if n > 1 {
			return fmt.Sprintf("[%d:0] ", n-1)
		}
		return ""
	}
	portW := map[string]int{}
	for _, p := range inner.Ports() {
		portW[p.Name] = inner.Node(p.Node).W
	}
	w("// Code generated by onic hdl gen. DO NOT EDIT.")
	w("// %s: %s on the PCIe block's user clock and reset, each optical", name, inner.Name())
	w("// port's lane interface on its transceiver's clocks.")
	w("")
	w("`default_nettype none")
	w("")
	w("module %s (", name)
	ports := []string{"    input  wire " + c.clk, "    input  wire " + c.rst}
	conns := []string{fmt.Sprintf("        .clk(%s)", c.clk), fmt.Sprintf("        .rst(%s)", c.rst)}
	var wires []string
	for _, p := range inner.Ports() {
		dir := "input "
		if p.Output {
			dir = "output"
		}
		if laneOf(p.Name) != "" {
			// The card's side of a crossing: a wire of its own.
			wires = append(wires, fmt.Sprintf("    wire %scard_%s;", width(portW[p.Name]), p.Name))
			conns = append(conns, fmt.Sprintf("        .%s(card_%s)", p.Name, p.Name))
			continue
		}
		ports = append(ports, fmt.Sprintf("    %s wire %s%s", dir, width(portW[p.Name]), p.Name))
		conns = append(conns, fmt.Sprintf("        .%s(%s)", p.Name, p.Name))
	}
	for _, pt := range card.Ports {
		x := pt.Prefix
		ports = append(ports,
			fmt.Sprintf("    input  wire %s_tx_clk", x),
			fmt.Sprintf("    input  wire %s_rx_clk", x),
			fmt.Sprintf("    output wire %s%s_tx_data", width(portW[x+"_tx_data"]), x),
			fmt.Sprintf("    output wire %s_tx_ctl", x),
			fmt.Sprintf("    output wire %s_tx_valid", x),
			fmt.Sprintf("    input  wire %s_tx_ready", x),
			fmt.Sprintf("    input  wire %s%s_rx_data", width(portW[x+"_rx_data"]), x),
			fmt.Sprintf("    input  wire %s_rx_ctl", x),
			fmt.Sprintf("    input  wire %s_rx_valid", x),
			fmt.Sprintf("    input  wire %s_phy_up", x),
			fmt.Sprintf("    output wire %s_rx_overflow", x))
	}
	w("%s", strings.Join(ports, ",\n"))
	w(");")
	for _, l := range wires {
		w("%s", l)
	}
	w("")
	w("    %s card (", inner.Name())
	w("%s", strings.Join(conns, ",\n"))
	w("    );")
	for _, pt := range card.Ports {
		crossings(w, pt.Prefix, 1+portW[pt.Prefix+"_tx_data"], c, width)
	}
	w("endmodule")
	w("")
	w("`default_nettype wire")
	return []byte(b.String())
}

// crossings writes optical port x's crossings in onic_top (userClockTop):
// the transmit and receive FIFOs of lw-bit words (data and ctl), the
// received words' register, the overflow flag and the PHY's synchroniser.
func crossings(w func(string, ...any), x string, lw int, c clocks, width func(int) string) {
	w("")
	w("    // Optical port %s: the card on %s, the lanes on %s_tx_clk and %s_rx_clk.", strings.ToUpper(x[len(x)-1:]), c.clk, x, x)
	w("    wire %s_tx_rst;", x)
	w("    wire %s_rx_rst;", x)
	w("    %s %s_tx_rst_sync (.clk(%s_tx_clk), .d(%s), .q(%s_tx_rst));", cdcSyncName, x, x, c.rst, x)
	w("    %s %s_rx_rst_sync (.clk(%s_rx_clk), .d(%s), .q(%s_rx_rst));", cdcSyncName, x, x, c.rst, x)
	w("    %s #(.WIDTH(%d), .ADDR(%d)) %s_tx_cdc (", cdcFIFOName, lw, cdcFIFOAddr, x)
	w("        .s_clk(%s), .s_rst(%s),", c.clk, c.rst)
	w("        .s_data({card_%s_%s, card_%s_%s}),", x, laneTx[0], x, laneTx[1])
	w("        .s_valid(card_%s_tx_valid), .s_ready(card_%s_tx_ready),", x, x)
	w("        .m_clk(%s_tx_clk), .m_rst(%s_tx_rst),", x, x)
	w("        .m_data({%s_%s, %s_%s}),", x, laneTx[0], x, laneTx[1])
	w("        .m_valid(%s_tx_valid), .m_ready(%s_tx_ready)", x, x)
	w("    );")
	w("    wire %s_rx_ready;", x)
	w("    wire %s%s_rx_out_data;", width(lw-1), x)
	w("    wire %s_rx_out_ctl;", x)
	w("    wire %s_rx_out_valid;", x)
	w("    %s #(.WIDTH(%d), .ADDR(%d)) %s_rx_cdc (", cdcFIFOName, lw, cdcFIFOAddr, x)
	w("        .s_clk(%s_rx_clk), .s_rst(%s_rx_rst),", x, x)
	w("        .s_data({%s_%s, %s_%s}),", x, laneRx[0], x, laneRx[1])
	w("        .s_valid(%s_rx_valid), .s_ready(%s_rx_ready),", x, x)
	w("        .m_clk(%s), .m_rst(%s),", c.clk, c.rst)
	w("        .m_data({%s_rx_out_ctl, %s_rx_out_data}),", x, x)
	w("        .m_valid(%s_rx_out_valid), .m_ready(1'b1)", x)
	w("    );")
	w("    // The words read out are registered before the card: its link layer")
	w("    // checks a word's CRC in the cycle it arrives, and the crossing's")
	w("    // read is a distributed RAM's.")
	w("    reg %s%s_rx_word;", width(lw-1), x)
	w("    reg %s_rx_word_ctl;", x)
	w("    reg %s_rx_word_valid;", x)
	w("    always @(posedge %s) begin", c.clk)
	w("        %s_rx_word <= %s_rx_out_data;", x, x)
	w("        %s_rx_word_ctl <= %s_rx_out_ctl;", x, x)
	w("        %s_rx_word_valid <= %s_rx_out_valid & ~%s;", x, x, c.rst)
	w("    end")
	w("    assign card_%s_rx_data = %s_rx_word;", x, x)
	w("    assign card_%s_rx_ctl = %s_rx_word_ctl;", x, x)
	w("    assign card_%s_rx_valid = %s_rx_word_valid;", x, x)
	w("    // A word the wrapper delivers while the FIFO is full is lost (the")
	w("    // link layer's sequence numbers then ask for it again): flagged.")
	w("    reg %s_rx_lost;", x)
	w("    always @(posedge %s_rx_clk) begin", x)
	w("        if (%s_rx_rst) begin", x)
	w("            %s_rx_lost <= 1'b0;", x)
	w("        end else if (%s_rx_valid && !%s_rx_ready) begin", x, x)
	w("            %s_rx_lost <= 1'b1;", x)
	w("        end")
	w("    end")
	w("    %s %s_rx_lost_sync (.clk(%s), .d(%s_rx_lost), .q(%s_rx_overflow));", cdcSyncName, x, c.clk, x, x)
	w("    %s %s_phy_up_sync (.clk(%s), .d(%s_phy_up), .q(card_%s_phy_up));", cdcSyncName, x, c.clk, x, x)
}

func xdc(d *manager.Design, top *ir.Module, topName string, c clocks) []byte {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	period := 1000 / d.ClockMHz
	w("# Constraints template for %s, generated by onic. DO NOT EDIT: regenerate", topName)
	w("# with 'onic hdl gen' and put board-specific constraints in a file of your own.")
	w("#")
	if c.lanes {
		w("# The card runs on %s, at %g MHz; %s is synchronous to it. Each optical", c.clk, d.ClockMHz, c.rst)
		w("# port's lane interface runs on its transceiver's clocks (below).")
	} else {
		w("# The design is synchronous to one clock, %s, at %g MHz; %s is synchronous.", c.clk, d.ClockMHz, c.rst)
	}
	w("create_clock -period %.3f -name clk [get_ports %s]", period, c.clk)
	w("")
	w("# Out-of-context budgets for the interfaces: half a period for the logic")
	w("# on the other side of each. Replace them with the real paths once the")
	w("# manager sits between the PCIe core and the optical ports.")
	budget := period / 2
	// Every port but the clock, by interface and direction, named one by
	// one from the design (a wildcard would catch a ready of the other
	// direction).
	groups := []struct{ prefix, title string }{{"", "control"}}
	for _, s := range streams {
		groups = append(groups, struct{ prefix, title string }{s.prefix + "_", s.doc})
	}
	groups = append(groups, struct{ prefix, title string }{"m_kernel_slot", "kernel slot select"},
		struct{ prefix, title string }{"s_axil_", "AXI-Lite register interface"},
		struct{ prefix, title string }{"m_slot_axil_", "the register block's AXI-Lite master toward the kernel slots' pages"},
		struct{ prefix, title string }{"m_axis_cq_", "the PCIE4 block's completer request interface (PG213)"},
		struct{ prefix, title string }{"s_axis_cc_", "the PCIE4 block's completer completion interface (PG213)"},
		struct{ prefix, title string }{"pcie_cq_np_req", "the PCIE4 block's non-posted request credit (PG213)"},
		struct{ prefix, title string }{"s_axis_rq_", "the PCIE4 block's requester request interface (PG213)"},
		struct{ prefix, title string }{"m_axis_rc_", "the PCIE4 block's requester completion interface (PG213)"},
		struct{ prefix, title string }{"port_in_", "the port pipeline's counters and access rule slots"},
		struct{ prefix, title string }{"port_a_", "optical port A: the link layer's lane interface, state and counters, and the TLPs it receives"},
		struct{ prefix, title string }{"port_b_", "optical port B: the link layer's lane interface, state and counters, and the TLPs it receives"})
	group := func(name string) int {
		g := 0
		for k, gr := range groups {
			if gr.prefix != "" && strings.HasPrefix(name, gr.prefix) {
				g = k
			}
		}
		return g
	}
	ins, outs := make([][]string, len(groups)), make([][]string, len(groups))
	m := top
	ins[0] = append(ins[0], c.rst) // the reset port, not one of the module's
	for _, p := range m.Ports() {
		if c.lanes && laneOf(p.Name) != "" {
			continue // on the transceiver's clocks (lanes, below)
		}
		ref := p.Name
		if m.Node(p.Node).W > 1 {
			ref += "[*]"
		}
		if p.Output {
			outs[group(p.Name)] = append(outs[group(p.Name)], ref)
		} else {
			ins[group(p.Name)] = append(ins[group(p.Name)], ref)
		}
	}
	for k, gr := range groups {
		if len(ins[k])+len(outs[k]) == 0 {
			continue
		}
		w("# %s", gr.title)
		if len(ins[k]) > 0 {
			w("set_input_delay -clock clk %.3f [get_ports {%s}]", budget, strings.Join(ins[k], " "))
		}
		if len(outs[k]) > 0 {
			w("set_output_delay -clock clk %.3f [get_ports {%s}]", budget, strings.Join(outs[k], " "))
		}
	}
	if c.lanes {
		laneConstraints(w, period)
	}
	return []byte(b.String())
}

// laneConstraints writes the constraints of onic_top's optical lane interfaces
// and their crossings (userClockTop): a clock per transceiver side, the
// lane ports' budgets against it, and the crossings' paths bounded to the
// faster clock's period with the clock skew left out (-datapath_only),
// the usual constraint for Gray-coded pointers and the word array they
// guard; the synchronisers' flip-flops carry ASYNC_REG in the Verilog.
func laneConstraints(w func(string, ...any), period float64) {
	for _, pt := range card.Ports {
		x := pt.Prefix
		port := "port " + strings.ToUpper(x[len(x)-1:])
		w("")
		w("# Optical %s's lanes, on the GTY wrapper's word clocks (%s_tx_clk for", port, x)
		w("# what the card sends, %s_rx_clk for what it receives; set the periods to", x)
		w("# your wrapper's), and the card's side of the crossings on clk.")
		for _, side := range []string{"tx", "rx"} {
			w("create_clock -period %.3f -name %s_%s_clk [get_ports %s_%s_clk]", period, x, side, x, side)
		}
		w("set_input_delay -clock %s_tx_clk %.3f [get_ports {%s_tx_ready}]", x, period/2, x)
		w("set_output_delay -clock %s_tx_clk %.3f [get_ports {%s_tx_data[*] %s_tx_ctl %s_tx_valid}]", x, period/2, x, x, x)
		w("set_input_delay -clock %s_rx_clk %.3f [get_ports {%s_rx_data[*] %s_rx_ctl %s_rx_valid %s_phy_up}]", x, period/2, x, x, x, x)
		w("set_output_delay -clock clk %.3f [get_ports {%s_rx_overflow}]", period/2, x)
		for _, side := range []string{"tx", "rx"} {
			w("set_max_delay -datapath_only -from [get_clocks clk] -to [get_clocks %s_%s_clk] %.3f", x, side, period)
			w("set_max_delay -datapath_only -from [get_clocks %s_%s_clk] -to [get_clocks clk] %.3f", x, side, period)
		}
	}
}

// partition is a kernel slot's reconfigurable partition: the instance
// (cell) of its kernel module, the module, the kernel it holds (or
// "empty") and the module's sources.
type partition struct {
	slot                 int
	cell, module, kernel string
	sources              []string
	// image: the sources are a firmware image's slot<N>/ payloads, read
	// through their files.f, and the kernel is not named.
	image bool
	// region is what its pblock must hold (zero: not given).
	region Region
}

// fitProc is build.tcl's onic_fit: the clock-region range of the first
// rectangle, from column 0 of row row up, whose sites hold need {LUT FF
// RAMB36 DSP}, and the row after it; an error if the part has none.
// Its Vivado calls (get_clock_regions, get_property COLUMN_INDEX and
// ROW_INDEX, get_sites -of_objects -filter SITE_TYPE) are the only ones
// it makes, so a test runs it in tclsh against a made-up part.
const fitProc = `set onic_row 0
proc onic_fit {need row} {
    lassign $need lut ff bram dsp
    set cols 0
    set rows 0
    foreach cr [get_clock_regions] {
        set x [get_property COLUMN_INDEX $cr]
        set y [get_property ROW_INDEX $cr]
        set cols [expr {max($cols, $x + 1)}]
        set rows [expr {max($rows, $y + 1)}]
        set n [llength [get_sites -quiet -of_objects $cr -filter {SITE_TYPE =~ SLICE*}]]
        set have($x,$y) [list [expr {8 * $n}] [expr {16 * $n}] \
            [llength [get_sites -quiet -of_objects $cr -filter {SITE_TYPE == RAMB36}]] \
            [llength [get_sites -quiet -of_objects $cr -filter {SITE_TYPE == DSP48E2}]]]
    }
    for {set h 1} {$row + $h <= $rows} {incr h} {
        for {set w 1} {$w <= $cols} {incr w} {
            set sum {0 0 0 0}
            for {set x 0} {$x < $w} {incr x} {
                for {set y $row} {$y < $row + $h} {incr y} {
                    if {[info exists have($x,$y)]} {
                        set sum [lmap a $sum b $have($x,$y) {expr {$a + $b}}]
                    }
                }
            }
            lassign $sum l f b d
            if {$l >= $lut && $f >= $ff && $b >= $bram && $d >= $dsp} {
                set top [expr {$row + $h - 1}]
                return [list CLOCKREGION_X0Y${row}:CLOCKREGION_X[expr {$w - 1}]Y${top} [expr {$top + 1}]]
            }
        }
    }
    error "onic_fit: the part has no clock regions from row $row up that hold $need (LUT FF RAMB36 DSP)"
}`

// checkpoint is the file build.tcl writes p's synthesised module to.
func (p partition) checkpoint() string {
	if p.image {
		return p.module + "_synth.dcp"
	}
	return p.module + "_" + ident(p.kernel) + "_synth.dcp"
}

// blackBox is the black-box declaration of the module in src (its
// header, ports and all, and no body), for synthesising the static
// design around a reconfigurable partition.
func blackBox(src []byte) ([]byte, error) {
	s := string(src)
	i := strings.Index(s, "\nmodule ")
	if i < 0 {
		return nil, fmt.Errorf("black box: no module in the source")
	}
	j := strings.Index(s[i:], ");\n")
	if j < 0 {
		return nil, fmt.Errorf("black box: the module's port list does not end")
	}
	var b strings.Builder
	b.WriteString("// Generated by onic. DO NOT EDIT.\n")
	b.WriteString("// The black box the static design is synthesised with: the kernel slot's\n")
	b.WriteString("// reconfigurable partition, filled by a reconfigurable module's checkpoint.\n")
	b.WriteString("`default_nettype none\n(* black_box *)")
	b.WriteString(s[i : i+j+3])
	b.WriteString("endmodule\n`default_nettype wire\n")
	return []byte(b.String()), nil
}

// tcl is the bundle's build.tcl: the Vivado project, the IP it creates,
// the sources, constraints and partitions, and the runs.
//
// Long: it writes one file top to bottom, in the order the file reads.
func tcl(name string, o Options, sources []string, parts []partition, standIns []manager.StandIn, boardSources []string) []byte {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("# Vivado non-project build of %s, generated by onic. DO NOT EDIT.", name)
	w("#   vivado -mode batch -source build.tcl")
	what := "the manager"
	if o.PCIe4 {
		what = "the card"
	}
	w("# synthesises, places and routes %s out of context on %s and", what, o.Part)
	w("# writes utilisation and timing reports next to this script.")
	if o.Board != nil {
		w("# Or (the default here) %s's top, %s, around it, in context, and the", o.Board.Title, o.Board.TopName())
		w("# bitstreams; set flow to ooc (before sourcing it) for the card alone.")
	} else if o.PCIe4 {
		w("# Or, with board_top, board_sources and board_xdc set (below), your board's")
		w("# top around it, in context, and the bitstreams.")
	}
	w("set dir [file dirname [file normalize [info script]]]")
	w("set part %s", o.Part)
	if len(parts) > 0 {
		w("")
		w("# Each kernel slot's module is a reconfigurable partition (Vivado Dynamic")
		w("# Function eXchange, UG909): it is synthesised on its own, the static")
		w("# design around a black box of it, and the two are linked below.")
		sized := false
		for _, p := range parts {
			sized = sized || p.region != (Region{})
		}
		if sized {
			w("# Each pblock is sized from its slot's region in the firmware spec")
			w("# (region(...): LUTs, flip-flops, RAMB36, DSPs) once the design is open:")
			w("# onic_fit takes, from the lowest clock-region row no earlier slot")
			w("# holds, the first rectangle of clock regions from column 0 (a column")
			w("# wider, then a row taller) whose sites hold the region (UltraScale+: 8")
			w("# LUTs and 16 flip-flops per slice, UG574). It knows nothing of the static")
			w("# design's placement (the PCIe block, the transceivers): set pblock(...)")
			w("# to a range of your floorplan to override it.")
		} else {
			w("# The pblocks are placeholders for %s, a clock region apiece: set each to a", o.Part)
			w("# region of your floorplan with room for the largest kernel the slot will")
			w("# hold (onic fw build measures a kernel against its slot's region).")
		}
		boardFlow(w, name, o, boardSources)
		w("set cell_prefix [expr {$flow eq \"board\" ? \"$card_cell/\" : \"\"}]")
		for k, p := range parts {
			if r := p.region; r != (Region{}) {
				w("set region(%s) {%d %d %d %d}", p.cell, r.LUT, r.FF, r.BRAM, r.DSP)
			} else {
				w("set pblock(%s) CLOCKREGION_X0Y%d:CLOCKREGION_X1Y%d", p.cell, 2*k+1, 2*k+1)
			}
		}
		if sized {
			w("")
			w(fitProc)
		}
		if parts[0].image {
			w("")
			w("# A firmware image's slots are its slot<N>/ payloads, next to static/, each")
			w("# listing its sources in files.f (onic fw extract writes them out).")
			w("proc read_slot {d} {")
			w("    set f [open [file join $d files.f]]")
			w("    foreach v [split [string trim [read $f]] \"\\n\"] {")
			w("        read_verilog [file join $d $v]")
			w("    }")
			w("    close $f")
			w("}")
		}
		for _, p := range parts {
			w("")
			if p.image {
				w("# %s: slot %d's kernel", p.cell, p.slot)
				w("read_slot [file join $dir .. slot%d]", p.slot)
			} else {
				w("# %s: %s", p.cell, p.kernel)
				for _, f := range p.sources {
					w("read_verilog [file join $dir %s]", f)
				}
			}
			w("synth_design -top %s -part $part -mode out_of_context", p.module)
			w("write_checkpoint -force [file join $dir %s]", p.checkpoint())
			w("close_project")
		}
		w("")
		w("# The static design.")
	}
	for _, f := range sources {
		w("read_verilog [file join $dir %s]", f)
	}
	for _, p := range parts {
		w("read_verilog [file join $dir %s/%s_stub.v]", DFXDir, p.module)
	}
	if o.PCIe4 {
		pcie4IP(w, o.Function, standIns, o.Board)
		gtIP(w, o.lanePlan(), o.Board)
	}
	if len(parts) > 0 {
		w("if {$flow eq \"ooc\"} {")
		w("    read_xdc -mode out_of_context [file join $dir %s.xdc]", name)
		w("    synth_design -top %s -part $part -mode out_of_context", name)
		w("} else {")
		w("    # In context: %s's own constraints are for it out of context (its", name)
		w("    # ports' delays); the board's constrain the clocks and the crossings.")
		w("    foreach f $board_sources { read_verilog $f }")
		w("    read_xdc $board_xdc")
		w("    synth_design -top $board_top -part $part")
		w("}")
		for _, p := range parts {
			cell := "${cell_prefix}" + p.cell
			w("set_property HD.RECONFIGURABLE true [get_cells %s]", cell)
			w("read_checkpoint -cell [get_cells %s] [file join $dir %s]", cell, p.checkpoint())
			pb := "pblock_" + strings.ReplaceAll(p.cell, "/", "_")
			w("create_pblock %s", pb)
			w("add_cells_to_pblock [get_pblocks %s] [get_cells %s]", pb, cell)
			if p.region != (Region{}) {
				w("if {![info exists pblock(%s)]} {", p.cell)
				w("    lassign [onic_fit $region(%s) $onic_row] pblock(%s) onic_row", p.cell, p.cell)
				w("}")
			}
			w("resize_pblock [get_pblocks %s] -add $pblock(%s)", pb, p.cell)
			w("set_property SNAPPING_MODE ON [get_pblocks %s]", pb)
			w("set_property RESET_AFTER_RECONFIG 1 [get_pblocks %s]", pb)
		}
	} else {
		w("read_xdc -mode out_of_context [file join $dir %s.xdc]", name)
		w("synth_design -top %s -part $part -mode out_of_context", name)
	}
	w("opt_design")
	w("place_design")
	w("phys_opt_design")
	w("route_design")
	w("report_utilization -file [file join $dir utilization.rpt]")
	w("report_timing_summary -file [file join $dir timing.rpt]")
	w("write_checkpoint -force [file join $dir %s_routed.dcp]", name)
	if len(parts) > 0 {
		w("if {$flow eq \"board\"} {")
		w("    # The full bitstream, and a partial one per reconfigurable partition")
		w("    # (<pblock>_partial.bit), as Vivado names them.")
		w("    write_bitstream -force [file join $dir %s.bit]", name)
		w("}")
	}
	return []byte(b.String())
}

// ident is a register name as a C identifier prefix.
func ident(name string) string { return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) }

// cIdent turns a configuration name into the tail of a C identifier:
// upper case, anything but letters and digits as '_'.
func cIdent(name string) string {
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

func header(d *manager.Design, counters []string) []byte {
	name := d.Module.Name()
	guard := strings.ToUpper(name) + "_REGS_H"
	p := strings.ToUpper(name)
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("/* Code generated by onic hdl gen. DO NOT EDIT. */")
	w("/* AXI-Lite register map of %s: byte offsets of 32-bit registers. */", name)
	w("#ifndef %s", guard)
	w("#define %s", guard)
	w("")
	for _, r := range d.Registers {
		w("/* %s, %s: %s */", r.Name, r.Access, r.Doc)
		w("#define %s_%s 0x%03Xu", p, ident(r.Name), r.Offset)
	}
	w("")
	w("#define %s_ID_VALUE 0x%08Xu", p, uint32(pmgr.IDValue))
	w("#define %s_VERSION_VALUE 0x%08Xu", p, uint32(pmgr.VersionValue))
	w("#define %s_COUNTERS %du", p, len(d.Reasons))
	w("")
	w("/* LUT_CTRL fields. */")
	w("#define %s_LUT_CTRL_ENABLED 0x1u", p)
	w("#define %s_LUT_CTRL_EGRESS_SHIFT 1", p)
	w("#define %s_LUT_CTRL_SLOT_SHIFT 8", p)
	for _, e := range []struct {
		n string
		k ntb.EgressKind
	}{{"PORT_A", ntb.EgressPortA}, {"PORT_B", ntb.EgressPortB}, {"KERNEL", ntb.EgressKernel}, {"LOCAL", ntb.EgressLocal}} {
		w("#define %s_EGRESS_%s %du", p, e.n, e.k)
	}
	if d.RuleSlots > 0 {
		w("")
		w("/* Access rules (ACL_* registers): ACL_CTRL fields, and the domains a rule names, in configuration order. */")
		w("#define %s_ACL_RULE_SLOTS %du", p, d.RuleSlots)
		w("#define %s_ACL_PAGE 4096u /* rules cover whole pages */", p)
		w("#define %s_ACL_CTRL_ENABLED 0x1u", p)
		w("#define %s_ACL_CTRL_READ 0x2u", p)
		w("#define %s_ACL_CTRL_WRITE 0x4u", p)
		w("#define %s_ACL_CTRL_DOMAIN_SHIFT 16", p)
		seen := map[string]bool{}
		for i, n := range d.Domains {
			id := cIdent(n)
			if seen[id] {
				id = fmt.Sprintf("%s_%d", id, i)
			}
			seen[id] = true
			w("#define %s_DOMAIN_%s %du /* %s */", p, id, i, strings.ReplaceAll(n, "*/", "* /"))
		}
	}
	w("")
	w("/* The O-NIC's PCI function: identity and BARs (docs/pcie.md). */")
	w("#define %s_VENDOR_ID 0x%04Xu", p, pcie.ONICVendorID)
	w("#define %s_DEVICE_ID 0x%04Xu", p, pcie.ONICDeviceID)
	w("#define %s_REG_BAR %d /* these registers, the task shells, MSI-X */", p, pcie.ONICRegBAR)
	w("#define %s_WINDOW_BAR %d /* the direct translation windows */", p, pcie.ONICWindowBAR)
	w("#define %s_LUT_BAR %d /* the LUT window */", p, pcie.ONICLUTBAR)
	w("#define %s_MSIX_TABLE 0x%04Xu /* in REG_BAR: 16 bytes per vector */", p, pcie.ONICMSIXTableOffset)
	w("#define %s_MSIX_PBA 0x%04Xu", p, pcie.ONICMSIXPBAOffset)
	w("#define %s_MSIX_VECTORS %du", p, pcie.ONICMSIXVectors)
	w("#define %s_LINK_VECTOR(port) (%du + (unsigned)(port)) /* optical port 0 (A) or 1 (B): its link came up or went down */", p,
		pcie.ONICMSIXLinkVector)
	w("")
	w("/* Kernel task shells in REG_BAR (docs/kernels.md): slot s's at TASK_PAGE(s). */")
	w("#define %s_TASK_PAGE(s) (0x%04Xu + 0x%04Xu * (unsigned)(s))", p, kernels.TaskPage(0), kernels.TaskPage(1)-kernels.TaskPage(0))
	for _, r := range []struct {
		n   string
		off uint32
	}{{"KERNEL_ID", kernels.TaskKernelID}, {"INFO", kernels.TaskInfo}, {"CTRL", kernels.TaskCtrl}, {"STATUS", kernels.TaskStatus},
		{"CPL_LO", kernels.TaskCplLo}, {"CPL_HI", kernels.TaskCplHi}, {"ARG0", kernels.TaskArg0}, {"ARG1", kernels.TaskArg1}, {"ARG2", kernels.TaskArg2},
		{"ARG3", kernels.TaskArg3}, {"DOORBELL", kernels.TaskDoorbell}, {"CYCLES", kernels.TaskCycles}, {"BYTES_IN", kernels.TaskBytesIn},
		{"BYTES_OUT", kernels.TaskBytesOut}, {"PACKETS", kernels.TaskPackets}, {"STALLS_IN", kernels.TaskStallsIn},
		{"STALLS_OUT", kernels.TaskStallsOut}, {"COUNT", kernels.TaskCount}} {
		w("#define %s_TASK_%s 0x%02Xu", p, r.n, r.off)
	}
	w("#define %s_TASK_VECTOR(s) ((unsigned)(s)) /* slot s's MSI-X vector: its task-end interrupt */", p)
	w("#define %s_TASK_RECORD_BYTES %du", p, kernels.TaskRecordBytes)
	w("#define %s_TASK_DONE 0x%08Xu /* completion record word 0 */", p, uint32(kernels.TaskDone))
	if len(counters) > 0 {
		w("")
		w("/* The card's counters in REG_BAR, read only, 32 bits each, saturating at all ones. */")
		w("#define %s_CARD_COUNTERS %du", p, len(counters))
		for i, n := range counters {
			w("#define %s_CARD_%s 0x%04Xu", p, ident(n), manager.RegBARCounters+4*i)
		}
	}
	w("")
	w("#endif /* %s */", guard)
	return []byte(b.String())
}

// RegsPackage is the Go package of the register map bundle writes beside
// the C header (<name>_regs.go).
const RegsPackage = "onicregs"

// goRegs is the register map as Go constants: what the C header says, for
// a driver written in Go (emu/hostif's client and a real one alike).
func goRegs(d *manager.Design, counters []string) []byte {
	name := d.Module.Name()
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("// Code generated by onic hdl gen. DO NOT EDIT.")
	w("")
	w("// Package %s is the register map of %s, as %s_regs.h and", RegsPackage, name, name)
	w("// registers.md give it: byte offsets of 32-bit registers in the O-NIC's")
	w("// register BAR (BAR %d).", pcie.ONICRegBAR)
	w("package %s", RegsPackage)
	w("")
	w("// The manager's registers.")
	w("const (")
	for _, r := range d.Registers {
		w("\t%s = 0x%03X // %s: %s", goIdent(r.Name), r.Offset, r.Access, r.Doc)
	}
	w(")")
	w("")
	w("// Values and layout.")
	w("const (")
	w("\tIDValue      = 0x%08X // ID reads this: \"ONIC\"", uint32(pmgr.IDValue))
	w("\tVersionValue = 0x%08X // VERSION reads this: major in [31:16], minor in [15:0]", uint32(pmgr.VersionValue))
	w("\tCounters     = %d // COUNT_* registers, one a pcie/manager reason", len(d.Reasons))
	w("\tVendorID     = 0x%04X", pcie.ONICVendorID)
	w("\tDeviceID     = 0x%04X", pcie.ONICDeviceID)
	w("\tRegBAR       = %d // these registers, the task shells, MSI-X, the card's counters", pcie.ONICRegBAR)
	w("\tWindowBAR    = %d // the direct translation windows", pcie.ONICWindowBAR)
	w("\tLUTBAR       = %d // the LUT window", pcie.ONICLUTBAR)
	w("\tMSIXTable    = 0x%04X // 16 bytes a vector", pcie.ONICMSIXTableOffset)
	w("\tMSIXPBA      = 0x%04X", pcie.ONICMSIXPBAOffset)
	w("\tMSIXVectors  = %d", pcie.ONICMSIXVectors)
	w(")")
	if len(counters) > 0 {
		w("")
		w("// The card's counters in the register BAR, read only, 32 bits, saturating.")
		w("const (")
		w("\tCardCounters = %d", len(counters))
		for i, n := range counters {
			w("\tCard%s = 0x%04X", goIdent(n), manager.RegBARCounters+4*i)
		}
		w(")")
	}
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		panic("bundle: the Go register map does not parse: " + err.Error()) // a bug in goRegs
	}
	return src
}

// goInitialisms are the words goIdent keeps in capitals.
var goInitialisms = map[string]bool{"ID": true, "OK": true, "LUT": true, "ACL": true, "MSIX": true, "CRC": true, "BAR": true}

// goIdent is an exported Go name for a register or counter name
// (COUNT_OK: CountOK, port_a_crc_errors: PortACRCErrors).
func goIdent(name string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' }) {
		if goInitialisms[w] {
			b.WriteString(w)
			continue
		}
		b.WriteString(w[:1] + strings.ToLower(w[1:]))
	}
	return b.String()
}

func markdown(d *manager.Design, counters []string) []byte {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("<!-- Code generated by onic hdl gen. DO NOT EDIT. -->")
	w("# Registers of %s", d.Module.Name())
	w("")
	w("32-bit registers on the AXI-Lite interface (12-bit byte addresses). Writes honour")
	w("the write strobes and always answer OKAY; writes to read-only or unmapped")
	w("addresses are ignored and unmapped addresses read 0.")
	w("")
	w("| Offset | Name | Access | Reset | Description |")
	w("|-------:|------|:------:|------:|-------------|")
	for _, r := range d.Registers {
		w("| 0x%03X | %s | %s | 0x%08X | %s |", r.Offset, r.Name, r.Access, r.Reset, strings.ReplaceAll(r.Doc, "|", `\|`))
	}
	w("")
	w("Reprogramming a LUT entry: write LUT_INDEX, LUT_ADDR_LO, LUT_ADDR_HI and")
	w("LUT_CTRL, then any value to LUT_COMMIT. Turning a direct window off or on:")
	w("write its bit in WIN_EN_LO/HI. Both take effect for TLPs arriving two")
	w("cycles after the write completes; the emulator's equivalents are")
	w("ntb.Tables.SetLUTEntry and SetWindowEnabled.")
	if d.RuleSlots > 0 {
		w("")
		w("Granting access at run time: write ACL_INDEX (a slot, 0-%d), ACL_BASE_LO/HI", d.RuleSlots-1)
		w("(a 4 KiB-aligned address), ACL_PAGES (the length in pages) and ACL_CTRL")
		w("(enabled, read, write, and the domain's index), then any value to ACL_COMMIT;")
		w("TLPs checked from the next cycle on see the rule. A rule adds to the")
		w("configured ranges of its domain: an access is allowed when a configured")
		w("range or an enabled rule of the requester's domain holds all of it with the")
		w("right it needs. Writing the slot again with ACL_CTRL's enable bit clear")
		w("revokes it. The emulator's equivalent is acl.ACL.SetRuleSlot. Domains:")
		w("")
		for i, n := range d.Domains {
			w("- %d: %s", i, n)
		}
	}
	if len(counters) > 0 {
		w("")
		w("## The card's counters")
		w("")
		w("In the register BAR (BAR %d) from 0x%04X, not on the AXI-Lite interface: 32-bit,", pcie.ONICRegBAR, manager.RegBARCounters)
		w("read only (writes are ignored), each saturating at 0xFFFFFFFF rather than")
		w("wrapping. One read of many DWs returns them in order; the rest of the region")
		w("up to 0x%04X reads 0. docs/hdl.md says what each counts.", manager.RegBARCountersEnd)
		w("")
		w("| BAR offset | Counter |")
		w("|-----------:|---------|")
		for i, n := range counters {
			w("| 0x%04X | %s |", manager.RegBARCounters+4*i, n)
		}
	}
	return []byte(b.String())
}

// lanePlan is the optical ports' lane plan: Lanes, or FLEET's.
func (o Options) lanePlan() lanes.Plan {
	if o.Lanes == (lanes.Plan{}) {
		return lanes.Default
	}
	return o.Lanes
}

// readme is the bundle's README.md: what the design is, its ports,
// clocks, registers and files, and how to build it.
//
// Long: it writes one file top to bottom, in the order the file reads.
func readme(d *manager.Design, o Options, sources []string, parts []partition, counters []string) []byte {
	plan := o.lanePlan()
	name := d.Module.Name()
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("<!-- Code generated by onic hdl gen. DO NOT EDIT. -->")
	from := "its firmware configuration."
	if o.Source != "" {
		from = o.Source + "."
	}
	if o.PCIe4 {
		w("# onic_top")
		w("")
		w("The whole O-NIC card, generated by onic from %s", from)
		w("AMD's PCIE4 block (PG213, Gen3 x16, 512-bit interfaces) sits outside it, in your")
		w("board's top: `onic_top` takes the block's CQ, CC, RQ and RC streams and")
		w("configuration status, runs the PCIe manager (`%s`) on the host's TLPs and a", name)
		w("port pipeline on each optical port's, keeps the register BAR (the manager's")
		w("registers, the kernel slots' pages, the MSI-X table, the card's counters) and")
		w("carries each optical port over a link layer to its lane interface, which a")
		w("GTY wrapper feeds. docs/hdl.md, \"The card\", describes each part.")
		w("")
		w("| | |")
		w("|---|---|")
		w("| Clocks | `user_clk` (%g MHz, the block's user clock) with `user_reset` (active high, synchronous to it); per optical port `port_<x>_tx_clk` and `port_<x>_rx_clk`, the transceiver wrapper's word clocks, crossed to `user_clk` inside |", d.ClockMHz)
		w("| PCIe | `m_axis_cq_*`, `s_axis_cc_*`, `s_axis_rq_*`, `m_axis_rc_*`, `pcie_cq_np_req`, `pcie_tfc_nph_av`, `pcie_tfc_npd_av`, `cfg_bus_number`, `cfg_function_status`, `cfg_max_payload`, `cfg_ext_*`: join them to the block's ports of the same names |")
		w("| Optical ports | `port_a_*`, `port_b_*`: 512-bit words each way (`tx_data`, `tx_ctl`, `tx_valid`, `tx_ready`; `rx_data`, `rx_ctl`, `rx_valid`), `phy_up` from the wrapper, `state` (0 down, 1 training, 2 up) |")
		w("| Lane plan | %v: %d lanes a port at %g Gb/s (64b/66b), %.4g Gb/s of words, a word every %.4g ns (`build.tcl`'s transceiver IP; docs/hdl.md, \"Lane plans\") |",
			plan, plan.Lanes, plan.LaneGbps(), plan.DataGbps(), plan.WordPS()/1000)
		w("| Status | every counter as an output too (for an ILA) and in the register BAR from 0x%04X (below) |", manager.RegBARCounters)
		w("| Manager | %d-bit data path, latency %d cycles, II %d; %d direct windows, %d LUT entries |", d.DataWidth, d.Depth, d.II, len(d.Windows), len(d.LUT.Entries))
		w("")
		w("## In Vivado")
		w("")
		if b := o.Board; b != nil {
			w("`board/` holds `%s`, the top for the %s (%s): the PCIe IP, `onic_top`", b.TopName(), b.Title, b.Part)
			w("and a GTY wrapper and transceiver IP per port, on %s (port A) and %s (port B), with", b.Cages[0].Name, b.Cages[1].Name)
			w("its XDC (`board/%s.xdc`, which names where each pin and clock comes from).", b.TopName())
			w("`vivado -mode batch -source build.tcl` builds it, in context, with the bitstreams;")
			w("set `flow` to `ooc` before sourcing the script for `onic_top` alone. `board/standin/`")
			w("is for Verilator, Icarus and Yosys only (`onic hdl check` lints the top with it).")
			w("docs/hdl.md, \"Board tops\", goes through it step by step.")
			w("")
		}
		w("1. Write your board's top: instantiate the PCIE4 IP (`onic_pcie4`, which `build.tcl`")
		w("   creates) and `onic_top`, joining the ports above by name, and per optical port the")
		w("   GTY wrapper in `%s/` (`onic_gty_tx`, `onic_gty_rx`, for this lane plan: docs/hdl.md,", GTYDir)
		w("   \"The GTY wrapper\") between its transceivers and `port_<x>_*`.")
		w("2. Set the transceiver clock periods in `onic_top.xdc` (the lane clocks) and your")
		w("   board's pins in an XDC of your own.")
		w("3. `vivado -mode batch -source build.tcl` synthesises, places and routes `onic_top`")
		w("   out of context and writes `utilization.rpt`, `timing.rpt` and the checkpoint;")
		w("   with `board_xdc`, `board_top` and `board_sources` set (see its top), it builds")
		w("   your board's top around `onic_top` instead and writes the bitstreams.")
		w("")
	} else {
		w("# %s", name)
		w("")
		w("The O-NIC's PCIe manager for the host-facing side, generated by onic from")
		w("%s", from)
		w("It checks, translates and routes every TLP from the host as the emulator's")
		w("manager model does (onic co-simulates the two TLP by TLP).")
		w("")
		w("| | |")
		w("|---|---|")
		w("| Clock | %g MHz, one clock (clk), synchronous reset (rst) |", d.ClockMHz)
		w("| Data path | %d bits per beat, a keep bit per DW |", d.DataWidth)
		w("| Latency | %d cycles from s_host_tlp to an output (%g ns) |", d.Depth, float64(d.Depth)*1000/d.ClockMHz)
		w("| Initiation interval | %d beat per cycle |", d.II)
		w("| Direct windows | %d |", len(d.Windows))
		w("| LUT entries | %d |", len(d.LUT.Entries))
		w("")
	}
	w("## Files")
	w("")
	top := strings.TrimSuffix(sources[0], ".v")
	w("- `%s.v`: the top module (Verilog-2005), and one file per module it instances", top)
	w("  (`files.f` lists them all):")
	for _, f := range sources[1:] {
		w("  - `%s`: %s", f, moduleDoc(name, strings.TrimSuffix(f, ".v")))
	}
	w("- `%s.xdc`: clock and interface constraints template.", top)
	w("- `build.tcl`: Vivado non-project build (`vivado -mode batch -source build.tcl`), part %s.", o.Part)
	if len(parts) > 0 {
		w("- `dfx/`: the black boxes of the kernel slots' modules, which `build.tcl` synthesises")
		w("  the static design around (each slot's module is a reconfigurable partition).")
	}
	w("- `%s_regs.h`, `%s_regs.go` (package %s), `registers.md`: the register map.", name, name, RegsPackage)
	w("")
	if len(parts) > 0 {
		w("## Kernel slots")
		w("")
		w("Each slot's TLPs (writes into its window or `kernel_in` range) go through the kernel")
		w("in it, and its output leaves as posted writes; its task shell is the page at")
		w("0x1000 + 0x2000 n of BAR0 (docs/hdl.md, \"Kernel slots\").")
		w("")
		w("| Slot | Kernel | Partition (cell) | Module |")
		w("|---:|---|---|---|")
		for i, pt := range parts {
			w("| %d | %s | `%s` | `%s` |", i, pt.kernel, pt.cell, pt.module)
		}
		w("")
		if parts[0].image {
			w("This is a firmware image's static region (`static/`). Each slot's module, and")
			w("the modules under it, are the image's `slot<N>/` payloads with a `files.f` of")
			w("their own (`onic fw extract` writes them next to this directory); `build.tcl`")
			w("reads them there. To simulate the whole card, read `files.f` and each slot's,")
			w("taking a module both list (`onic_axis_skid.v`) once.")
			w("")
		}
	}
	w("## Interfaces")
	w("")
	if o.PCIe4 {
		w("`%s` carries AMD's PCIE4 block's ports by the IP's own names (`m_axis_cq_*`,", top)
		w("`s_axis_cc_*`, `s_axis_rq_*`, `m_axis_rc_*`, `pcie_cq_np_req`, `cfg_*`), each optical")
		w("port's lane interface (`port_a_*`, `port_b_*`), and runs on `user_clk` and")
		w("`user_reset`. Inside it the manager's streams are these:")
		w("")
	}
	w("Each TLP stream has `_hdr` (128 bits, DW0 in [127:96], each DW in PCIe byte")
	w("order; a 3-DW header leaves [31:0] zero), `_data` (payload byte n of the beat")
	w("in bits [8n+7:8n]), `_keep` (a bit per DW), `_sop`, `_eop`, `_valid` and")
	w("`_ready`; a beat moves when valid and ready are both high. The header is")
	w("read on the start-of-packet beat. `s_host_tlp_bar` is the BAR the PCIe core")
	if o.PCIe4 {
		w("matched (0-5, 7 for none). The O-NIC's own ID is `cfg_bus_number`, device 0,")
		w("function 0: the block's physical function 0 at the bus the block captured.")
	} else {
		w("matched (0-5, 7 for none) and `self_id` the O-NIC's bus/device/function.")
	}
	w("`port_down` (bit 0 port A, bit 1 port B) is the optical ports' state.")
	w("")
	w("| Stream | Direction | Carries |")
	w("|---|---|---|")
	for _, s := range streams {
		w("| `%s` | %s | %s |", s.prefix, s.dir, s.doc)
	}
	w("")
	w("`m_cpl_tlp_hdr` is a 96-bit completion header (no data).")
	w("")
	if len(d.Windows) > 0 {
		w("## Direct windows (WIN_EN bit order)")
		w("")
		w("| Bit | Name | BAR | Offset | Size | Egress | Translated | Second port |")
		w("|---:|---|---:|---:|---:|---|---:|---|")
		for i, win := range d.Windows {
			second := ""
			if win.Failover.Kind != ntb.EgressNone {
				mode := "failover"
				if win.Multicast {
					mode = "multicast"
				}
				second = fmt.Sprintf("%s %s at 0x%X", mode, win.Failover, win.FailoverAt)
			}
			w("| %d | %s | %d | 0x%X | 0x%X | %s | 0x%X | %s |", i, win.Name, win.BAR, win.Offset, win.Size, win.Egress, win.Translated, second)
		}
		w("")
	}
	if n := len(d.LUT.Entries); n > 0 {
		mapped := 0
		for _, e := range d.LUT.Entries {
			if e.Enabled {
				mapped++
			}
		}
		w("## LUT")
		w("")
		w("%d entries of 0x%X bytes at BAR%d offset 0x%X, %d mapped by the configuration.", n, d.LUT.EntrySize, d.LUT.BAR, d.LUT.Offset, mapped)
		w("After reset the manager writes them into its table (one per cycle) before")
		w("it accepts TLPs; STATUS bit 0 says when it is done.")
		w("")
	}
	w("## Counters")
	w("")
	w("Every TLP from the host is counted once, under the reason of its outcome")
	w("(COUNT_* registers):")
	var rs []string
	for _, r := range d.Reasons {
		rs = append(rs, "`"+r.String()+"`")
	}
	w("%s.", strings.Join(rs, ", "))
	if len(counters) > 0 {
		w("")
		w("The card's other %d counters, 32 bits and saturating, are outputs of `onic_top`", len(counters))
		w("by these names and registers of BAR0 from 0x%04X, 4 bytes each in this order", manager.RegBARCounters)
		w("(registers.md gives each offset):")
		w("")
		for _, n := range counters {
			w("- `%s`", n)
		}
	}
	return []byte(b.String())
}

// moduleDoc says what a module of the manager's design is.
func moduleDoc(top, mod string) string {
	switch {
	case mod == top+"_windows":
		return "the direct-window lookup (one comparator per window, one-hot selection)"
	case mod == top+"_access":
		return "the security check (requester domains, egress rights, ranges), in the host and the port pipelines"
	case mod == top:
		return "the PCIe manager"
	case mod == "onic_top":
		return "the card on the PCIe block's user_clk and user_reset (onic_card under the IP's clock and reset names)"
	case mod == "onic_card":
		return "the card: AMD's PCIE4 interfaces around the manager's host and port pipelines, an optical link layer on each port"
	case mod == "onic_optlink":
		return "an optical port's link layer: frames, sequence numbers, LCRC, Ack/Nak and replay, credits, training"
	case mod == "onic_optlink_framer":
		return "the link layer's transmit framer (token and header slot in front, payload realigned)"
	case mod == "onic_optlink_deframer":
		return "the link layer's receive deframer (the header from the slot, payload realigned to byte 0)"
	case mod == top+"_port_in":
		return "the manager's pipeline for TLPs from the optical ports (remote DMA, completions, relays, kernel_in)"
	case mod == "onic_pcie4_rq":
		return "requests for the host to AMD PCIE4 requester requests (RQ, PG213)"
	case mod == "onic_pcie4_rc":
		return "AMD PCIE4 requester completions (RC, PG213) to the manager's host TLP stream"
	case mod == "onic_pcie4_cq":
		return "AMD PCIE4 completer requests (CQ, PG213) to the manager's host TLP stream"
	case mod == "onic_pcie4_cc":
		return "the manager's completions to AMD PCIE4 completer completions (CC, PG213)"
	case mod == top+"_regbar":
		return "the register block: BAR0's reads and writes, the manager's registers, the MSI-X table, the kernel slots' pages"
	case mod == "onic_port_tags":
		return "an optical port's requester tag table: a port tag for each non-posted request out, completions from the port matched to them"
	case mod == "onic_pcie4_tags":
		return "the requester tag table: a free local tag for each non-posted request to RQ, its own tag back on each RC completion"
	case mod == "onic_pcie4_cfg_ext":
		return "the O-NIC's description capability, answered in the PCIE4 block's user extended configuration space"
	case mod == "onic_cdc_fifo":
		return "an asynchronous FIFO (Gray-coded pointers) between user_clk and an optical port's lane clock"
	case mod == "onic_cdc_sync":
		return "a two-flip-flop synchroniser (a lane's phy_up, the reset) into another clock domain"
	case strings.HasPrefix(mod, "onic_slot") && strings.HasSuffix(mod, "_kernel"):
		return "a kernel slot's reconfigurable module: the kernel in its task shell behind the interface every slot's kernel shares"
	case strings.HasPrefix(mod, "onic_slot"):
		return "a kernel slot: its TLPs into the kernel, the kernel's output out as posted writes (after them the task shell's record and MSI-X message)"
	case strings.HasPrefix(mod, "onic_task_"):
		return "a kernel's task shell (its registers, tasks, completion record and MSI-X message; docs/kernels.md)"
	case strings.HasPrefix(mod, "onic_kernel_"):
		return "an in-network kernel (docs/kernels.md)"
	case mod == "onic_axis_skid":
		return "a full-throughput AXI-Stream register slice (parameter WIDTH: the word's bits), one instance per stream"
	case strings.HasPrefix(mod, "onic_axis_skid_"):
		return "a full-throughput AXI-Stream register slice of " + strings.TrimPrefix(mod, "onic_axis_skid_") + "-bit words"
	}
	return "a submodule"
}

// pcie4IP writes the Tcl that creates AMD's PCIE4 block (PG213) as the
// O-NIC's description gives it: Gen3 x16, the 512-bit AXI4-Stream
// interfaces at 250 MHz with straddling off (what the adapters take),
// client tags (the card assigns its own requester tags), and physical
// function 0 with the function's IDs, class and memory BARs.
func pcie4IP(w func(string, ...any), f *pcie.Function, standIns []manager.StandIn, b *board.Board) {
	w("")
	w("# AMD's PCIE4 block (pcie4_uscale_plus, PG213), configured as the O-NIC's")
	w("# description gives it. onic_top connects to its CQ, CC, RQ, RC,")
	w("# pcie_cq_np_req, pcie_tfc_nph_av, pcie_tfc_npd_av, pcie_rq_seq_num0,")
	w("# cfg_bus_number, cfg_function_status, cfg_max_payload, cfg_interrupt_msix_*,")
	w("# cfg_interrupt_msi_* and cfg_ext_* ports by name in the board's top.")
	w("set ipdir [file join $dir ip]")
	w("file mkdir $ipdir")
	ipName := "pcie4_uscale_plus"
	if b != nil {
		ipName = b.PCIe.IP
		w("# On the %s: %s, placed as the board has it.", b.Title, ipName)
	}
	w("create_ip -name %s -vendor xilinx.com -library ip -module_name onic_pcie4 -dir $ipdir", ipName)
	w("set_property -dict [list \\")
	props := [][2]string{
		{"PL_LINK_CAP_MAX_LINK_SPEED", "8.0_GT/s"},
		{"PL_LINK_CAP_MAX_LINK_WIDTH", "X16"},
		{"axisten_if_width", "512_bit"},
		{"axisten_freq", "250"},
		{"AXISTEN_IF_EXT_512_CQ_STRADDLE", "false"},
		{"AXISTEN_IF_EXT_512_CC_STRADDLE", "false"},
		{"AXISTEN_IF_EXT_512_RQ_STRADDLE", "false"},
		{"AXISTEN_IF_EXT_512_RC_STRADDLE", "false"},
		{"axisten_if_enable_client_tag", "true"},
		// The standard header's IDs (§7.5.1.1), as the function holds them.
		{"vendor_id", fmt.Sprintf("%04x", f.Space.Read16(0x00))},
		{"PF0_DEVICE_ID", fmt.Sprintf("%04x", f.Space.Read16(0x02))},
		{"PF0_REVISION_ID", fmt.Sprintf("%02x", f.Space.Read8(0x08))},
		{"PF0_CLASS_CODE", fmt.Sprintf("%06x", f.Space.Read32(0x08)>>8)},
		{"PF0_SUBSYSTEM_VENDOR_ID", fmt.Sprintf("%04x", f.Space.Read16(0x2c))},
		{"PF0_SUBSYSTEM_ID", fmt.Sprintf("%04x", f.Space.Read16(0x2e))},
		{"PF0_MSI_CAP_MULTIMSGCAP", "32_vectors"},
		{"en_msi_per_vec_masking", "true"},
		// MSI-X with the table and PBA in the application (PG213, "MSI-X
		// External"): the card's register block keeps the table in the
		// register BAR and its MSI-X controller the PBA, and sends each
		// message through cfg_interrupt_msix_* (docs/hdl.md, "Interrupts").
		{"mode_selection", "Advanced"},
		{"pf0_msix_enabled", "true"},
		{"MSI_X_OPTIONS", "MSI-X_External"},
		{"PF0_MSIX_CAP_TABLE_SIZE", fmt.Sprintf("%03X", pcie.ONICMSIXVectors-1)},
		{"PF0_MSIX_CAP_TABLE_BIR", barIndicator(f, pcie.ONICRegBAR)},
		{"PF0_MSIX_CAP_TABLE_OFFSET", fmt.Sprintf("%08X", pcie.ONICMSIXTableOffset)},
		{"PF0_MSIX_CAP_PBA_BIR", barIndicator(f, pcie.ONICRegBAR)},
		{"PF0_MSIX_CAP_PBA_OFFSET", fmt.Sprintf("%08X", pcie.ONICMSIXPBAOffset)},
		// The user extended configuration space (PG213, "Configuration
		// Extend Interface"): the block chains its capabilities to 0x480
		// and onic_top's cfg_ext_* ports answer there with the O-NIC's
		// description capability.
		{"ext_pcie_cfg_space_enabled", "true"},
	}
	props = append(props, barProps(0, f)...)
	props = append(props, boardIPProps(b)...)
	if len(standIns) > 0 {
		// The stand-ins of lent devices: physical functions 1 to 3, each
		// with its device's IDs, class and BARs. Their configuration
		// space is the block's: capabilities are the block's, not copies
		// of the device's (docs/hdl.md, "Stand-ins for lent devices"),
		// except MSI-X for a loan with an MSI window: external, where the
		// device has its table and PBA, so the host programs the
		// device's own table through the stand-in's BAR (the manager
		// rewrites the addresses through the window on the way).
		props = append(props, [2]string{"TL_PF_ENABLE_REG", fmt.Sprint(1 + len(standIns))})
		for i, si := range standIns {
			sf, pf := si.Function, i+1
			props = append(props,
				[2]string{fmt.Sprintf("pf%d_vendor_id", pf), fmt.Sprintf("%04x", sf.Space.Read16(0x00))},
				[2]string{fmt.Sprintf("PF%d_DEVICE_ID", pf), fmt.Sprintf("%04x", sf.Space.Read16(0x02))},
				[2]string{fmt.Sprintf("PF%d_REVISION_ID", pf), fmt.Sprintf("%02x", sf.Space.Read8(0x08))},
				[2]string{fmt.Sprintf("PF%d_CLASS_CODE", pf), fmt.Sprintf("%06x", sf.Space.Read32(0x08)>>8)},
				[2]string{fmt.Sprintf("PF%d_SUBSYSTEM_VENDOR_ID", pf), fmt.Sprintf("%04x", sf.Space.Read16(0x2c))},
				[2]string{fmt.Sprintf("PF%d_SUBSYSTEM_ID", pf), fmt.Sprintf("%04x", sf.Space.Read16(0x2e))})
			props = append(props, barProps(pf, sf)...)
			if bar, off, end := sf.MSIXTable(); si.MSI != nil && bar >= 0 {
				pba := sf.Space.Read32(sf.CapOffset(pcie.CapMSIX, false) + 8)
				props = append(props,
					[2]string{fmt.Sprintf("pf%d_msix_enabled", pf), "true"},
					[2]string{fmt.Sprintf("PF%d_MSIX_CAP_TABLE_SIZE", pf), fmt.Sprintf("%03X", (end-off)/16-1)},
					[2]string{fmt.Sprintf("PF%d_MSIX_CAP_TABLE_BIR", pf), barIndicator(sf, bar)},
					[2]string{fmt.Sprintf("PF%d_MSIX_CAP_TABLE_OFFSET", pf), fmt.Sprintf("%08X", off)},
					[2]string{fmt.Sprintf("PF%d_MSIX_CAP_PBA_BIR", pf), barIndicator(sf, int(pba&7))},
					[2]string{fmt.Sprintf("PF%d_MSIX_CAP_PBA_OFFSET", pf), fmt.Sprintf("%08X", pba&^7)})
			}
		}
	}
	for _, p := range props {
		w("    CONFIG.%s {%s} \\", p[0], p[1])
	}
	w("] [get_ips onic_pcie4]")
	w("generate_target all [get_ips onic_pcie4]")
	w("synth_ip [get_ips onic_pcie4]")
}

// gtIP writes the optical ports' transceiver IP: per port, a
// gtwizard_ultrascale of the lane plan's GTY channels at its line rate,
// with the 64B/66B asynchronous gearbox and the generated GTY wrapper's
// data widths (designs/internal/gty: 64 bits a lane, 32 with 16 lanes).
// Without a board, on placeholder channels and reference clock, set at
// the top of the block (the top joining the IP, the wrapper and onic_top
// is the user's, docs/hdl.md). With a board, on its cages' channels and
// reference clocks, QPLL0, and the reference clock as the reset logic's
// free-running clock (the board top's).
func gtIP(w func(string, ...any), plan lanes.Plan, b *board.Board) {
	w("")
	w("# The optical ports' transceivers (gtwizard_ultrascale, PG182), lane plan")
	ub := board.UserBits(plan)
	w("# %v: per port %d GTY channels at %g Gb/s, %d bits a lane", plan, plan.Lanes, plan.LaneGbps(), ub)
	if b == nil {
		w("# a user clock, with the asynchronous 64B/66B gearbox (docs/hdl.md, \"Lane")
		w("# plans\"). The channels and the reference clock are the board's: the ones")
		w("# below are placeholders. The GTY wrapper between each IP and onic_top's")
		w("# port_<x>_* lane interface is %s/'s; the top joining them is yours.", GTYDir)
		for i, port := range []string{"port_a", "port_b"} {
			var ch []string
			for l := range plan.Lanes {
				ch = append(ch, fmt.Sprintf("X0Y%d", i*plan.Lanes+l))
			}
			w("set gt_channels(%s) {%s}", port, strings.Join(ch, " "))
			w("set gt_refclk_mhz(%s) 156.25", port)
		}
	} else {
		w("# a user clock, with the asynchronous 64B/66B gearbox, on the %s's cages", b.Title)
		w("# (docs/hdl.md, \"Board tops\"); the GTY wrapper is %s's.", b.TopName())
		for i, port := range []string{"port_a", "port_b"} {
			ch, mhz := gtChannels(b, i, plan.Lanes)
			w("set gt_channels(%s) {%s}", port, ch)
			w("set gt_refclk_mhz(%s) %s", port, fmtMHz(mhz))
		}
	}
	encoding := "64B66B_ASYNC"
	w("foreach port {port_a port_b} {")
	w("    set gt onic_${port}_gt")
	w("    create_ip -name gtwizard_ultrascale -vendor xilinx.com -library ip -module_name $gt -dir $ipdir")
	w("    set_property -dict [list \\")
	props := [][2]string{
		{"GT_TYPE", "{GTY}"},
		{"CHANNEL_ENABLE", "$gt_channels($port)"},
		{"TX_MASTER_CHANNEL", "[lindex $gt_channels($port) 0]"},
		{"RX_MASTER_CHANNEL", "[lindex $gt_channels($port) 0]"},
		{"TX_LINE_RATE", fmt.Sprintf("{%g}", plan.LaneGbps())},
		{"RX_LINE_RATE", fmt.Sprintf("{%g}", plan.LaneGbps())},
		{"TX_REFCLK_FREQUENCY", "$gt_refclk_mhz($port)"},
		{"RX_REFCLK_FREQUENCY", "$gt_refclk_mhz($port)"},
		{"TX_DATA_ENCODING", "{" + encoding + "}"},
		{"RX_DATA_DECODING", "{" + encoding + "}"},
		{"TX_USER_DATA_WIDTH", fmt.Sprintf("{%d}", ub)},
		{"RX_USER_DATA_WIDTH", fmt.Sprintf("{%d}", ub)},
		{"TX_INT_DATA_WIDTH", fmt.Sprintf("{%d}", ub)},
		{"RX_INT_DATA_WIDTH", fmt.Sprintf("{%d}", ub)},
	}
	if b != nil {
		// The helper blocks the board top's ports belong to in the core
		// (user clocking, reset controller), and the PMA reset-done
		// outputs it holds the user clocks in reset by, which the wizard
		// leaves out unless asked (PG182, optional ports).
		props = append(props, [2]string{"TX_PLL_TYPE", "{QPLL0}"}, [2]string{"RX_PLL_TYPE", "{QPLL0}"},
			[2]string{"FREERUN_FREQUENCY", "$gt_refclk_mhz($port)"},
			[2]string{"LOCATE_TX_USER_CLOCKING", "{CORE}"}, [2]string{"LOCATE_RX_USER_CLOCKING", "{CORE}"},
			[2]string{"LOCATE_RESET_CONTROLLER", "{CORE}"},
			[2]string{"ENABLE_OPTIONAL_PORTS", "{rxpmaresetdone_out txpmaresetdone_out}"})
	}
	for _, p := range props {
		w("        CONFIG.%s %s \\", p[0], p[1])
	}
	w("    ] [get_ips $gt]")
	w("    generate_target all [get_ips $gt]")
	w("    synth_ip [get_ips $gt]")
	w("}")
}

// barProps are the IP's settings of physical function pf's memory BARs,
// as f has them.
func barProps(pf int, f *pcie.Function) [][2]string {
	var props [][2]string
	for i, b := range f.BARs {
		if b.Kind != pcie.BARMem32 && b.Kind != pcie.BARMem64 {
			continue
		}
		scale, size := barScale(b.Size)
		bar := fmt.Sprintf("pf%d_bar%d_", pf, i)
		props = append(props, [2]string{bar + "enabled", "true"}, [2]string{bar + "type", "Memory"},
			[2]string{bar + "64bit", fmt.Sprint(b.Kind == pcie.BARMem64)}, [2]string{bar + "prefetchable", fmt.Sprint(b.Prefetchable)},
			[2]string{bar + "scale", scale}, [2]string{bar + "size", fmt.Sprint(size)})
	}
	return props
}

// barIndicator is how the IP names BAR i of f in its MSI-X settings: a
// 64-bit BAR by both its registers (BAR_1:0).
func barIndicator(f *pcie.Function, i int) string {
	if f.BARs[i].Kind == pcie.BARMem64 {
		return fmt.Sprintf("BAR_%d:%d", i+1, i)
	}
	return fmt.Sprintf("BAR_%d", i)
}

// barScale writes a BAR size as the IP's scale and size: the largest unit
// that divides it.
func barScale(n uint64) (string, uint64) {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return "Gigabytes", n >> 30
	case n >= 1<<20 && n%(1<<20) == 0:
		return "Megabytes", n >> 20
	case n >= 1<<10 && n%(1<<10) == 0:
		return "Kilobytes", n >> 10
	}
	return "Bytes", n
}
