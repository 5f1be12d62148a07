package bundle_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"onic/designs/bundle"
	"onic/emu/scenario"
	"onic/hdlgen/check"
	"onic/internal/tbrun"
	"onic/testbenches/golden"
	"onic/testbenches/tools"
)

// boardBundle writes the two-party O-NIC's card with board name's top
// into a fresh directory (the alignment markers markerWords apart; zero:
// the default) and returns it with the files written, relative to it.
func boardBundle(t *testing.T, name string, markerWords int) (string, []string) {
	t.Helper()
	b, err := bundle.LookupBoard(name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := bundle.Write(dir, design(t, scenario.TwoParty().ONICs[0].Manager), bundle.Options{Part: b.Part, PCIe4: true,
		Function: onicFunction(t), Board: &b, Lanes: bundle.BoardPlan, BoardMarkerWords: markerWords})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, p := range paths {
		r, _ := filepath.Rel(dir, p)
		rel = append(rel, r)
	}
	return dir, rel
}

// boardSources are a board bundle's Verilog for a simulator: the card's
// (files.f), the board's and the stand-ins'.
func boardSources(t *testing.T, dir string, files []string) []string {
	t.Helper()
	var vs []string
	for _, f := range files {
		if strings.HasSuffix(f, ".v") && !strings.HasPrefix(f, bundle.DFXDir+"/") {
			vs = append(vs, f)
		}
	}
	return vs
}

// TestBoardTops: for every board preset, the board top onic hdl gen
// --board writes — the PCIe IP, onic_top, a GTY wrapper and transceiver
// IP per port — with its GTY wrapper modules and the stand-ins for AMD's
// IP and primitives, is clean under Verilator -Wall and compiles under
// Icarus; its XDC places the board's PCIe reference clock and PERST#
// and each cage's reference clock; build.tcl creates the board's PCIe IP
// (pcie4c_uscale_plus on the U55C) on the board's block and quad and the
// transceiver IP on the cages' channels with the asynchronous gearbox.
func TestBoardTops(t *testing.T) {
	verilator := tools.Require(t, "verilator")
	iverilog := tools.Require(t, "iverilog")
	for _, name := range bundle.BoardNames() {
		t.Run(name, func(t *testing.T) {
			b, _ := bundle.LookupBoard(name)
			dir, files := boardBundle(t, name, 0)
			vs := boardSources(t, dir, files)
			var abs []string
			for _, v := range vs {
				abs = append(abs, filepath.Join(dir, v))
			}
			if msg := check.Lint(verilator, b.TopName(), abs); msg != "" {
				t.Errorf("verilator:\n%s", msg)
			}
			if out, err := runIn(dir, iverilog, append([]string{"-g2005", "-Wall", "-o", "/dev/null"}, vs...)...); err != nil || out != "" {
				t.Errorf("icarus: %v\n%s", err, out)
			}
			x, err := os.ReadFile(filepath.Join(dir, "board", b.TopName()+".xdc"))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{
				"set_property PACKAGE_PIN " + b.PCIe.RefclkP + " [get_ports pcie_refclk_p]",
				"PACKAGE_PIN " + b.PCIe.Perst + " IOSTANDARD " + b.PCIe.PerstIO,
				"set_property PACKAGE_PIN " + b.Cages[0].RefclkP + " [get_ports " + strings.ToLower(b.Cages[0].Name) + "_refclk_p]",
				"set_property PACKAGE_PIN " + b.Cages[1].RefclkP + " [get_ports " + strings.ToLower(b.Cages[1].Name) + "_refclk_p]",
			} {
				if !strings.Contains(string(x), w) {
					t.Errorf("xdc: no %q", w)
				}
			}
			// The card answers the block's user extended space where the
			// board's block hands it over (the U55C's PCIE4C: 0xE80).
			ext, err := os.ReadFile(filepath.Join(dir, "onic_pcie4_cfg_ext.v"))
			if err != nil {
				t.Fatal(err)
			}
			if first := fmt.Sprintf("11'h%x", b.PCIe.ExtConfigBase/4); b.PCIe.ExtConfigBase != 0x480 && !strings.Contains(string(ext), first) {
				t.Errorf("onic_pcie4_cfg_ext.v does not start its space at Dword %s", first)
			} else if b.PCIe.ExtConfigBase == 0x480 && !strings.Contains(string(ext), "cfg_ext_register_number[9:5] == 5'h9") {
				t.Error("onic_pcie4_cfg_ext.v does not answer 0x480-0x4FF")
			}
			tcl, err := os.ReadFile(filepath.Join(dir, "build.tcl"))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				"create_ip -name " + b.PCIe.IP + " ",
				"set gt_channels(port_a) {" + strings.Join(b.Cages[0].Channels, " ") + "}",
				"set gt_channels(port_b) {" + strings.Join(b.Cages[1].Channels, " ") + "}",
				fmt.Sprintf("set gt_refclk_mhz(port_a) %g", b.Cages[0].RefclkMHz),
				"CONFIG.TX_DATA_ENCODING {64B66B_ASYNC}",
				"CONFIG.select_quad {" + b.PCIe.Quad + "}",
				"set part " + b.Part,
				"if {![info exists board_top]} { set board_top " + b.TopName() + " }",
			}
			if b.PCIe.Block != "" {
				want = append(want, "CONFIG.pcie_blk_locn {"+b.PCIe.Block+"}")
			}
			for _, w := range want {
				if !strings.Contains(string(tcl), w) {
					t.Errorf("build.tcl: no %q", w)
				}
			}
		})
	}
}

// TestBoardTopFromReset simulates every preset's board top under Icarus
// from time 0 with PERST# asserted and then released: the PCIe block's
// stand-in idles, each port's transceiver stand-in loops its lanes back.
// Both ports' GTY wrappers lock and bond their four lanes and each
// port's link layer, hearing itself, trains and comes up and stays up,
// with nothing in the card's link error counters and the QSFP modules
// (where the FPGA drives them) out of reset in high-power mode.
func TestBoardTopFromReset(t *testing.T) {
	iverilog := tools.Require(t, "iverilog")
	vvp := tools.Require(t, "vvp")
	for _, name := range bundle.BoardNames() {
		t.Run(name, func(t *testing.T) {
			b, _ := bundle.LookupBoard(name)
			dir, files := boardBundle(t, name, 16)
			var conns, decls, side []string
			for i, cg := range b.Cages {
				q := strings.ToLower(cg.Name)
				conns = append(conns, fmt.Sprintf(".%s_refclk_p(qsfp_refclk), .%s_refclk_n(~qsfp_refclk), .%s_rxp(4'h0), .%s_rxn(4'hf), .%s_txp(txp%d), .%s_txn(txn%d)", q, q, q, q, q, i, q, i))
				decls = append(decls, fmt.Sprintf("wire [3:0] txp%d, txn%d;", i, i))
				if cg.ResetL != "" {
					conns = append(conns, fmt.Sprintf(".%s_resetl(resetl%d), .%s_lpmode(lpmode%d)", q, i, q, i))
					decls = append(decls, fmt.Sprintf("wire resetl%d, lpmode%d;", i, i))
					side = append(side, fmt.Sprintf("resetl%d", i), fmt.Sprintf("~lpmode%d", i))
				}
			}
			sideOK := "1'b1"
			if len(side) > 0 {
				sideOK = "&{" + strings.Join(side, ", ") + "}"
			}
			tb := "`timescale 1ns/1ps\n" + `
module tb;
    reg pcie_refclk = 1'b0;
    reg qsfp_refclk = 1'b0;
    reg perst_n = 1'b0;
    always #5 pcie_refclk = ~pcie_refclk;
    always #3.2 qsfp_refclk = ~qsfp_refclk;
    wire [15:0] txp, txn;
    ` + strings.Join(decls, "\n    ") + `
    ` + b.TopName() + ` dut (
        .pcie_refclk_p(pcie_refclk), .pcie_refclk_n(~pcie_refclk), .pcie_perst_n(perst_n),
        .pci_exp_rxp(16'h0), .pci_exp_rxn(16'hffff), .pci_exp_txp(txp), .pci_exp_txn(txn),
        ` + strings.Join(conns, ",\n        ") + `);
    integer f, i;
    initial begin
        f = $fopen("out.log", "w");
        #200 perst_n = 1'b1;
        for (i = 0; i < 60; i = i + 1) begin
            #1000 $fdisplay(f, "t %0d a %0d %0d b %0d %0d", i, dut.port_a_phy_up, dut.onic.port_a_state, dut.port_b_phy_up, dut.onic.port_b_state);
        end
        $fdisplay(f, "sideband %0d", ` + sideOK + `);
        $fdisplay(f, "counters %0d %0d %0d %0d %0d %0d", dut.onic.port_a_crc_errors, dut.onic.port_a_lost, dut.onic.port_a_malformed,
            dut.onic.port_b_crc_errors, dut.onic.port_b_lost, dut.onic.port_b_malformed);
        $fclose(f);
        $finish;
    end
endmodule
`
			if err := os.WriteFile(filepath.Join(dir, "tb.v"), []byte(tb), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			lines, err := tbrun.IcarusGen(dir, boardSources(t, dir, files), iverilog, vvp, "2012")
			if err != nil {
				t.Fatal(err)
			}
			upAt := -1
			for i, l := range lines {
				var n, au, as, bu, bs int
				if _, err := fmt.Sscanf(l, "t %d a %d %d b %d %d", &n, &au, &as, &bu, &bs); err != nil {
					continue
				}
				if au == 1 && bu == 1 && as == 2 && bs == 2 {
					if upAt < 0 {
						upAt = i
					}
				} else if upAt >= 0 {
					t.Fatalf("a port fell at %d us after coming up at %d us: %s", i, upAt, l)
				}
			}
			if upAt < 0 {
				t.Fatalf("ports never up:\n%s", strings.Join(lines, "\n"))
			}
			if got := lines[len(lines)-2]; got != "sideband 1" {
				t.Errorf("QSFP sideband: %s", got)
			}
			if got := lines[len(lines)-1]; got != "counters 0 0 0 0 0 0" {
				t.Errorf("link counters: %s", got)
			}
			t.Logf("both ports up %d us after PERST# released (60 us simulated in %v)", upAt, time.Since(start).Round(time.Millisecond))
		})
	}
}

// runIn runs name with args in dir and returns what it printed.
func runIn(dir, name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestBoardBuildFlows runs a board bundle's build.tcl against the mocked
// Vivado: by default it reads the card's and the board's sources and the
// board's XDC, creates the board's PCIe IP, synthesises the board top in
// context and writes the bitstreams; with flow set to ooc it builds
// onic_top alone out of context, reading no board file; another flow is
// refused, naming the two.
func TestBoardBuildFlows(t *testing.T) {
	b, _ := bundle.LookupBoard("u55c")
	dir, _ := boardBundle(t, "u55c", 0)
	src, err := os.ReadFile(filepath.Join(dir, "build.tcl"))
	if err != nil {
		t.Fatal(err)
	}
	has := func(calls []string, line string) bool { return slices.Contains(calls, line) }
	calls, msg := bundle.RunFlow(t, src, "")
	if msg != "" {
		t.Fatalf("board flow: %s", msg)
	}
	for _, w := range []string{
		"read_verilog DIR/onic_top.v", "read_verilog DIR/board/" + b.TopName() + ".v", "read_verilog DIR/board/onic_gty_tx.v",
		"read_verilog DIR/board/onic_gty_rx.v", "read_xdc DIR/board/" + b.TopName() + ".xdc",
		"create_ip -name pcie4c_uscale_plus -vendor xilinx.com -library ip -module_name onic_pcie4 -dir DIR/ip",
		"synth_design -top " + b.TopName() + " -part " + b.Part, "set_property HD.RECONFIGURABLE true onic/card/slot0_kernel",
		"write_bitstream -force DIR/onic_top.bit",
	} {
		if !has(calls, w) {
			t.Errorf("board flow: no %q", w)
		}
	}
	for _, c := range calls {
		if strings.Contains(c, "standin") {
			t.Errorf("board flow reads a stand-in: %q", c)
		}
	}
	ooc, msg := bundle.RunFlow(t, src, "set flow ooc\n")
	if msg != "" {
		t.Fatalf("ooc: %s", msg)
	}
	if !has(ooc, "synth_design -top onic_top -part "+b.Part+" -mode out_of_context") {
		t.Error("ooc: onic_top not synthesised out of context")
	}
	for _, c := range ooc {
		if strings.Contains(c, "/board/") || strings.HasPrefix(c, "write_bitstream") {
			t.Errorf("ooc: %q", c)
		}
	}
	if _, msg := bundle.RunFlow(t, src, "set flow fast\n"); !strings.Contains(msg, "set flow to ooc") {
		t.Errorf("flow fast: %q", msg)
	}
}

// TestGoldenBoard: the U250 board top onic hdl gen --board u250 writes
// for the default scenario's O-NIC — the top, its XDC, the GTY wrapper's
// modules and the stand-ins, and the build.tcl that builds it — matches
// its golden copy in testdata/board-u250 (the card's own files are
// TestGoldenCard's), and a second generation is byte-identical.
func TestGoldenBoard(t *testing.T) {
	b, _ := bundle.LookupBoard("u250")
	gen := func() []bundle.File {
		return defaultCardFiles(t, func(o *bundle.Options) { o.Part, o.Board, o.Lanes = b.Part, &b, bundle.BoardPlan })
	}
	fs, again := gen(), gen()
	n := 0
	for i, f := range fs {
		if !strings.HasPrefix(f.Name, "board/") && f.Name != "build.tcl" && f.Name != "README.md" {
			continue
		}
		n++
		golden.Check(t, filepath.Join("testdata", "board-u250", f.Name), string(f.Data))
		if string(again[i].Data) != string(f.Data) {
			t.Errorf("%s differs between two generations", f.Name)
		}
	}
	if n < 9 {
		t.Errorf("%d board files", n)
	}
}

var boardSynth = flag.Bool("board-synth", false, "synthesise every board top with Yosys (minutes each; make soak)")

// TestBoardSynth (make soak: -board-synth) synthesises each preset's
// board top with Yosys's synth_xilinx as onic hdl check does (the PCIe
// and transceiver IP and the clock primitives black boxes, their
// stand-ins giving the ports): the
// card and the GTY wrappers are kept whole (they drive the IPs), each IP
// is one cell, and the table in docs/hdl.md ("Board tops") is what it
// logs.
func TestBoardSynth(t *testing.T) {
	if !*boardSynth {
		t.Skip("minutes of Yosys a board: make soak runs it (-board-synth)")
	}
	for _, name := range bundle.BoardNames() {
		t.Run(name, func(t *testing.T) {
			b, _ := bundle.LookupBoard(name)
			dir, files := boardBundle(t, name, 0)
			var srcs, lib []string
			for _, f := range boardSources(t, dir, files) {
				if strings.HasPrefix(f, "board/standin/") {
					lib = append(lib, filepath.Join(dir, f))
				} else {
					srcs = append(srcs, filepath.Join(dir, f))
				}
			}
			// The cells docs/hdl.md's card figures are in (onic hdl check's
			// default), the IP and the clock primitives black boxes.
			start := time.Now()
			r, err := check.SynthFiles(srcs, b.TopName(), check.Options{BlackBoxes: lib})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("| `%s` | %d | %d | %d | %d | %d | %.0f MHz (%s to %s) | %v", name, r.LUT, r.FF, r.LUTRAM, r.BRAM, r.URAM, r.Timing.EstMHz, r.Timing.From, r.Timing.To, time.Since(start).Round(time.Second))
			if r.LUT < 20000 || r.FF < 20000 {
				t.Errorf("%s: %d LUTs, %d flip-flops: the card was not kept", name, r.LUT, r.FF)
			}
		})
	}
}
