package cardsim

import (
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/internal/vbench"
	"onic/testbenches/tools"
)

// recorder is a Set that keeps every input card 0 saw, cycle by cycle, as
// a stimulus to replay (vbench).
type recorder struct {
	*Set
	st    *vbench.Stimulus
	ports []sim.Port
}

// Cycle runs the set a cycle and records card 0's inputs of it (an input
// keeps the value driven until the next drive: after the cycle they are
// what it saw).
func (r *recorder) Cycle(now time.Duration) error {
	if err := r.Set.Cycle(now); err != nil {
		return err
	}
	s := r.cards[0].s
	vec := make([][]uint64, len(r.st.Inputs))
	vec[0] = []uint64{0} // rst
	for k, p := range r.ports {
		vec[k+1] = append([]uint64(nil), s.Read(p)...)
	}
	r.st.Cycles = append(r.st.Cycles, vec)
	return nil
}

// cardStimulus records onicA's card in the two-party scenario for d of
// simulated time (both hosts writing 64 KiB transfers into each other at
// the link's rate, after the links train), from reset: every input of
// the card every cycle, reading the outputs a driver reads.
func cardStimulus(tb testing.TB, d time.Duration) *vbench.Stimulus {
	cfg := scenario.TwoParty()
	cfg.Duration = d
	cl, err := cluster.Build(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	set, err := NewSet(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	m := set.cards[0].Module()
	st := &vbench.Stimulus{Inputs: []vbench.Port{{Name: "rst", Width: 1}},
		Reads: []string{"m_axis_cq_tready", "s_axis_rq_tvalid", "s_axis_cc_tvalid", "port_a_tx_valid", "port_a_state"}}
	r := &recorder{Set: set, st: st}
	// The first cycle: the reset New gave it, with the inputs New set.
	first := [][]uint64{{1}}
	for _, p := range m.Ports() {
		if p.Output {
			continue
		}
		port, err := set.cards[0].s.Port(p.Name)
		if err != nil {
			tb.Fatal(err)
		}
		st.Inputs = append(st.Inputs, vbench.Port{Name: p.Name, Width: m.Node(p.Node).W})
		r.ports = append(r.ports, port)
		first = append(first, make([]uint64, (m.Node(p.Node).W+63)/64))
	}
	st.Cycles = append(st.Cycles, first)
	if err := cl.UseHardware(r); err != nil {
		tb.Fatal(err)
	}
	rep, err := cl.Run()
	if err != nil {
		tb.Fatal(err)
	}
	if rep.Flows[0].Transfers == 0 || rep.RTL == nil || rep.RTL.Error != "" {
		tb.Fatalf("the recorded run: %+v, %+v", rep.Flows, rep.RTL)
	}
	return st
}

// The replay helper: a test binary of this package built with the card's
// generated Go laid over it (go build -overlay) replays a stimulus on the
// compiled card when its environment names one, and prints what it did.
const (
	replayEnv    = "ONIC_CARDSIM_REPLAY" // the directory with stimulus.gob
	replayRepEnv = "ONIC_CARDSIM_REPLAY_REPS"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(replayEnv); dir != "" {
		if err := replayCompiled(dir); err != nil {
			fmt.Fprintln(os.Stderr, "replay:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// replayCompiled replays dir/stimulus.gob on the two-party scenario's
// onicA card, which must run compiled, and prints "CYCLES SECONDS"; asked
// for 0 replays, it replays once from power-on and prints the sum of the
// outputs read (vbench.ReplaySink); asked for "outputs", the hash of
// every output every cycle (outputsHash).
func replayCompiled(dir string) error {
	f, err := os.Open(filepath.Join(dir, "stimulus.gob"))
	if err != nil {
		return err
	}
	var st vbench.Stimulus
	err = gob.NewDecoder(f).Decode(&st)
	f.Close()
	if err != nil {
		return err
	}
	set, err := NewSet(scenario.TwoParty(), nil)
	if err != nil {
		return err
	}
	s, err := sim.New(set.cards[0].Module())
	if err != nil {
		return err
	}
	if !s.Compiled() {
		return fmt.Errorf("the card's generated code is not linked in")
	}
	if os.Getenv(replayRepEnv) == "outputs" {
		fmt.Println(outputsHash(s, set.cards[0].Module(), &st))
		return nil
	}
	reps, err := strconv.Atoi(os.Getenv(replayRepEnv))
	if err != nil {
		return err
	}
	if reps == 0 {
		fmt.Println(vbench.ReplaySink(s, &st))
		return nil
	}
	start := time.Now()
	n := 0
	for range reps {
		n += vbench.Replay(s, &st)
	}
	fmt.Printf("%d %.9f\n", n, time.Since(start).Seconds())
	return nil
}

// BenchmarkCardVerilator: the two-party scenario's onicA card, the whole
// card onic hdl gen writes for it, replaying 20 µs of its run under
// full-rate writes both ways (about 7,000 cycles, every input every
// cycle), in Verilator built at -O3 (OPT_FAST=-O3, one thread) and in
// onic's simulator running the card's generated Go — the code onic emu
// --rtl compiles at run time, here built into a test binary of this
// package with go build's -overlay (a minute or two of compiling, outside
// the timing). It reports both speeds and onic's as a multiple of
// Verilator's (vbench.CompareWith), after checking that both read the
// same outputs from the replay (vbench.Sink, ReplaySink).
func BenchmarkCardVerilator(b *testing.B) {
	tools.Require(b, "go")
	verilator := tools.Require(b, "verilator")
	st := cardStimulus(b, 20*time.Microsecond)
	set, err := NewSet(scenario.TwoParty(), nil)
	if err != nil {
		b.Fatal(err)
	}
	m := set.cards[0].Module()
	dir := b.TempDir()
	vdir := filepath.Join(dir, "verilator")
	if err := os.Mkdir(vdir, 0o755); err != nil {
		b.Fatal(err)
	}
	bin, err := vbench.Build(vdir, verilator, m, st)
	if err != nil {
		b.Fatal(err)
	}
	replay := replayHelper(b, dir, m, st)
	// The same work: the outputs a driver reads sum alike in both.
	vsink, err := vbench.Sink(bin)
	if err != nil {
		b.Fatal(err)
	}
	var osink uint64
	if _, err := fmt.Sscan(replay("0"), &osink); err != nil || osink != vsink || vsink == 0 {
		b.Fatalf("the outputs read sum to %d in onic (%v) and %d in Verilator", osink, err, vsink)
	}
	b.ResetTimer()
	vbench.CompareWith(b, bin, st, func(reps int) (uint64, float64, error) {
		var cycles uint64
		var secs float64
		out := replay(strconv.Itoa(reps))
		if _, err := fmt.Sscan(out, &cycles, &secs); err != nil {
			return 0, 0, fmt.Errorf("the replay helper printed %q", out)
		}
		return cycles, secs, nil
	})
}

// replayHelper builds, in dir, the replay helper with m's generated Go
// laid over this package (go test -c -overlay: nothing generated is kept
// in the tree) and st as its stimulus, and returns a function running it
// with replayRepEnv set to reps and returning what it printed.
func replayHelper(tb testing.TB, dir string, m *ir.Module, st *vbench.Stimulus) func(reps string) string {
	tb.Helper()
	src, err := sim.GoSource(m, "cardsim", "benchCard", "the card's replay helper (built by its test or benchmark, never kept)")
	if err != nil {
		tb.Fatal(err)
	}
	gen := filepath.Join(dir, "card_gen.go")
	if err := os.WriteFile(gen, src, 0o644); err != nil {
		tb.Fatal(err)
	}
	here, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(here, "cardbench_gen_test.go"): gen}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), ov, 0o644); err != nil {
		tb.Fatal(err)
	}
	helper := filepath.Join(dir, "cardsim.test")
	if out, err := exec.Command("go", "test", "-c", "-overlay", filepath.Join(dir, "overlay.json"), "-o", helper, ".").CombinedOutput(); err != nil {
		tb.Fatalf("building the replay helper: %v\n%s", err, out)
	}
	f, err := os.Create(filepath.Join(dir, "stimulus.gob"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := gob.NewEncoder(f).Encode(st); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return func(reps string) string {
		cmd := exec.Command(helper)
		cmd.Env = append(os.Environ(), replayEnv+"="+dir, replayRepEnv+"="+reps)
		out, err := cmd.Output()
		if err != nil {
			tb.Fatalf("the replay helper: %v: %s", err, out)
		}
		return string(out)
	}
}

// outputsHash replays st on s from where it stands and returns an FNV-1a
// hash of every output port's words on every cycle (ports by name, so
// the interpreter's layout and the generated code's compare alike).
func outputsHash(s *sim.Sim, m *ir.Module, st *vbench.Stimulus) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for _, vec := range st.Cycles {
		s.SetReset(vec[0][0] != 0)
		for k, p := range st.Inputs[1:] {
			s.Drive(p.Name, vec[k+1])
		}
		for _, p := range m.Ports() {
			if !p.Output {
				continue
			}
			ws, _ := s.GetWords(p.Name)
			for _, w := range ws {
				binary.LittleEndian.PutUint64(buf[:], w)
				h.Write(buf[:])
			}
		}
		s.Step()
	}
	return h.Sum64()
}

// TestCardCompiled: the two-party scenario's onicA card, as --rtl
// compiles it (its generated Go: in parts flagged by the words they read,
// the hot words first), gives every output on every cycle of 20 µs of
// that scenario's traffic as the interpreter does, from power-on.
func TestCardCompiled(t *testing.T) {
	tools.Require(t, "go")
	st := cardStimulus(t, 20*time.Microsecond)
	set, err := NewSet(scenario.TwoParty(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := set.cards[0].Module()
	replay := replayHelper(t, t.TempDir(), m, st)
	ref, err := sim.NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	want := outputsHash(ref, m, st)
	var got uint64
	if _, err := fmt.Sscan(replay("outputs"), &got); err != nil || got != want {
		t.Fatalf("the compiled card's outputs hash to %#x (%v), the interpreter's to %#x", got, err, want)
	}
}
