package kernels

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/kernels/replay"
	"onic/testbenches/tools"
	"onic/testbenches/verilator"
)

// TestLibraryAgainstReference: every built-in kernel, simulated from its
// IR under random backpressure, gives exactly what its reference function
// gives — on empty packets, a single element, lengths that leave the last
// beat partly kept, several beats, and every pair of edge values.
func TestLibraryAgainstReference(t *testing.T) {
	for _, k := range Library() {
		t.Run(k.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(k.Name))))
			// Every pair of edge values, in one packet per input.
			ed := edges(k.In)
			var pairs [2][]byte
			for _, a := range ed {
				for _, b := range ed {
					pairs[0] = putLE(pairs[0], a, k.In.Bytes())
					pairs[1] = putLE(pairs[1], b, k.In.Bytes())
				}
			}
			var cases [][][]byte
			if k.Sample == nil {
				cases = append(cases, pairs[:k.Inputs])
			}
			for _, n := range []int{0, 1, 2, 3, 4, 5, k.Lanes - 5, k.Lanes - 4, k.Lanes - 3, k.Lanes - 1, k.Lanes, k.Lanes + 1, 3*k.Lanes + 5, 40 * k.Lanes} {
				if n >= 0 {
					cases = append(cases, k.sample(rng, n))
				}
			}
			for ci, in := range cases {
				want, err := k.Reference(in)
				if err != nil {
					t.Fatal(err)
				}
				for _, tr := range []Traffic{Full, {Offer: 0.6, Ready: 0.5, Seed: uint64(ci)}, {Offer: 0.2, Ready: 0.9, Seed: uint64(ci) + 99}} {
					got, st, err := k.Run(in, tr)
					if err != nil {
						t.Fatalf("case %d %+v: %v", ci, tr, err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("case %d (%d bytes) %+v: simulator and reference differ at byte %d\n sim %x\n ref %x", ci, len(in[0]), tr, firstDiff(got, want), got, want)
					}
					if d := k.regsDiff(in, st.Regs); d != "" {
						t.Fatalf("case %d (%d bytes) %+v: %s", ci, len(in[0]), tr, d)
					}
					if beatsIn := max(1, (len(in[0])+k.InBits()/8-1)/(k.InBits()/8)); k.Lane != nil && (st.InBeats != beatsIn || st.OutBeats != beatsIn) {
						t.Fatalf("case %d: %d beats in, %d out; want %d each", ci, st.InBeats, st.OutBeats, beatsIn)
					}
				}
			}
		})
	}
}

// latencies are the kernels pipelined over more than one cycle (their
// bodies' Stage calls), by name: cycles from a beat in to its result out.
var latencies = map[string]int{"quantize-mxint8": 5, "sum-q8.24-block": 2, "crc32c-append": 7, "crc32c-check": 7, "scale-int32": 5}

// latency is a library kernel's latency: 1 unless it is pipelined.
func latency(name string) int {
	if l, ok := latencies[name]; ok {
		return l
	}
	return 1
}

// TestThroughput: back to back, every kernel takes a beat per cycle and
// its first result leaves one cycle after its first beat arrives (more
// for the pipelined ones), sending a beat every cycle; a beat-level
// kernel may stall its input for the steps where it sends more beats
// than it takes (the CRC kernels' trailer beat).
func TestThroughput(t *testing.T) {
	gaps := map[string]int{}
	for _, k := range Library() {
		rng := rand.New(rand.NewPCG(2, 2))
		_, st, err := k.Run(k.sample(rng, 64*k.Lanes), Full)
		if err != nil {
			t.Fatal(err)
		}
		extra := st.OutBeats - st.InBeats
		if k.Lane != nil && extra != 0 || extra < 0 {
			t.Errorf("%s: %d beats in, %d out", k.Name, st.InBeats, st.OutBeats)
		}
		gap := gaps[k.Name]
		if st.Latency() != latency(k.Name) || st.LastOut-st.FirstOut != st.OutBeats-1+gap || st.InStalls != extra+gap {
			t.Errorf("%s: latency %d, %d beats out over %d cycles, %d input stalls; want %d, %d, %d, %d",
				k.Name, st.Latency(), st.OutBeats, st.LastOut-st.FirstOut+1, st.InStalls, latency(k.Name), st.OutBeats, st.OutBeats+gap, extra+gap)
		}
	}
}

// TestBF16Exhaustive: the IR conversion fp32 -> bf16 equals the
// arithmetic reference on every fp32 whose low 12 bits take a few
// rounding-relevant patterns — all 2^20 sign/exponent/high-mantissa
// combinations — through the simulator, 16 lanes a beat.
func TestBF16Exhaustive(t *testing.T) {
	k, err := Lookup("fp32-to-bf16")
	if err != nil {
		t.Fatal(err)
	}
	var in []byte
	for hi := uint32(0); hi < 1<<20; hi++ {
		for _, low := range []uint32{0x000, 0x800, 0x801, 0x7FF} {
			x := hi<<12 | low
			in = putLE(in, uint64(x), 4)
		}
	}
	got, _, err := k.Run([][]byte{in}, Full)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(in)/4; i++ {
		x := uint32(le(in[4*i : 4*i+4]))
		if g, w := uint16(le(got[2*i:2*i+2])), refBF16(x); g != w {
			t.Fatalf("fp32 %#08x (%g): IR %#04x, reference %#04x", x, math.Float32frombits(x), g, w)
		}
	}
}

// TestRefBF16 pins the reference itself to hand-worked values.
func TestRefBF16(t *testing.T) {
	for _, c := range []struct {
		x    uint32
		want uint16
	}{
		{0x3F800000, 0x3F80}, // 1.0
		{0x3F808000, 0x3F80}, // 1 + 2^-8: a tie, to even (down)
		{0x3F818000, 0x3F82}, // 1 + 3*2^-8: a tie, to even (up)
		{0x3F808001, 0x3F81}, // just above the tie
		{0x7F7FFFFF, 0x7F80}, // largest fp32 rounds to infinity
		{0x7F7F7FFF, 0x7F7F}, // stays finite
		{0x00000001, 0x0000}, // the smallest subnormal rounds to zero
		{0x80000001, 0x8000}, // and keeps its sign
		{0x00008000, 0x0000}, // a tie at the bottom: to even, zero
		{0x00018000, 0x0002}, // a tie: to even, up
		{0x7F800001, 0x7FC0}, // a signalling NaN whose payload is all below bf16: still a NaN
		{0xFF800000, 0xFF80}, // -inf
	} {
		if got := refBF16(c.x); got != c.want {
			t.Errorf("refBF16(%#08x) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
}

// TestVerilatorLint: every kernel's Verilog is clean under -Wall.
func TestVerilatorLint(t *testing.T) {
	for _, k := range Library() {
		m, err := k.Module()
		if err != nil {
			t.Fatal(err)
		}
		verilator.Lint(t, m)
	}
}

// TestBadKernels: a kernel description with a mistake is an error naming
// the kernel and the field.
func TestBadKernels(t *testing.T) {
	ok := *mustLookup(t, "sum-int32")
	for _, c := range []struct {
		edit func(k *Kernel)
		want string
	}{
		{func(k *Kernel) { k.Name = "" }, "no name"},
		{func(k *Kernel) { k.Inputs = 3 }, "inputs: 3"},
		{func(k *Kernel) { k.Lanes = 0 }, "lanes: 0"},
		{func(k *Kernel) { k.Lanes = 64 }, "lanes: 64 lanes of int32 in and 64 of int32 out make beats of 2048 and 2048 bits"},
		{func(k *Kernel) { k.OutLanes = 8 }, "out lanes: an elementwise kernel has as many output lanes as input lanes (16, not 8)"},
		{func(k *Kernel) { k.Body = func(*Step) {} }, "body: set exactly one of Lane"},
		{func(k *Kernel) { k.Lane, k.Body = nil, func(*Step) {} }, "ref packet: a beat-level kernel needs"},
		{func(k *Kernel) {
			k.Lane, k.RefPacket = nil, func([][]byte) ([]byte, error) { return nil, nil }
			k.Body = func(s *Step) { s.Out = Beat{s.M.Slice(s.In[0].Data, 0, 8), s.In[0].Keep, s.In[0].Last} }
		}, "body: output beat of data 8, keep 64 and last 1 bits; want 512, 64 and 1"},
		{func(k *Kernel) { k.Ref = nil }, "ref: no reference"},
		{func(k *Kernel) { k.Out = Int16 }, "lib.go:17: lane: the value returned is 32 bits; an int16 element is 16 (16 times"},
	} {
		k := ok
		c.edit(&k)
		_, err := k.Module()
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if _, err := Lookup("nope"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("sum-int32")) {
		t.Errorf("Lookup: %v", err)
	}
	k := *mustLookup(t, "sum-int32")
	if _, err := k.Reference([][]byte{{1, 2, 3}, {1, 2, 3}}); err == nil {
		t.Error("a packet of 3 bytes of int32 accepted")
	}
}

// TestErrorsOnce: a mistake in a Lane function, which runs once per lane,
// is reported once, at the user's line, with how many times it was made;
// distinct mistakes each get a line of their own. Register refuses the
// kernel with the same errors and registers nothing.
func TestErrorsOnce(t *testing.T) {
	var at int // the line of the first mistake
	k := &Kernel{Name: "bad-widths", Version: "0.1.0", In: Int32, Lanes: 16, Inputs: 2,
		Lane: func(m *ir.Module, in []ir.Value) ir.Value {
			_, _, at, _ = runtime.Caller(0)
			d := m.Sub(m.Sext(in[0], 33), in[1])                   // 33 - 32 bits
			return m.Mux(m.Slice(d, 32, 1), m.Const(31, 0), in[0]) // 31 and 32 bits
		},
		Ref: func(in []uint64) uint64 { return 0 }}
	_, err := k.Module()
	if err == nil {
		t.Fatal("a kernel with two width mistakes built")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"kernel_test.go:" + strconv.Itoa(at+1) + ": sub: operands are 33 and 32 bits",
		"kernel_test.go:" + strconv.Itoa(at+2) + ": mux: the choices are 31 and 32 bits"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) || !strings.HasSuffix(lines[i], "(16 times: the line ran once per lane or instance)") {
			t.Errorf("line %d: %q, want %q ... (16 times ...)", i, lines[i], w)
		}
	}
	if err := Register(k); err == nil || !strings.Contains(err.Error(), "sub: operands are 33 and 32 bits") {
		t.Errorf("Register: %v", err)
	}
	if _, err := Lookup("bad-widths"); err == nil {
		t.Error("a refused kernel was registered")
	}
}

// TestRTLReplay: each kernel's Verilog, run in Icarus on the inputs the
// simulator was given cycle by cycle (random offers and backpressure),
// shows the same ready, valid and output beats on every cycle; two
// kernels (a two-input and a converting one) also go through Verilator.
func TestRTLReplay(t *testing.T) {
	tools.Long(t)
	tools.Require(t, "iverilog")
	tools.Require(t, "vvp")
	tools.Require(t, "verilator")
	for _, k := range Library() {
		rng := rand.New(rand.NewPCG(3, 3))
		in := k.sample(rng, 7*k.Lanes+3)
		want, _ := k.Reference(in)
		sims := []Tool{replay.Icarus}
		if k.Name == "sum-int16-sat" || k.Name == "fp32-to-bf16" || k.Name == "crc32c-append" || k.Name == "histogram" {
			sims = append(sims, replay.Verilator)
		}
		for _, tool := range sims {
			r, err := k.RunRTL(in, Traffic{Offer: 0.7, Ready: 0.6, Seed: 5}, tool, t.TempDir())
			if err != nil {
				t.Fatalf("%s %s: %v", k.Name, tool.Name(), err)
			}
			if d := r.Diff(); d != "" {
				t.Fatalf("%s %s: %s", k.Name, tool.Name(), d)
			}
			if len(r.Sim) < 10 {
				t.Fatalf("%s: only %d cycles", k.Name, len(r.Sim))
			}
		}
		got, _, _ := k.Run(in, Traffic{Offer: 0.7, Ready: 0.6, Seed: 5})
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the replayed run's output is not the reference's", k.Name)
		}
	}
}

// TestVerify: Verify passes every built-in with both RTL tools, and says
// so in its verdict with the measured timing; a kernel whose reference
// disagrees with its body fails it.
func TestVerify(t *testing.T) {
	tools.Require(t, "iverilog")
	k, _ := Lookup("sum-int8-sat")
	v := k.Verify(7, []Tool{replay.Icarus})
	if !v.OK() || v.Cases != 7 || v.Latency != 1 || v.Interval != 1 || v.BytesPerCycle != 64 {
		t.Fatalf("%+v", v)
	}
	bad := *k
	bad.Ref = func(in []uint64) uint64 { return (in[0] + in[1]) & 0xFF } // wrapping, not saturating
	v = bad.Verify(7, nil)
	removeWaveform(v.Sim)
	if v.OK() || v.Sim == "ok" {
		t.Fatalf("a wrong reference passed: %+v", v)
	}
}

// removeWaveform deletes the directory of the waveform a failure report
// names, if it names one.
func removeWaveform(report string) {
	if m := regexp.MustCompile(`waveform: (\S+)`).FindStringSubmatch(report); m != nil {
		os.RemoveAll(filepath.Dir(m[1]))
	}
}

// mustLookup is the built-in kernel named name.
func mustLookup(t *testing.T, name string) *Kernel {
	t.Helper()
	k, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestProfile: the measured timing of kernels whose timing is known —
// one beat a cycle, latency 1, output as big as the input, or half for
// fp32 to bf16 — and the CRC's extra beat per packet.
func TestProfile(t *testing.T) {
	for _, c := range []struct {
		name     string
		perBeat  float64
		outPerIn float64
	}{
		{"sum-int32", 1, 1}, {"fp32-to-bf16", 1, 0.5}, {"bf16-to-fp32", 1, 2},
		{"crc32c-append", 65.0 / 64, 4100.0 / 4096}, {"quantize-mxint8", 1, 33.0 / 64},
	} {
		p, err := mustLookup(t, c.name).Profile()
		if err != nil {
			t.Fatal(err)
		}
		if p.Latency != latency(c.name) || p.CyclesPerBeat != c.perBeat || p.OutPerIn != c.outPerIn || p.BeatBytes != 64 {
			t.Errorf("%s: %+v, want latency %d, %g cycles a beat, %g out per in", c.name, p, latency(c.name), c.perBeat, c.outPerIn)
		}
	}
}

// TestFailureReport: a kernel whose hardware disagrees with its reference
// (it adds where the reference subtracts) fails Verify with a report that
// names the case, the output byte, beat, lane and cycle, the element got
// and wanted and the input elements it came from — each consistent with
// the two functions — and a VCD of the failing run that exists.
func TestFailureReport(t *testing.T) {
	ref := func(in []uint64) uint64 { return uint64(uint32(int32(in[0]) - int32(in[1]))) }
	k := &Kernel{Name: "wrong-diff", Version: "0.1.0", In: Int32, Lanes: 16, Inputs: 2,
		Lane: func(m *ir.Module, in []ir.Value) ir.Value { return m.Add(in[0], in[1]) },
		Ref:  ref}
	v := k.Verify(1, nil)
	if v.OK() {
		t.Fatal("a wrong kernel passed")
	}
	re := regexp.MustCompile(`^seed 1, case \d+ \(input packets of \d+ bytes\): output byte (\d+), beat (\d+), lane (\d+), cycle \d+: ` +
		`got (0x[0-9a-f]{8}), want (0x[0-9a-f]{8}) \(input element (\d+): (0x[0-9a-f]{8}), (0x[0-9a-f]{8})\); waveform: (\S+)$`)
	f := re.FindStringSubmatch(v.Sim)
	if f == nil {
		t.Fatalf("report %q does not match %s", v.Sim, re)
	}
	n := func(s string) uint64 { x, _ := strconv.ParseUint(s, 0, 64); return x }
	off, beat, lane, elem := n(f[1]), n(f[2]), n(f[3]), n(f[6])
	a, b := n(f[7]), n(f[8])
	if got, want := n(f[4]), n(f[5]); got != uint64(uint32(a+b)) || want != ref([]uint64{a, b}) {
		t.Errorf("got %#x want %#x, but the inputs %#x, %#x give %#x and %#x", got, want, a, b, uint32(a+b), ref([]uint64{a, b}))
	}
	if elem != off/4 || beat != off/64 || lane != off%64/4 {
		t.Errorf("byte %d is element %d, beat %d, lane %d; the report says %d, %d, %d", off, off/4, off/64, off%64/4, elem, beat, lane)
	}
	defer os.RemoveAll(filepath.Dir(f[9]))
	vcd, err := os.ReadFile(f[9])
	if err != nil || !bytes.Contains(vcd, []byte("$enddefinitions $end")) || !bytes.Contains(vcd, []byte("s0_lane0")) {
		t.Errorf("waveform %s: %v", f[9], err)
	}
	// GTKWave's own converter reads it: to FST and back, every signal
	// and the cycles are there.
	vcd2fst := tools.Require(t, "vcd2fst")
	fst2vcd := tools.Require(t, "fst2vcd")
	fst := filepath.Join(t.TempDir(), "w.fst")
	if out, err := exec.Command(vcd2fst, f[9], fst).CombinedOutput(); err != nil {
		t.Fatalf("vcd2fst: %v\n%s", err, out)
	}
	back, err := exec.Command(fst2vcd, fst).Output()
	if err != nil {
		t.Fatalf("fst2vcd: %v", err)
	}
	for _, want := range []string{" s0_lane0 ", " m_tdata ", " clk ", "#4\n"} {
		if !bytes.Contains(back, []byte(want)) || !bytes.Contains(vcd, []byte(strings.TrimSpace(want))) {
			t.Errorf("the waveform through GTKWave's vcd2fst/fst2vcd lost %q", want)
		}
	}
}

// lyingTool is an RTL simulator whose log stops after three cycles.
type lyingTool struct{ real Tool }

func (l lyingTool) Name() string { return "lying" }
func (l lyingTool) Run(dir string, srcs []string) ([]string, error) {
	lines, err := l.real.Run(dir, srcs)
	return lines[:min(3, len(lines))], err
}

// TestRTLFailureReport: when the Verilog's run differs from the
// simulator's, the verdict names the cycle and both lines, keeps the work
// files and writes the simulator's waveform of the same run next to them.
func TestRTLFailureReport(t *testing.T) {
	tools.Require(t, "iverilog")
	v := mustLookup(t, "sum-int32").Verify(1, []Tool{lyingTool{replay.Icarus}})
	r := v.RTL["lying"]
	f := regexp.MustCompile(`^seed 1, \d+ elements: cycle 3:\n  simulator: .*\n  RTL:       ; work files in (\S+); waveform: (\S+)$`).FindStringSubmatch(r)
	if v.OK() || f == nil {
		t.Fatalf("verdict %q", r)
	}
	defer os.RemoveAll(f[1])
	if _, err := os.Stat(filepath.Join(f[1], "tb.v")); err != nil {
		t.Errorf("work files: %v", err)
	}
	if filepath.Dir(f[2]) != f[1] {
		t.Errorf("waveform %s not in %s", f[2], f[1])
	}
	if b, err := os.ReadFile(f[2]); err != nil || !bytes.Contains(b, []byte("$enddefinitions $end")) {
		t.Errorf("waveform: %v", err)
	}
}

// TestFailureReportBeat: a beat-level kernel that disagrees with its
// reference (it adds 1 to each beat's first element, the reference passes
// the packet on) fails with a report that shows the input beat the wrong
// output came from, as 32-bit words, the same words the case's input
// holds there.
func TestFailureReportBeat(t *testing.T) {
	k := &Kernel{Name: "off-by-one", Version: "0.1.0", In: Int32, Lanes: 16, Inputs: 1,
		Body: func(s *Step) {
			m := s.M
			d := s.In[0].Data
			s.Out = Beat{Data: m.Concat(m.Slice(d, 32, 480), m.Add(m.Slice(d, 0, 32), m.Const(32, 1))), Keep: s.In[0].Keep, Last: s.In[0].Last}
		},
		RefPacket: func(in [][]byte) ([]byte, error) { return bytes.Clone(in[0]), nil },
	}
	v := k.Verify(1, nil)
	if v.OK() {
		t.Fatal("a wrong kernel passed")
	}
	f := regexp.MustCompile(`^seed 1, case (\d+) \(input packets of (\d+) bytes\): output byte \d+, beat (\d+), lane 0, cycle \d+: ` +
		`got 0x[0-9a-f]{8}, want 0x[0-9a-f]{8} \(input 0, beat (\d+), 32-bit words: ([0-9a-f ]+)\); waveform: (\S+)$`).FindStringSubmatch(v.Sim)
	if f == nil {
		t.Fatalf("report %q shows no input beat", v.Sim)
	}
	defer os.RemoveAll(filepath.Dir(f[6]))
	if f[3] != f[4] {
		t.Errorf("output beat %s, input beat %s", f[3], f[4])
	}
	words := strings.Fields(f[5])
	if len(words) == 0 || len(words) > 16 {
		t.Fatalf("%d words", len(words))
	}
	want := strings.TrimPrefix(regexp.MustCompile(`want (0x[0-9a-f]{8})`).FindStringSubmatch(v.Sim)[1], "0x")
	if words[0] != want {
		t.Errorf("the beat's first word %s, but the reference (which passes it on) wants %s", words[0], want)
	}
}
