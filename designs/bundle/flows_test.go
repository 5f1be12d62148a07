package bundle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// vivadoMock is Tcl standing in for Vivado's commands: each one build.tcl
// runs is recorded, a line a call, and the object queries hand back the
// names they were given.
const vivadoMock = `
set calls {}
proc unknown {args} { lappend ::calls $args; return "" }
proc get_cells {c} { return $c }
proc get_pblocks {p} { return $p }
proc get_ips {i} { return $i }
`

// runFlow sources the card's golden build.tcl in tclsh against
// vivadoMock, with the variables of preset set first, and returns the
// Vivado commands it ran (one a line, the build's directory as DIR) or
// the error it stopped with.
func runFlow(t *testing.T, preset string) (calls []string, err string) {
	t.Helper()
	src, rerr := os.ReadFile(filepath.Join("testdata", "card", "build.tcl"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	return runFlowSrc(t, src, preset)
}

// runFlowSrc is runFlow for the build.tcl src.
func runFlowSrc(t *testing.T, src []byte, preset string) (calls []string, err string) {
	t.Helper()
	tclsh := tools.Require(t, "tclsh")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "build.tcl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	driver := vivadoMock + preset + `
if {[catch {source [file join [lindex $argv 0] build.tcl]} msg]} { puts "error: $msg"; exit }
foreach c $calls { puts $c }
`
	p := filepath.Join(dir, "driver.tcl")
	if err := os.WriteFile(p, []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	out, xerr := exec.Command(tclsh, p, dir).CombinedOutput()
	if xerr != nil {
		t.Fatalf("tclsh: %v\n%s", xerr, out)
	}
	s := strings.ReplaceAll(string(out), dir, "DIR")
	if e, ok := strings.CutPrefix(s, "error: "); ok {
		return nil, strings.TrimSpace(e)
	}
	return strings.Split(strings.TrimSpace(s), "\n"), ""
}

// TestBuildTclFlows runs the card's build.tcl against a mocked Vivado in
// each of its flows and holds what it reads and synthesises: out of
// context, every file of files.f and each slot's kernel on its own, the
// card's top with its out-of-context constraints; for a board, the
// board's top from its sources and constraints, with the partitions
// found under the card's instance and the bitstreams written; and a
// board's constraints without its top are refused, naming what to set.
func TestBuildTclFlows(t *testing.T) {
	files, err := os.ReadFile(filepath.Join("testdata", "card", "files.f"))
	if err != nil {
		t.Fatal(err)
	}
	has := func(calls []string, line string) bool {
		for _, c := range calls {
			if c == line {
				return true
			}
		}
		return false
	}
	const synthTop = "synth_design -top onic_top -part xcvu9p-flga2104-2L-e -mode out_of_context"

	ooc, msg := runFlow(t, "")
	if msg != "" {
		t.Fatalf("out of context: %s", msg)
	}
	want := []string{synthTop, "read_xdc -mode out_of_context DIR/onic_top.xdc", "create_ip -name pcie4_uscale_plus -vendor xilinx.com -library ip -module_name onic_pcie4 -dir DIR/ip",
		"set_property HD.RECONFIGURABLE true card/slot0_kernel", "read_checkpoint -cell card/slot3_kernel DIR/onic_slot3_kernel_EMPTY_synth.dcp", "route_design"}
	for k := range 4 {
		want = append(want, "synth_design -top onic_slot"+string(rune('0'+k))+"_kernel -part xcvu9p-flga2104-2L-e -mode out_of_context")
	}
	for _, f := range strings.Fields(string(files)) {
		want = append(want, "read_verilog DIR/"+f)
	}
	for _, w := range want {
		if !has(ooc, w) {
			t.Errorf("out of context: no %q", w)
		}
	}
	for _, c := range ooc {
		if strings.HasPrefix(c, "write_bitstream") {
			t.Errorf("out of context: %q", c)
		}
	}

	board, msg := runFlow(t, "set board_xdc /b/board.xdc\nset board_top onic_board_u250\nset board_sources {/b/top.v /b/gt.v}\n")
	if msg != "" {
		t.Fatalf("board: %s", msg)
	}
	for _, w := range []string{"read_verilog /b/top.v", "read_verilog /b/gt.v", "read_xdc /b/board.xdc",
		"synth_design -top onic_board_u250 -part xcvu9p-flga2104-2L-e",
		"set_property HD.RECONFIGURABLE true onic/card/slot0_kernel", "add_cells_to_pblock pblock_card_slot2_kernel onic/card/slot2_kernel",
		"write_bitstream -force DIR/onic_top.bit"} {
		if !has(board, w) {
			t.Errorf("board: no %q", w)
		}
	}
	for _, c := range board {
		if c == synthTop || strings.Contains(c, "onic_top.xdc") {
			t.Errorf("board: %q (the card out of context)", c)
		}
	}

	if _, msg := runFlow(t, "set board_xdc /b/board.xdc\n"); !strings.Contains(msg, "set board_top to your board's top module") {
		t.Errorf("board constraints without a top: %q", msg)
	}
}
