package board

import (
	"fmt"
	"strings"

	"onic/designs/internal/gty"
	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
	"onic/pcie/lanes"
)

// Dir is the directory, among the generated files, of a board's top, its
// XDC and the GTY wrapper's modules: apart from onic_top's, so a check of
// the card's directory reads no board module.
const Dir = "board"

// StandInDir is the directory (under Dir) of the stand-ins for AMD's IP
// and primitives the board top instantiates: modules with their ports,
// for Verilator, Icarus and Yosys only — never read by build.tcl.
const StandInDir = Dir + "/standin"

// File is one generated file.
type File struct {
	Name string
	Data []byte
}

// Port is one of onic_top's ports.
type Port struct {
	Name   string
	Width  int
	Output bool
}

// Options are a board top's inputs besides the board.
type Options struct {
	// Plan is the optical ports' lane plan (board.Check'd).
	Plan lanes.Plan
	// Card are onic_top's ports, in order.
	Card []Port
	// MarkerWords sets the GTY wrapper's alignment marker spacing (zero:
	// gty.DefaultMarkerWords); simulations shorten it.
	MarkerWords int
	// Cell is onic_top's instance name (build.tcl's card_cell).
	Cell string
}

// ports are the optical ports, in cage order.
var ports = []string{"port_a", "port_b"}

// TopName is the board top's module name.
func (b Board) TopName() string { return "onic_board_" + b.Name }

// GTName is the transceiver IP's module name for optical port x.
func GTName(x string) string { return "onic_" + x + "_gt" }

// pcieSide says whether onic_top's port name joins the PCIe IP's port of
// the same name.
func pcieSide(name string) bool {
	for _, p := range []string{"m_axis_", "s_axis_", "pcie_", "cfg_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// laneSide says whether onic_top's port name is one of an optical port's
// lane signals.
func laneSide(name string) bool {
	for _, x := range ports {
		if strings.HasPrefix(name, x+"_") {
			switch strings.TrimPrefix(name, x+"_") {
			case "tx_clk", "rx_clk", "tx_data", "tx_ctl", "tx_valid", "tx_ready", "rx_data", "rx_ctl", "rx_valid", "phy_up", "rx_overflow":
				return true
			}
		}
	}
	return false
}

// Top returns the board top's files: the top, its XDC and the GTY
// wrapper's modules under Dir, and the stand-ins under StandInDir.
func Top(b Board, o Options) ([]File, error) {
	if err := b.Check(o.Plan); err != nil {
		return nil, err
	}
	if o.Cell == "" {
		o.Cell = "onic"
	}
	fs, err := Wrappers(Dir, o.Plan, o.MarkerWords)
	if err != nil {
		return nil, err
	}
	top := topVerilog(b, o)
	fs = append([]File{{Dir + "/" + b.TopName() + ".v", top}, {Dir + "/" + b.TopName() + ".xdc", xdc(b, o)}}, fs...)
	fs = append(fs, standIns(b, o)...)
	return fs, nil
}

// Wrappers returns the GTY wrapper's modules for a port on lane plan
// plan (onic_gty_tx and onic_gty_rx, gty.TX and gty.RX), under dir.
func Wrappers(dir string, plan lanes.Plan, markerWords int) ([]File, error) {
	c := gty.Config{Lanes: plan.Lanes, MarkerWords: markerWords}
	tx, err := gty.TX(c)
	if err != nil {
		return nil, err
	}
	rx, err := gty.RX(c)
	if err != nil {
		return nil, err
	}
	var fs []File
	for _, m := range []*ir.Module{tx, rx} {
		vs, err := verilog.EmitDesign(m)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			fs = append(fs, File{dir + "/" + v.Name, v.Source})
		}
	}
	return fs, nil
}

// UserBits is the GTY wrapper's transceiver interface on lane plan plan,
// bits a lane a cycle (gty.Config.UserBits): what build.tcl configures
// the transceiver IP's user and internal data widths to.
func UserBits(plan lanes.Plan) int { return gty.Config{Lanes: plan.Lanes}.UserBits() }

// Sources are the board top's Verilog files among Top's, top first, for
// build.tcl.
func Sources(fs []File) []string {
	var out []string
	for _, f := range fs {
		if strings.HasSuffix(f.Name, ".v") && !strings.HasPrefix(f.Name, StandInDir+"/") {
			out = append(out, f.Name)
		}
	}
	return out
}

// vw is a Verilog vector width prefix ("[3:0] "), or "" for one bit.
func vw(n int) string {
	if n > 1 {
		return fmt.Sprintf("[%d:0] ", n-1)
	}
	return ""
}

// writer collects lines.
type writer struct{ b strings.Builder }

func (w *writer) l(f string, a ...any) { fmt.Fprintf(&w.b, f+"\n", a...) }

// portList writes a module's ports, a comment before each group.
func (w *writer) portList(groups [][]string) {
	var lines []string
	for _, g := range groups {
		for i, s := range g {
			if i == 0 {
				lines = append(lines, s)
				continue
			}
			lines = append(lines, s+",")
		}
	}
	// The last port has no comma; comments have none.
	last := len(lines) - 1
	for last >= 0 && strings.HasPrefix(strings.TrimSpace(lines[last]), "//") {
		last--
	}
	lines[last] = strings.TrimSuffix(lines[last], ",")
	for _, s := range lines {
		w.l("%s", s)
	}
}

// conns writes an instance's connections, one a line, the last without a
// comma.
func (w *writer) conns(cs []string) {
	for i, c := range cs {
		if i == len(cs)-1 {
			w.l("        %s", c)
		} else {
			w.l("        %s,", c)
		}
	}
}

// topVerilog is the board top module.
//
// Long: one module written top to bottom, in the order the file reads.
func topVerilog(b Board, o Options) []byte {
	n := o.Plan.Lanes
	pl := b.PCIe.Lanes
	var w writer
	name := b.TopName()
	w.l("// Code generated by onic hdl gen --board %s. DO NOT EDIT.", b.Name)
	w.l("// %s: onic_top on the %s (%s):", name, b.Title, b.Part)
	w.l("// PCIe Gen%d x%d through onic_pcie4 (%s), optical port A on %s and", b.PCIe.Gen, pl, b.PCIe.IP, b.Cages[0].Name)
	w.l("// port B on %s, lane plan %v,", b.Cages[1].Name, o.Plan)
	w.l("// each port's lanes through a GTY wrapper (onic_gty_tx, onic_gty_rx) and its")
	w.l("// transceiver IP (%s, %s). docs/hdl.md, \"Board tops\".", GTName("port_a"), GTName("port_b"))
	w.l("")
	w.l("`default_nettype none")
	w.l("")
	w.l("module %s (", name)
	groups := [][]string{{
		"    // The PCIe edge connector: the 100 MHz reference clock, PERST# (active low) and the lanes.",
		"    input  wire pcie_refclk_p",
		"    input  wire pcie_refclk_n",
		"    input  wire pcie_perst_n",
		fmt.Sprintf("    input  wire %spci_exp_rxp", vw(pl)),
		fmt.Sprintf("    input  wire %spci_exp_rxn", vw(pl)),
		fmt.Sprintf("    output wire %spci_exp_txp", vw(pl)),
		fmt.Sprintf("    output wire %spci_exp_txn", vw(pl)),
	}}
	for i, x := range ports {
		cg := b.Cages[i]
		q := strings.ToLower(cg.Name)
		g := []string{
			fmt.Sprintf("    // Optical port %s on %s (%s): its %g MHz reference clock and %d lanes.", portLetter(x), cg.Name, cg.Quad, cg.RefclkMHz, n),
			fmt.Sprintf("    input  wire %s_refclk_p", q),
			fmt.Sprintf("    input  wire %s_refclk_n", q),
			fmt.Sprintf("    input  wire %s%s_rxp", vw(n), q),
			fmt.Sprintf("    input  wire %s%s_rxn", vw(n), q),
			fmt.Sprintf("    output wire %s%s_txp", vw(n), q),
			fmt.Sprintf("    output wire %s%s_txn", vw(n), q),
		}
		if cg.ResetL != "" {
			g = append(g, fmt.Sprintf("    output wire %s_resetl", q), fmt.Sprintf("    output wire %s_lpmode", q))
		}
		groups = append(groups, g)
	}
	w.portList(groups)
	w.l(");")
	w.l("")
	w.l("    // The PCIe reference clock: O to the block's transceivers, ODIV2 (undivided,")
	w.l("    // REFCLK_HROW_CK_SEL 00) to its logic (PG213, \"Clocking\").")
	w.l("    wire pcie_sys_clk_gt;")
	w.l("    wire pcie_sys_clk;")
	w.l("    IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) pcie_refclk_buf (")
	w.conns([]string{".I(pcie_refclk_p)", ".IB(pcie_refclk_n)", ".CEB(1'b0)", ".O(pcie_sys_clk_gt)", ".ODIV2(pcie_sys_clk)"})
	w.l("    );")
	w.l("")
	w.l("    // onic_top's PCIe side, joined to the block's ports of the same names.")
	w.l("    wire user_clk;")
	w.l("    wire user_reset;")
	var pcieConns []string
	for _, p := range o.Card {
		if pcieSide(p.Name) {
			w.l("    wire %s%s;", vw(p.Width), p.Name)
			pcieConns = append(pcieConns, fmt.Sprintf(".%s(%s)", p.Name, p.Name))
		}
	}
	w.l("")
	w.l("    // A function-level reset is done as soon as it starts: the card keeps no")
	w.l("    // per-function state the reset must clear (PG213, cfg_flr_done).")
	w.l("    wire [3:0] cfg_flr_in_process;")
	w.l("    reg  [3:0] flr_seen = 4'h0;")
	w.l("    reg  [3:0] flr_done = 4'h0;")
	w.l("    always @(posedge user_clk) begin")
	w.l("        flr_seen <= cfg_flr_in_process;")
	w.l("        flr_done <= cfg_flr_in_process & ~flr_seen;")
	w.l("    end")
	w.l("")
	w.l("    // AMD's PCIe block (%s, PG213), as build.tcl creates it.", b.PCIe.IP)
	w.l("    onic_pcie4 pcie (")
	ties := []string{
		".sys_clk(pcie_sys_clk)", ".sys_clk_gt(pcie_sys_clk_gt)", ".sys_reset(pcie_perst_n)",
		".pci_exp_rxp(pci_exp_rxp)", ".pci_exp_rxn(pci_exp_rxn)", ".pci_exp_txp(pci_exp_txp)", ".pci_exp_txn(pci_exp_txn)",
		".user_clk(user_clk)", ".user_reset(user_reset)",
	}
	ties = append(ties, pcieConns...)
	ties = append(ties,
		".cfg_flr_in_process(cfg_flr_in_process)", ".cfg_flr_done(flr_done)",
		".cfg_config_space_enable(1'b1)", ".cfg_link_training_enable(1'b1)", ".cfg_hot_reset_in(1'b0)",
		".cfg_dsn(64'h0)", ".cfg_ds_port_number(8'h0)", ".cfg_ds_bus_number(8'h0)", ".cfg_ds_device_number(5'h0)",
		".cfg_power_state_change_ack(1'b1)", ".cfg_err_cor_in(1'b0)", ".cfg_err_uncor_in(1'b0)",
		".cfg_req_pm_transition_l23_ready(1'b0)", ".cfg_interrupt_int(4'h0)", ".cfg_interrupt_pending(4'h0)",
		".cfg_mgmt_read(1'b0)", ".cfg_mgmt_write(1'b0)", ".cfg_msg_transmit(1'b0)")
	w.conns(ties)
	w.l("    );")

	for i, x := range ports {
		cg := b.Cages[i]
		q := strings.ToLower(cg.Name)
		w.l("")
		w.l("    // Optical port %s on %s: the reference clock (O to the quad's PLL, ODIV2", portLetter(x), cg.Name)
		w.l("    // through a BUFG_GT as the free-running clock of the transceiver IP's reset")
		w.l("    // logic), a power-on reset for the IP, the IP, and the GTY wrapper.")
		w.l("    wire %s_refclk;", x)
		w.l("    wire %s_refclk_div;", x)
		w.l("    wire %s_freerun_clk;", x)
		w.l("    IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) %s_refclk_buf (", x)
		w.conns([]string{fmt.Sprintf(".I(%s_refclk_p)", q), fmt.Sprintf(".IB(%s_refclk_n)", q), ".CEB(1'b0)",
			fmt.Sprintf(".O(%s_refclk)", x), fmt.Sprintf(".ODIV2(%s_refclk_div)", x)})
		w.l("    );")
		w.l("    BUFG_GT %s_freerun_buf (", x)
		w.conns([]string{fmt.Sprintf(".I(%s_refclk_div)", x), ".CE(1'b1)", ".CEMASK(1'b0)", ".CLR(1'b0)", ".CLRMASK(1'b0)",
			".DIV(3'h0)", fmt.Sprintf(".O(%s_freerun_clk)", x)})
		w.l("    );")
		w.l("    reg  [7:0] %s_por_count = 8'hff;", x)
		w.l("    always @(posedge %s_freerun_clk) begin", x)
		w.l("        if (%s_por_count != 8'h0) begin", x)
		w.l("            %s_por_count <= %s_por_count - 8'h1;", x, x)
		w.l("        end")
		w.l("    end")
		w.l("    wire %s_gt_reset = %s_por_count != 8'h0;", x, x)
		for _, s := range []struct {
			name string
			w    int
		}{
			{"tx_clk", 1}, {"rx_clk", 1}, {"tx_active", 1}, {"rx_active", 1}, {"tx_done", 1}, {"rx_done", 1},
			{"txpmaresetdone", n}, {"rxpmaresetdone", n},
			{"gt_txdata", 64 * n}, {"gt_txheader", 6 * n}, {"gt_txsequence", 7 * n},
			{"gt_rxdata", 64 * n}, {"gt_rxheader", 6 * n}, {"gt_rxdatavalid", 2 * n}, {"gt_rxheadervalid", 2 * n},
			{"gt_rxgearboxslip", n},
		} {
			w.l("    wire %s%s_%s;", vw(s.w), x, s.name)
		}
		w.l("    %s %s_gt (", GTName(x), x)
		w.conns([]string{
			fmt.Sprintf(".gtwiz_userclk_tx_reset_in(~&%s_txpmaresetdone)", x),
			fmt.Sprintf(".gtwiz_userclk_tx_usrclk2_out(%s_tx_clk)", x),
			fmt.Sprintf(".gtwiz_userclk_tx_active_out(%s_tx_active)", x),
			fmt.Sprintf(".gtwiz_userclk_rx_reset_in(~&%s_rxpmaresetdone)", x),
			fmt.Sprintf(".gtwiz_userclk_rx_usrclk2_out(%s_rx_clk)", x),
			fmt.Sprintf(".gtwiz_userclk_rx_active_out(%s_rx_active)", x),
			fmt.Sprintf(".gtwiz_reset_clk_freerun_in(%s_freerun_clk)", x),
			fmt.Sprintf(".gtwiz_reset_all_in(%s_gt_reset)", x),
			".gtwiz_reset_tx_pll_and_datapath_in(1'b0)", ".gtwiz_reset_tx_datapath_in(1'b0)",
			".gtwiz_reset_rx_pll_and_datapath_in(1'b0)", ".gtwiz_reset_rx_datapath_in(1'b0)",
			fmt.Sprintf(".gtwiz_reset_tx_done_out(%s_tx_done)", x),
			fmt.Sprintf(".gtwiz_reset_rx_done_out(%s_rx_done)", x),
			fmt.Sprintf(".gtwiz_userdata_tx_in(%s_gt_txdata)", x),
			fmt.Sprintf(".gtwiz_userdata_rx_out(%s_gt_rxdata)", x),
			fmt.Sprintf(".gtrefclk00_in(%s_refclk)", x),
			fmt.Sprintf(".gtyrxp_in(%s_rxp)", q), fmt.Sprintf(".gtyrxn_in(%s_rxn)", q),
			fmt.Sprintf(".gtytxp_out(%s_txp)", q), fmt.Sprintf(".gtytxn_out(%s_txn)", q),
			fmt.Sprintf(".txheader_in(%s_gt_txheader)", x),
			fmt.Sprintf(".txsequence_in(%s_gt_txsequence)", x),
			fmt.Sprintf(".rxgearboxslip_in(%s_gt_rxgearboxslip)", x),
			fmt.Sprintf(".rxdatavalid_out(%s_gt_rxdatavalid)", x),
			fmt.Sprintf(".rxheader_out(%s_gt_rxheader)", x),
			fmt.Sprintf(".rxheadervalid_out(%s_gt_rxheadervalid)", x),
			fmt.Sprintf(".txpmaresetdone_out(%s_txpmaresetdone)", x),
			fmt.Sprintf(".rxpmaresetdone_out(%s_rxpmaresetdone)", x),
		})
		w.l("    );")
		w.l("    // Each side of the wrapper leaves reset once the IP says its side is done")
		w.l("    // and its user clock runs, both brought onto that clock.")
		w.l("    wire %s_tx_up;", x)
		w.l("    wire %s_rx_up;", x)
		for _, side := range []string{"tx", "rx"} {
			w.l("    onic_cdc_sync %s_%s_up_sync (", x, side)
			w.conns([]string{fmt.Sprintf(".clk(%s_%s_clk)", x, side), fmt.Sprintf(".d(%s_%s_done & %s_%s_active)", x, side, x, side),
				fmt.Sprintf(".q(%s_%s_up)", x, side)})
			w.l("    );")
		}
		for _, s := range []struct {
			name string
			w    int
		}{{"tx_data", 512}, {"tx_ctl", 1}, {"tx_valid", 1}, {"tx_ready", 1}, {"rx_data", 512}, {"rx_ctl", 1}, {"rx_valid", 1}, {"phy_up", 1}} {
			w.l("    wire %s%s_%s;", vw(s.w), x, s.name)
		}
		w.l("    onic_gty_tx %s_gty_tx (", x)
		w.conns([]string{fmt.Sprintf(".clk(%s_tx_clk)", x), fmt.Sprintf(".rst(~%s_tx_up)", x),
			fmt.Sprintf(".tx_data(%s_tx_data)", x), fmt.Sprintf(".tx_ctl(%s_tx_ctl)", x), fmt.Sprintf(".tx_valid(%s_tx_valid)", x),
			fmt.Sprintf(".gt_ready(%s_tx_up)", x), fmt.Sprintf(".tx_ready(%s_tx_ready)", x),
			fmt.Sprintf(".gt_txdata(%s_gt_txdata)", x), fmt.Sprintf(".gt_txheader(%s_gt_txheader)", x),
			fmt.Sprintf(".gt_txsequence(%s_gt_txsequence)", x)})
		w.l("    );")
		w.l("    /* verilator lint_off PINCONNECTEMPTY */")
		w.l("    onic_gty_rx %s_gty_rx (", x)
		w.conns([]string{fmt.Sprintf(".clk(%s_rx_clk)", x), fmt.Sprintf(".rst(~%s_rx_up)", x),
			fmt.Sprintf(".gt_rxdata(%s_gt_rxdata)", x), fmt.Sprintf(".gt_rxheader(%s_gt_rxheader)", x),
			fmt.Sprintf(".gt_rxdatavalid(%s_gt_rxdatavalid)", x), fmt.Sprintf(".gt_rxheadervalid(%s_gt_rxheadervalid)", x),
			fmt.Sprintf(".gt_ready(%s_rx_up)", x), fmt.Sprintf(".rx_data(%s_rx_data)", x), fmt.Sprintf(".rx_ctl(%s_rx_ctl)", x),
			fmt.Sprintf(".rx_valid(%s_rx_valid)", x), fmt.Sprintf(".phy_up(%s_phy_up)", x),
			fmt.Sprintf(".gt_rxgearboxslip(%s_gt_rxgearboxslip)", x), ".lanes_locked()", ".realigns()"})
		w.l("    );")
		w.l("    /* verilator lint_on PINCONNECTEMPTY */")
		if cg.ResetL != "" {
			w.l("    // The module out of reset, in high-power mode.")
			w.l("    assign %s_resetl = 1'b1;", q)
			w.l("    assign %s_lpmode = 1'b0;", q)
		}
	}
	w.l("")
	w.l("    // The card. Its counters are in its register BAR; their ports stay open here.")
	w.l("    /* verilator lint_off PINCONNECTEMPTY */")
	w.l("    onic_top %s (", o.Cell)
	cs := []string{".user_clk(user_clk)", ".user_reset(user_reset)"}
	for _, p := range o.Card {
		switch {
		case p.Name == "user_clk" || p.Name == "user_reset":
		case pcieSide(p.Name) || laneSide(p.Name) && !strings.HasSuffix(p.Name, "_rx_overflow"):
			cs = append(cs, fmt.Sprintf(".%s(%s)", p.Name, p.Name))
		default:
			cs = append(cs, fmt.Sprintf(".%s()", p.Name))
		}
	}
	w.conns(cs)
	w.l("    );")
	w.l("    /* verilator lint_on PINCONNECTEMPTY */")
	w.l("endmodule")
	w.l("")
	w.l("`default_nettype wire")
	return []byte(w.b.String())
}

// portLetter is A for port_a.
func portLetter(x string) string { return strings.ToUpper(x[len(x)-1:]) }
