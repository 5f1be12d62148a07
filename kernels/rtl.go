package kernels

import (
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
)

// hexWords prints words as a Verilog %h would print a value of n bits:
// every digit, leading zeros included.
func hexWords(w []uint64, n int) string {
	var b strings.Builder
	for i := len(w) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "%016x", w[i])
	}
	s := b.String()
	return s[len(s)-(n+3)/4:]
}

// Replay is a run of the kernel's Verilog in an event or cycle simulator
// on the inputs a simulator run applied, cycle by cycle, with the log of
// each side: per cycle, the inputs' ready bits, the output's valid, and
// any output beat (data, keep, last). Equal logs mean the RTL did what the
// IR did on every cycle, backpressure included.
type Replay struct {
	Sim, RTL []string
}

// Diff is the first line where the two logs differ ("" when equal).
func (r Replay) Diff() string {
	for i := range max(len(r.Sim), len(r.RTL)) {
		var a, b string
		if i < len(r.Sim) {
			a = r.Sim[i]
		}
		if i < len(r.RTL) {
			b = r.RTL[i]
		}
		if a != b {
			return fmt.Sprintf("cycle %d:\n  simulator: %s\n  RTL:       %s", i, a, b)
		}
	}
	return ""
}

// RunRTL simulates the kernel on in under t, then replays the same
// per-cycle inputs into the emitted Verilog with tool ("icarus" or
// "verilator", found on PATH) in dir, and returns both logs.
func (k *Kernel) RunRTL(in [][]byte, t Traffic, tool, dir string) (Replay, error) {
	m, err := k.Module()
	if err != nil {
		return Replay{}, err
	}
	var vecs []string
	var ports []ir.Port
	rec := func(c int, ps []ir.Port, values [][]uint64) {
		ports = ps
		vecs = append(vecs, vector(m, ps, values))
	}
	var r Replay
	if _, _, err := k.run(m, in, t, rec, &r.Sim); err != nil {
		return r, err
	}
	r.RTL, err = replayIn(tool, dir, m, vecs, k.testbench(m, ports, len(vecs)))
	return r, err
}

// replayIn writes m's Verilog, the input vectors (a line per cycle) and
// the testbench bench into dir, runs them under tool and returns the
// testbench's log lines.
func replayIn(tool, dir string, m *ir.Module, vecs []string, bench string) ([]string, error) {
	files, err := verilog.EmitDesign(m)
	if err != nil {
		return nil, err
	}
	var srcs []string
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Source, 0o644); err != nil {
			return nil, err
		}
		srcs = append(srcs, f.Name)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.hex"), []byte(strings.Join(vecs, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tb.v"), []byte(bench), 0o644); err != nil {
		return nil, err
	}
	return simulate(tool, dir, srcs)
}

// vector is one cycle's input vector for a replay: the ports' values
// side by side, bit-exact, the first at the top, in hex.
func vector(m *ir.Module, ports []ir.Port, values [][]uint64) string {
	v, total := new(big.Int), 0
	for i, p := range ports {
		w := m.Node(p.Node).W
		part := new(big.Int)
		for j := len(values[i]) - 1; j >= 0; j-- {
			part.Lsh(part, 64).Or(part, new(big.Int).SetUint64(values[i][j]))
		}
		v.Lsh(v, uint(w)).Or(v, part)
		total += w
	}
	return fmt.Sprintf("%0*x", (total+3)/4, v)
}

// simulate builds testbench tb.v with the design's sources srcs in dir
// with tool ("icarus" or "verilator"), runs it, and returns the lines of
// the out.log it writes.
func simulate(tool, dir string, srcs []string) ([]string, error) {
	var cmds [][]string
	switch tool {
	case "icarus":
		cmds = [][]string{append([]string{"iverilog", "-g2005", "-o", "tb.vvp", "tb.v"}, srcs...), {"vvp", "-n", "tb.vvp"}}
	case "verilator":
		cmds = [][]string{append([]string{"verilator", "--binary", "--timing", "-j", "2", "--top-module", "tb", "-Mdir", "obj_dir", "-o", "tb", "tb.v"}, srcs...),
			{filepath.Join(dir, "obj_dir", "tb")}}
	default:
		return nil, fmt.Errorf("tool %q: want icarus or verilator", tool)
	}
	for _, c := range cmds {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", c[0], err, tail(out))
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, "out.log"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(log), "\n"), "\n"), nil
}

func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// testbench applies in.hex, a line per cycle (the input ports in order),
// after one reset edge, and logs each cycle as the simulator run does.
func (k *Kernel) testbench(m *ir.Module, ports []ir.Port, n int) string {
	return replayBench("kernel "+k.Name, m, ports, n, func(w func(string, ...any)) {
		ready := "s0_tready"
		if k.Inputs == 2 {
			ready = "s0_tready, s1_tready"
		}
		w("            $fwrite(fd, \"%%b %%b\", {%s}, m_tvalid);", ready)
		if hasPort(m, "s_axil_araddr") {
			w("            $fwrite(fd, \" r%%b\", s_axil_rvalid);")
			w("            if (s_axil_rvalid) $fwrite(fd, \" %%h\", s_axil_rdata);")
		}
		w("            if (m_tvalid && m_tready) $fwrite(fd, \" %%h %%h %%b\", m_tdata, m_tkeep, m_tlast);")
	})
}

// replayBench is a replay testbench for module m: it applies in.hex, a
// line per cycle holding the input ports in order, after one reset edge,
// and each cycle writes to out.log what logCycle prints (with w, a line of
// Verilog per call) and a newline.
func replayBench(what string, m *ir.Module, ports []ir.Port, n int, logCycle func(w func(string, ...any))) string {
	iw := 0
	for _, p := range ports {
		iw += m.Node(p.Node).W
	}
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("// Replay testbench generated by onic for %s.", what)
	w("`timescale 1ns / 1ps")
	w("module tb;")
	w("    reg clk = 1'b0;")
	w("    reg rst = 1'b1;")
	w("    reg [%d:0] vec [0:%d];", iw-1, n-1)
	w("    reg [%d:0] cur = %d'h0;", iw-1, iw)
	w("    integer c;")
	w("    integer fd;")
	conns := []string{".clk(clk)", ".rst(rst)"}
	hi := iw
	for _, p := range ports {
		pw := m.Node(p.Node).W
		w("    wire [%d:0] %s = cur[%d:%d];", pw-1, p.Name, hi-1, hi-pw)
		hi -= pw
		conns = append(conns, fmt.Sprintf(".%s(%s)", p.Name, p.Name))
	}
	for _, p := range m.Ports() {
		if p.Output {
			w("    wire [%d:0] %s;", m.Node(p.Node).W-1, p.Name)
			conns = append(conns, fmt.Sprintf(".%s(%s)", p.Name, p.Name))
		}
	}
	w("    %s dut (%s);", m.Name(), strings.Join(conns, ", "))
	w("    initial begin")
	w("        $readmemh(\"in.hex\", vec);")
	w("        fd = $fopen(\"out.log\", \"w\");")
	w("        #1 clk = 1'b1; #1 clk = 1'b0; rst = 1'b0;")
	w("        for (c = 0; c < %d; c = c + 1) begin", n)
	w("            cur = vec[c];")
	w("            #1;")
	logCycle(w)
	w("            $fwrite(fd, \"\\n\");")
	w("            clk = 1'b1; #1; clk = 1'b0;")
	w("        end")
	w("        $fclose(fd);")
	w("        $finish;")
	w("    end")
	w("endmodule")
	return b.String()
}
