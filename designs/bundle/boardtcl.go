package bundle

import (
	"fmt"
	"strings"

	"onic/designs/internal/board"
	"onic/designs/internal/card"
	"onic/hdlgen/ir"
)

// boardFlow writes build.tcl's choice of flow: onic_top out of context
// (ooc), or a board's top around it in context (board) — the generated
// board top by default when the bundle has one, or the user's top when
// they set board_xdc, board_top and board_sources.
func boardFlow(w func(string, ...any), name string, o Options, sources []string) {
	if b := o.Board; b != nil {
		w("# The flow: board (the default) builds %s around %s, in", b.TopName(), name)
		w("# context, with the board's XDC and the full and partial bitstreams; ooc")
		w("# builds %s alone, out of context. Set flow (and, for a top of your own,", name)
		w("# board_top, board_sources, board_xdc and card_cell) before sourcing this")
		w("# script, or here.")
		w("if {![info exists board_top]} { set board_top %s }", b.TopName())
		w("if {![info exists board_xdc]} { set board_xdc [file join $dir %s/%s.xdc] }", board.Dir, b.TopName())
		w("if {![info exists board_sources]} {")
		w("    set board_sources {}")
		for _, f := range sources {
			w("    lappend board_sources [file join $dir %s]", f)
		}
		w("}")
	} else {
		w("# The flow: ooc (the default) builds %s out of context; board builds", name)
		w("# your board's top around it, in context, and writes the full bitstream")
		w("# and one partial bitstream per slot: set board_top (its module),")
		w("# board_sources (its Verilog), board_xdc (its pin, clock and crossing")
		w("# constraints) and, if your instance of %s is not called onic, card_cell.", name)
		w("# Set them before sourcing this script, or here; board_xdc alone chooses")
		w("# the board flow.")
	}
	w("foreach {var default} {board_xdc {} board_top {} board_sources {} card_cell onic} {")
	w("    if {![info exists $var]} { set $var $default }")
	w("}")
	w("if {![info exists flow]} { set flow [expr {$board_xdc eq \"\" ? \"ooc\" : \"board\"}] }")
	w("if {$flow ni {ooc board}} {")
	w("    error \"build.tcl: flow $flow: set flow to ooc (the card out of context) or board\"")
	w("}")
	w("if {$flow eq \"board\" && ($board_xdc eq \"\" || $board_top eq \"\" || [llength $board_sources] == 0)} {")
	w("    error \"build.tcl: the board flow needs board_xdc, board_top and board_sources: set board_top to your board's top module, board_sources to its Verilog files and board_xdc to its constraints (docs/hdl.md, \\\"Building for a board\\\")\"")
	w("}")
}

// topPorts are onic_top's ports (userClockTop's), in order, for a board
// top to join.
func topPorts(inner *ir.Module) []board.Port {
	ps := []board.Port{{Name: "user_clk", Width: 1}, {Name: "user_reset", Width: 1}}
	width := map[string]int{}
	for _, p := range inner.Ports() {
		width[p.Name] = inner.Node(p.Node).W
		if laneOf(p.Name) != "" {
			continue
		}
		ps = append(ps, board.Port{Name: p.Name, Width: inner.Node(p.Node).W, Output: p.Output})
	}
	for _, pt := range card.Ports {
		x := pt.Prefix
		ps = append(ps,
			board.Port{Name: x + "_tx_clk", Width: 1},
			board.Port{Name: x + "_rx_clk", Width: 1},
			board.Port{Name: x + "_tx_data", Width: width[x+"_tx_data"], Output: true},
			board.Port{Name: x + "_tx_ctl", Width: 1, Output: true},
			board.Port{Name: x + "_tx_valid", Width: 1, Output: true},
			board.Port{Name: x + "_tx_ready", Width: 1},
			board.Port{Name: x + "_rx_data", Width: width[x+"_rx_data"]},
			board.Port{Name: x + "_rx_ctl", Width: 1},
			board.Port{Name: x + "_rx_valid", Width: 1},
			board.Port{Name: x + "_phy_up", Width: 1},
			board.Port{Name: x + "_rx_overflow", Width: 1, Output: true})
	}
	return ps
}

// boardIPProps are the PCIe IP's placement on b: its block and the quad
// of lane 0, where the preset knows them.
func boardIPProps(b *board.Board) [][2]string {
	if b == nil {
		return nil
	}
	var props [][2]string
	if b.PCIe.Block != "" {
		props = append(props, [2]string{"pcie_blk_locn", b.PCIe.Block})
	}
	if b.PCIe.Quad != "" {
		props = append(props, [2]string{"en_gt_selection", "true"}, [2]string{"select_quad", b.PCIe.Quad})
	}
	return props
}

// gtChannels are port x's GTY channels (cage i's first lanes) and its
// reference clock, on b.
func gtChannels(b *board.Board, i, n int) (string, float64) {
	c := b.Cages[i]
	return strings.Join(c.Channels[:n], " "), c.RefclkMHz
}

// fmtMHz writes a clock frequency as the IP takes it.
func fmtMHz(f float64) string { return fmt.Sprintf("%g", f) }

// Board is a board preset (designs/internal/board): what --board names.
type Board = board.Board

// LookupBoard returns the board preset called name.
func LookupBoard(name string) (Board, error) { return board.Lookup(name) }

// BoardNames are the board presets' names.
func BoardNames() []string { return board.Names() }

// BoardPlan is a board's lane plan when none is given.
var BoardPlan = board.DefaultPlan
