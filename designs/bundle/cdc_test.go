package bundle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// cdcBench drives onic_cdc_fifo (WIDTH 20, ADDR 4) with a writer on s_clk
// and a reader on m_clk at the given half periods (ps), both offering and
// taking at random: the writer sends words 0 to n-1, the reader checks
// each arrives once and in order, and the FIFO never reports more than
// 16 words. It prints "ok <n>" at the end, or what went wrong.
const cdcBench = "`timescale 1ps/1ps\n" + `
module bench;
    parameter integer SHALF = 2000;
    parameter integer MHALF = 1550;
    parameter integer N = 3000;
    reg s_clk = 0, m_clk = 0, s_rst = 1, m_rst = 1;
    always #(SHALF) s_clk = ~s_clk;
    always #(MHALF) m_clk = ~m_clk;
    reg [19:0] s_data = 0;
    reg s_valid = 0, m_ready = 0;
    wire s_ready, m_valid;
    wire [19:0] m_data;
    onic_cdc_fifo #(.WIDTH(20), .ADDR(4)) dut (
        .s_clk(s_clk), .s_rst(s_rst), .s_data(s_data), .s_valid(s_valid), .s_ready(s_ready),
        .m_clk(m_clk), .m_rst(m_rst), .m_data(m_data), .m_valid(m_valid), .m_ready(m_ready));
    integer sent = 0, got = 0, seed = 7, cycles = 0;
    always @(posedge s_clk) begin
        if (!s_rst) begin
            if (s_valid && s_ready) begin
                sent = sent + 1;
                s_data <= sent;
            end
            s_valid <= (sent < N) && ($random(seed) % 4 != 0);
        end
    end
    always @(posedge m_clk) begin
        cycles = cycles + 1;
        if (!m_rst) begin
            if (m_valid && m_ready) begin
                if (m_data != got) begin
                    $display("FAIL: word %0d read as %0d", got, m_data);
                    $finish;
                end
                got = got + 1;
            end
            m_ready <= ($random(seed) % 3 != 0);
        end
        if (got == N) begin
            $display("ok %0d", got);
            $finish;
        end
        if (cycles > 40 * N) begin
            $display("FAIL: %0d of %0d words after %0d cycles", got, N, cycles);
            $finish;
        end
    end
    initial begin
        #(20 * SHALF + 20 * MHALF);
        @(posedge s_clk) s_rst <= 0;
        @(posedge m_clk) m_rst <= 0;
    end
endmodule
`

// TestCDCFIFO: onic_cdc_fifo in Icarus with the write clock faster, then
// slower, than the read clock, and at nearly the same rate: 3,000 words
// under random valid and ready arrive once each, in order. Verilator
// lints it and onic_cdc_sync clean (-Wall, no waivers).
func TestCDCFIFO(t *testing.T) {
	iverilog := tools.Require(t, "iverilog")
	vvp := tools.Require(t, "vvp")
	verilator := tools.Require(t, "verilator")
	dir := t.TempDir()
	fifo, sync := filepath.Join(dir, cdcFIFOName+".v"), filepath.Join(dir, cdcSyncName+".v")
	bench := filepath.Join(dir, "bench.v")
	for f, src := range map[string]string{fifo: cdcFIFO, sync: cdcSync, bench: cdcBench} {
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, top := range []string{cdcFIFOName, cdcSyncName} {
		f := filepath.Join(dir, top+".v")
		if out, err := exec.Command(verilator, "--lint-only", "-Wall", "--top-module", top, f).CombinedOutput(); err != nil || len(out) != 0 {
			t.Fatalf("verilator -Wall %s: %v\n%s", top, err, out)
		}
	}
	for _, c := range []struct{ s, m int }{{2000, 1550}, {1550, 2000}, {2000, 1990}, {1000, 3700}} {
		bin := filepath.Join(dir, fmt.Sprintf("bench_%d_%d", c.s, c.m))
		args := []string{"-g2005", "-Wall", "-o", bin, fmt.Sprintf("-Pbench.SHALF=%d", c.s), fmt.Sprintf("-Pbench.MHALF=%d", c.m), fifo, bench}
		if out, err := exec.Command(iverilog, args...).CombinedOutput(); err != nil {
			t.Fatalf("iverilog: %v\n%s", err, out)
		}
		out, err := exec.Command(vvp, "-n", bin).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "ok 3000") {
			t.Fatalf("write half period %d ps, read %d ps: %v\n%s", c.s, c.m, err, out)
		}
	}
}
