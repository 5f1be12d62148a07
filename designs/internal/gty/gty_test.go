package gty

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onic/hdlgen/check"
	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/hdlgen/verilog"
	"onic/testbenches/tools"
	"onic/testbenches/verilator"
)

// pair is a Path with a card offering it random words, and what went
// in and came out.
type pair struct {
	t    testing.TB
	path *Path
	rng  *rand.Rand
	sent []Word // the words the transmit module took
	got  []Word // the words the receive module delivered
	// load is the chance the card offers a word in a cycle.
	load float64
}

func newPair(t testing.TB, c Config, fc FibreConfig) *pair {
	t.Helper()
	p, err := NewPath(c, fc)
	if err != nil {
		t.Fatal(err)
	}
	return &pair{t: t, path: p, rng: rand.New(rand.NewPCG(fc.Seed, 1)), load: 0.8}
}

// step runs one cycle.
func (p *pair) step() {
	var w Word
	if w.Valid = p.rng.Float64() < p.load; w.Valid {
		for i := range w.Data {
			w.Data[i] = p.rng.Uint64()
		}
		w.Ctl = p.rng.IntN(5) == 0
	}
	if w.Valid && p.path.Ready() {
		p.sent = append(p.sent, w)
	}
	if g, _ := p.path.Received(); g.Valid {
		p.got = append(p.got, g)
	}
	p.path.Step(w)
}

// runUntilUp steps until phy_up, failing after limit cycles.
func (p *pair) runUntilUp(limit int) int {
	for i := range limit {
		if p.path.Get("phy_up") == 1 {
			return i
		}
		p.step()
	}
	p.t.Fatalf("lanes not bonded after %d cycles (locked %b)", limit, p.path.Get("lanes_locked"))
	return 0
}

// match says where got runs in order within sent: the index in sent of
// got[0], and how many of got follow sent from there.
func match(sent, got []Word) (at, same int) {
	if len(got) == 0 {
		return -1, 0
	}
	at = -1
	for i, w := range sent {
		if w == got[0] {
			at = i
			break
		}
	}
	if at < 0 {
		return -1, 0
	}
	for same < len(got) && at+same < len(sent) && sent[at+same] == got[same] {
		same++
	}
	return at, same
}

// TestScrambler: the software scrambler gives a public 10GBASE-R
// scrambler testbench's vector (payload 0x1e from an all-ones state
// scrambles to 0x7bfff0800000001e: written apart from this code, from
// clause 49.2.6); the transmit module's lane scrambles as it does, block
// for block; and the descrambler inverts it, resynchronising from any
// state within a block (clause 49.2.6's self-synchronisation).
func TestScrambler(t *testing.T) {
	if got, _ := Scramble(0x1e, 1<<58-1); got != 0x7bfff0800000001e {
		t.Errorf("0x1e from all ones scrambles to %#x, want 0x7bfff0800000001e", got)
	}
	// The RTL: one lane, so every block of a word goes on lane 0 in turn.
	tx, err := TX(Config{Lanes: 1, MarkerWords: 1000})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(tx)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	s.Set("gt_ready", 1)
	r := rand.New(rand.NewPCG(3, 4))
	var word [8]uint64
	state := uint64(0)
	for c := range 200 {
		s.Settle()
		if ready, _ := s.Get("tx_ready"); ready == 1 {
			for i := range word {
				word[i] = r.Uint64()
			}
			s.SetWords("tx_data", word[:])
			s.Set("tx_valid", 1)
			s.Settle()
		}
		got, _ := s.GetWords("gt_txdata")
		var want uint64
		want, state = Scramble(word[c%8], state)
		if got[0] != want {
			t.Fatalf("cycle %d: the lane sends %#x, the scrambler %#x", c, got[0], want)
		}
		s.Step()
	}

	rng := rand.New(rand.NewPCG(1, 2))
	var ts, rs uint64 = rng.Uint64() >> 6, 0
	for i := range 100 {
		p := rng.Uint64()
		line, nts := Scramble(p, ts)
		got, nrs := Descramble(line, rs)
		if i > 0 && got != p {
			t.Fatalf("block %d: %x descrambled to %x", i, p, got)
		}
		ts, rs = nts, nrs
	}
}

// TestLanesCarryWords: for each lane count, the transmit module, a fibre
// with skewed lanes and random block boundaries, and the receive module
// bond the lanes (locking every lane by slipping its gearbox, finding its
// markers, deskewing) and then deliver exactly the words the card sent,
// in order, control words marked, idle words left out.
func TestLanesCarryWords(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8, 16} {
		t.Run(fmt.Sprintf("%d lanes", n), func(t *testing.T) {
			skew := []int{3, 0, 7, 1, 5, 2, 6, 4, 2, 5, 0, 3, 6, 1, 4, 7}[:n]
			p := newPair(t, Config{Lanes: n, MarkerWords: 16}, FibreConfig{Lanes: n, Skew: skew, Seed: uint64(n)})
			up := p.runUntilUp(40000)
			from := len(p.sent)
			for range 4000 {
				p.step()
				if p.path.Get("phy_up") != 1 {
					t.Fatalf("phy_up fell %d cycles after bonding", len(p.sent)-from)
				}
			}
			at, same := match(p.sent, p.got)
			if at < 0 || same != len(p.got) || same < 100 {
				t.Fatalf("%d words sent, %d delivered: %d in order from sent[%d]", len(p.sent), len(p.got), same, at)
			}
			// What is still in flight: with 16 lanes a block carries two
			// words, so the fibre's skew (up to 7 blocks) and the block
			// each end holds are twice the words.
			inFlight := 8
			if n == 16 {
				inFlight = 24
			}
			if last := at + same; len(p.sent)-last > inFlight {
				t.Errorf("%d words sent after the last delivered", len(p.sent)-last)
			}
			if at > from {
				t.Errorf("the first word delivered was sent %d words after bonding", at-from)
			}
			ctl := 0
			for _, w := range p.got {
				if w.Ctl {
					ctl++
				}
			}
			if ctl == 0 {
				t.Error("no control word delivered")
			}
			if r := p.path.Get("realigns"); r > 2 {
				t.Errorf("%d realigns without errors", r)
			}
			t.Logf("bonded after %d cycles; %d words, %d control", up, len(p.got), ctl)
		})
	}
}

// TestLanesRecover: a lane that slips a bit loses block lock, the lanes
// unbond, and the receiver locks, finds the markers and bonds again; the
// words after that arrive in order. With bit errors on the line the lanes
// stay bonded and words keep coming (damaged ones are the link layer's to
// catch: its frames and control words carry CRCs). Four lanes, and
// sixteen on the 4-byte interface (a slip there moves a block boundary
// that spans two cycles).
func TestLanesRecover(t *testing.T) {
	for _, n := range []int{4, 16} {
		t.Run(fmt.Sprintf("%d lanes", n), func(t *testing.T) { lanesRecover(t, n) })
	}
}

func lanesRecover(t *testing.T, n int) {
	skew := []int{2, 0, 5, 1, 3, 6, 0, 4, 1, 2, 7, 3, 0, 5, 2, 6}[:n]
	p := newPair(t, Config{Lanes: n, MarkerWords: 16}, FibreConfig{Lanes: n, Skew: skew, Seed: 9})
	p.runUntilUp(40000)
	for range 500 {
		p.step()
	}
	p.path.Fibre().Slip(2, -1)
	fell := false
	for range 2000 {
		p.step()
		fell = fell || p.path.Get("phy_up") == 0
	}
	if !fell {
		t.Fatal("a slipped lane did not unbond the lanes")
	}
	p.runUntilUp(40000)
	p.got = p.got[:0]
	mark := len(p.sent)
	for range 3000 {
		p.step()
	}
	at, same := match(p.sent, p.got)
	inFlight := 8 // (twice with 16 lanes: TestLanesCarryWords)
	if n == 16 {
		inFlight = 24
	}
	if at < mark-inFlight || same != len(p.got) || same < 100 {
		t.Fatalf("after the slip: %d delivered, %d in order from sent[%d] (rebonded at %d)", len(p.got), same, at, mark)
	}

	q := newPair(t, Config{Lanes: n, MarkerWords: 16}, FibreConfig{Lanes: n, Skew: skew[:n], BitErrorRate: 1e-5, Seed: 5})
	q.runUntilUp(40000)
	q.got, q.sent = q.got[:0], q.sent[:0]
	for range 20000 {
		q.step()
	}
	good := 0
	for _, w := range q.got {
		for _, s := range q.sent {
			if s == w {
				good++
				break
			}
		}
	}
	if len(q.sent) == 0 || float64(good) < 0.9*float64(len(q.sent)) {
		t.Fatalf("bit errors at 1e-5: %d of %d words delivered intact", good, len(q.sent))
	}
	t.Logf("bit errors at 1e-5: %d of %d words intact, %d realigns", good, len(q.sent), q.path.Get("realigns"))
}

// TestVerilog: both modules, for every lane count, are clean under
// Verilator -Wall.
func TestVerilog(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8, 16} {
		tx, err := TX(Config{Lanes: n})
		if err != nil {
			t.Fatal(err)
		}
		rx, err := RX(Config{Lanes: n})
		if err != nil {
			t.Fatal(err)
		}
		verilator.Lint(t, tx, rx)
	}
}

// TestConfigErrors: shapes the wrapper cannot take are refused, naming
// the field.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		c    Config
		want string
	}{
		{Config{Lanes: 32}, "32 lanes"},
		{Config{Lanes: 3}, "3 lanes"},
		{Config{Lanes: 16, MarkerWords: 17}, "marker_words 17 must be even"},
		{Config{Lanes: 4, MarkerWords: 1}, "marker_words 1"},
		{Config{Lanes: 4, SkewBlocks: 5000}, "skew 5000"},
	} {
		if _, err := TX(c.c); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.c, err, c.want)
		}
	}
}

// TestSynth synthesises both modules with Yosys (synth_xilinx,
// UltraScale+ cells) and holds the clock estimate of each above its word
// clock: for four lanes at 4x25.78125Gbps, a QSFP28 cage's plan, 390.625
// MHz (a 66-bit block a cycle with the asynchronous gearbox); for sixteen
// at FLEET's 16x8.25Gbps on the 4-byte interface, 250 MHz (half a block
// a cycle, the line rate / 33).
func TestSynth(t *testing.T) {
	tools.Require(t, "yosys")
	for _, c := range []struct {
		lanes   int
		wordMHz float64
	}{{4, 25781.25 / 66}, {16, 8250.0 / 33}} {
		dir := t.TempDir()
		for _, build := range []func(Config) (*ir.Module, error){TX, RX} {
			m, err := build(Config{Lanes: c.lanes})
			if err != nil {
				t.Fatal(err)
			}
			fs, err := verilog.EmitDesign(m)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				if err := os.WriteFile(filepath.Join(dir, f.Name), f.Source, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := check.Synth(dir, m.Name())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d lanes, %s: %d LUT, %d FF, %d LUTRAM, %.0f MHz (%s to %s)", c.lanes, m.Name(), r.LUT, r.FF, r.LUTRAM, r.Timing.EstMHz, r.Timing.From, r.Timing.To)
			if r.Timing.EstMHz < c.wordMHz {
				t.Errorf("%d lanes, %s: clock estimate %.0f MHz, under the %.1f MHz word clock (%s to %s)", c.lanes, m.Name(), r.Timing.EstMHz, c.wordMHz, r.Timing.From, r.Timing.To)
			}
		}
	}
}
