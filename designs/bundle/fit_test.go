package bundle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// fakePart is Tcl standing in for Vivado's device queries onic_fit makes:
// a part of 6 x 15 clock regions, each with 1,000 slices, 24 RAMB36 and
// 80 DSP48E2 sites, but column 5, which has no DSPs.
const fakePart = `
proc get_clock_regions {} {
    set l {}
    for {set y 0} {$y < 15} {incr y} { for {set x 0} {$x < 6} {incr x} { lappend l X${x}Y${y} } }
    return $l
}
proc get_property {p cr} {
    regexp {X(\d+)Y(\d+)} $cr -> x y
    if {$p eq "COLUMN_INDEX"} { return $x }
    return $y
}
proc get_sites {args} {
    set cr [lindex $args [expr {[lsearch $args -of_objects] + 1}]]
    set f [lindex $args [expr {[lsearch $args -filter] + 1}]]
    regexp {X(\d+)Y(\d+)} $cr -> x y
    switch -glob -- $f {
        *SLICE* { set n 1000 }
        *RAMB36* { set n 24 }
        *DSP48E2* { set n [expr {$x == 5 ? 0 : 80}] }
    }
    set l {}
    for {set i 0} {$i < $n} {incr i} { lappend l s$i }
    return $l
}
`

// TestFitPblocks runs build.tcl's onic_fit in tclsh against fakePart:
// each region gets the first rectangle from the next free row that holds
// it (a row of five regions for 40,000 LUTs; 401 DSPs, one more than a
// row has, take two rows of three), and one the part cannot hold is an
// error naming it.
func TestFitPblocks(t *testing.T) {
	tclsh := tools.Require(t, "tclsh")
	script := fakePart + fitProc + `
foreach need {{40000 80000 60 120} {40000 80000 60 120} {100000 1 1 1} {8000 16000 24 80} {1 1 1 401}} {
    lassign [onic_fit $need $onic_row] range onic_row
    puts "$range $onic_row"
}
if {[catch {onic_fit {2000000 1 1 1} 0} msg]} { puts "error: $msg" }
`
	p := filepath.Join(t.TempDir(), "fit.tcl")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tclsh, p).CombinedOutput()
	if err != nil {
		t.Fatalf("tclsh: %v\n%s", err, out)
	}
	want := `CLOCKREGION_X0Y0:CLOCKREGION_X4Y0 1
CLOCKREGION_X0Y1:CLOCKREGION_X4Y1 2
CLOCKREGION_X0Y2:CLOCKREGION_X4Y4 5
CLOCKREGION_X0Y5:CLOCKREGION_X0Y5 6
CLOCKREGION_X0Y6:CLOCKREGION_X2Y7 8
error: onic_fit: the part has no clock regions from row 0 up that hold 2000000 1 1 1 (LUT FF RAMB36 DSP)
`
	if string(out) != want {
		t.Errorf("onic_fit:\n%s\nwant\n%s", out, want)
	}
}

// TestBuildTclParses: every build.tcl the bundle writes for a card with
// sized and placeholder pblocks is complete Tcl (braces and quotes
// balanced), by tclsh's own parser.
func TestBuildTclParses(t *testing.T) {
	tclsh := tools.Require(t, "tclsh")
	for _, tcl := range [][]byte{
		tcl("onic_top", Options{Part: "xcvu9p-flga2104-2L-e"}, []string{"a.v"}, []partition{{cell: "card/slot0_kernel", module: "m0", kernel: "x", sources: []string{"m0.v"}, region: Region{1, 2, 3, 4}},
			{cell: "card/slot1_kernel", module: "m1", kernel: "empty", sources: []string{"m1.v"}}}, nil, nil),
		tcl("onic_top", Options{Part: "xcvu9p-flga2104-2L-e"}, []string{"a.v"}, []partition{{slot: 0, cell: "card/slot0_kernel", module: "m0", image: true, region: Region{1, 2, 3, 4}}}, nil, nil),
	} {
		p := filepath.Join(t.TempDir(), "build.tcl")
		if err := os.WriteFile(p, tcl, 0o644); err != nil {
			t.Fatal(err)
		}
		check := filepath.Join(t.TempDir(), "check.tcl")
		if err := os.WriteFile(check, []byte(`set f [open [lindex $argv 0]]; set s [read $f]; close $f; puts [info complete $s]`), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tclsh, check, p).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "1" {
			t.Errorf("build.tcl is not complete Tcl: %v %s", err, out)
		}
	}
}
