package bundle_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"onic/designs/bundle"
	"onic/designs/internal/optlink"
	"onic/emu/scenario"
	"onic/firmware"
	"onic/pcie/pg213"
	"onic/testbenches/tools"
	"onic/tlp"
)

// topPort is one port of a generated onic_top.v.
type topPort struct {
	name  string
	input bool
	width int
}

// topPorts reads the port list of the Verilog module in src.
func topPorts(t *testing.T, src string) []topPort {
	re := regexp.MustCompile(`(?m)^    (input|output) +wire +(\[(\d+):0\] +)?(\w+),?$`)
	var ps []topPort
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		w := 1
		if m[3] != "" {
			n, err := strconv.Atoi(m[3])
			if err != nil {
				t.Fatal(err)
			}
			w = n + 1
		}
		ps = append(ps, topPort{m[4], m[1] == "input", w})
	}
	if len(ps) < 50 {
		t.Fatalf("onic_top.v: only %d ports read", len(ps))
	}
	return ps
}

// TestTopPairAcrossClocks: two generated onic_tops in Icarus, their port
// A lanes joined back to back, each card's user_clk and each transmitter's
// word clock of its own (the receivers run on the far transmitter's
// clock, as a GTY's recovered clock would): both links come up through
// onic_top's clock-domain crossings, and a write host A's block delivers
// on CQ leaves card B's RQ with the translated address and its payload.
// The two cards share their Verilog (one scenario's O-NICs differ in IDs
// and domains, here only in the bus number, so both see the other's
// requests as a peer's).
func TestTopPairAcrossClocks(t *testing.T) {
	iverilog := tools.Require(t, "iverilog")
	vvp := tools.Require(t, "vvp")
	c := scenario.TwoParty().ONICs[0].Manager
	c.Access.Domains[1].Requesters = []string{"10:00.0-10:00.7"} // the other card's proxies, as it is a copy of this one
	d := design(t, c)
	fs, err := bundle.Files(d, bundle.Options{Part: firmware.DefaultPart, PCIe4: true, Function: onicFunction(t),
		Link: optlink.Config{TrainCycles: 32, ReplayCycles: 400, LostCycles: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var vs []string
	var top string
	for _, f := range fs {
		if isSource(f.Name) {
			vs = append(vs, filepath.Join(dir, f.Name))
			if err := os.WriteFile(vs[len(vs)-1], f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if f.Name == "onic_top.v" {
			top = string(f.Data)
		}
	}

	// Host A's write through its window: 16 DWs at offset 0x1000 of BAR2,
	// as the block delivers it on CQ (one beat: descriptor and payload).
	w := d.Windows[0]
	fm, typ, _ := tlp.FmtType(tlp.MWr, true, 0)
	x := tlp.TLP{Fmt: fm, Type: typ, Length: 12, RequesterID: tlp.NewID(0, 0, 0), Tag: 5, FirstBE: 0xF, LastBE: 0xF,
		Address: 0x4_0000_0000 + w.Offset + 0x1000, Data: make([]byte, 48)}
	for i := range x.Data {
		x.Data[i] = byte(3*i + 1)
	}
	cq, err := pg213.ToCQ(&x, w.BAR, 34, 0)
	if err != nil {
		t.Fatal(err)
	}
	beat := append(cq.Descriptor[:], cq.Payload...)
	hexOf := func(b []byte) string { // little-endian bytes as a Verilog hex literal
		var s strings.Builder
		for i := len(b) - 1; i >= 0; i-- {
			fmt.Fprintf(&s, "%02x", b[i])
		}
		return s.String()
	}
	want := w.Translated + 0x1000 // where card B's RQ should send it

	ports := topPorts(t, top)
	var b strings.Builder
	p := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	p("`timescale 1ps/1ps")
	p("module pair;")
	p("    reg user_clk_a = 0, user_clk_b = 0, tx_clk_a = 0, tx_clk_b = 0, rst = 1;")
	p("    always #2000 user_clk_a = ~user_clk_a;")
	p("    initial #1300 forever #2000 user_clk_b = ~user_clk_b; // same rate, another phase")
	p("    always #1850 tx_clk_a = ~tx_clk_a; // A's transmitter, faster than its card")
	p("    always #2300 tx_clk_b = ~tx_clk_b; // B's, slower")
	p("    reg cq_valid = 0;")
	for _, card := range []string{"a", "b"} {
		for _, pt := range ports {
			dir := "wire"
			if pt.input && !strings.HasPrefix(pt.name, "port_") && pt.name != "user_clk" && pt.name != "user_reset" {
				dir = "reg"
			}
			p("    %s [%d:0] %s_%s;", dir, pt.width-1, card, pt.name)
		}
	}
	p("    onic_top a (")
	var conns []string
	for _, pt := range ports {
		conns = append(conns, fmt.Sprintf("        .%s(a_%s)", pt.name, pt.name))
	}
	p("%s", strings.Join(conns, ",\n"))
	p("    );")
	p("    onic_top b (")
	conns = conns[:0]
	for _, pt := range ports {
		conns = append(conns, fmt.Sprintf("        .%s(b_%s)", pt.name, pt.name))
	}
	p("%s", strings.Join(conns, ",\n"))
	p("    );")
	for _, k := range []struct{ me, peer string }{{"a", "b"}, {"b", "a"}} {
		p("    assign %s_user_clk = user_clk_%s;", k.me, k.me)
		p("    assign %s_user_reset = rst;", k.me)
		p("    assign %s_port_a_tx_clk = tx_clk_%s;", k.me, k.me)
		p("    assign %s_port_a_rx_clk = tx_clk_%s; // the far transmitter's clock", k.me, k.peer)
		p("    assign %s_port_a_tx_ready = 1'b1;", k.me)
		p("    assign %s_port_a_rx_data = %s_port_a_tx_data;", k.me, k.peer)
		p("    assign %s_port_a_rx_ctl = %s_port_a_tx_ctl;", k.me, k.peer)
		p("    assign %s_port_a_rx_valid = %s_port_a_tx_valid;", k.me, k.peer)
		p("    assign %s_port_a_phy_up = !rst;", k.me)
		// Port B is never connected: its clocks run, its PHY is down.
		p("    assign %s_port_b_tx_clk = tx_clk_%s;", k.me, k.me)
		p("    assign %s_port_b_rx_clk = tx_clk_%s;", k.me, k.me)
		p("    assign %s_port_b_tx_ready = 1'b1;", k.me)
		p("    assign %s_port_b_rx_data = 0;", k.me)
		p("    assign %s_port_b_rx_ctl = 0;", k.me)
		p("    assign %s_port_b_rx_valid = 0;", k.me)
		p("    assign %s_port_b_phy_up = 0;", k.me)
	}
	p("    integer i, up_at = -1, cycles = 0;")
	p("    initial begin")
	for _, card := range []string{"a", "b"} {
		for _, pt := range ports {
			if pt.input && !strings.HasPrefix(pt.name, "port_") && pt.name != "user_clk" && pt.name != "user_reset" {
				v := "0"
				if strings.HasSuffix(pt.name, "ready") {
					v = "1"
				}
				p("        %s_%s = %s;", card, pt.name, v)
			}
		}
		p("        %s_cfg_bus_number = %d;", card, map[string]int{"a": 1, "b": 2}[card])
		p("        %s_cfg_function_status = 16'h6; // PF0: memory space, bus master", card)
		p("        %s_pcie_tfc_nph_av = 15; // non-posted credit: 15 or more", card)
		p("        %s_pcie_tfc_npd_av = 15;", card)
	}
	p("        a_m_axis_cq_tdata = 512'h%s;", hexOf(beat))
	p("        a_m_axis_cq_tkeep = 16'h%x;", 1<<((len(beat)+3)/4)-1)
	p("        a_m_axis_cq_tlast = 1;")
	p("        a_m_axis_cq_tuser = %d;", uint64(cq.FirstBE)|uint64(cq.LastBE)<<8)
	p("        #100000 @(posedge user_clk_a) rst = 0;")
	p("    end")
	p("    always @(posedge user_clk_a) begin")
	p("        cycles = cycles + 1;")
	p("        if (up_at < 0 && a_port_a_state == 2 && b_port_a_state == 2) begin")
	p("            up_at = cycles;")
	p("            $display(\"up %%0d\", cycles);")
	p("            a_m_axis_cq_tvalid <= 1;")
	p("        end")
	p("        if (a_m_axis_cq_tvalid && a_m_axis_cq_tready) a_m_axis_cq_tvalid <= 0;")
	p("        if (a_port_a_rx_overflow || b_port_a_rx_overflow) begin")
	p("            $display(\"FAIL: a receive crossing overflowed\");")
	p("            $finish;")
	p("        end")
	p("        if (cycles > 4000) begin")
	p("            $display(\"FAIL: states %%0d %%0d after %%0d cycles\", a_port_a_state, b_port_a_state, cycles);")
	p("            $finish;")
	p("        end")
	p("    end")
	p("    always @(posedge user_clk_b) begin")
	p("        if (b_s_axis_rq_tvalid) begin")
	p("            $display(\"rq %%h\", b_s_axis_rq_tdata[63:0]);")
	p("            $display(\"payload %%h\", b_s_axis_rq_tdata[511:128]);")
	p("            $finish;")
	p("        end")
	p("    end")
	p("endmodule")
	bench := filepath.Join(dir, "pair.v")
	if err := os.WriteFile(bench, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pair")
	if out, err := exec.Command(iverilog, append([]string{"-g2005", "-o", bin, "-s", "pair", bench}, vs...)...).CombinedOutput(); err != nil {
		t.Fatalf("iverilog: %v\n%s", err, out)
	}
	out, err := exec.Command(vvp, "-n", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("vvp: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	if !strings.Contains(string(out), "up ") {
		t.Fatalf("the links did not come up:\n%s", out)
	}
	// The RQ descriptor's first 64 bits: address type [1:0], address
	// [63:2] (PG213).
	if !strings.Contains(string(out), fmt.Sprintf("rq %016x", want)) {
		t.Fatalf("card B's RQ does not carry address %#x:\n%s", want, out)
	}
	if !strings.Contains(string(out), "payload "+hexOf(x.Data)) {
		t.Fatalf("card B's RQ does not carry the payload:\n%s", out)
	}
}
