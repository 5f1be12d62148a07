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

// word is a lane-interface word.
type word struct {
	data [8]uint64
	ctl  bool
}

// pair is a transmit and a receive module joined by a Fibre, on one
// clock.
type pair struct {
	t     testing.TB
	c     Config
	tx    *sim.Sim
	rx    *sim.Sim
	fibre *Fibre
	rng   *rand.Rand
	sent  []word // the words tx took
	got   []word // the words rx delivered
	slip  []bool
	// load is the chance the card offers a word in a cycle.
	load float64
}

func newPair(t testing.TB, c Config, fc FibreConfig) *pair {
	t.Helper()
	txm, err := TX(c)
	if err != nil {
		t.Fatal(err)
	}
	rxm, err := RX(c)
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{t: t, c: c, fibre: NewFibre(fc), rng: rand.New(rand.NewPCG(fc.Seed, 1)), slip: make([]bool, c.Lanes), load: 0.8}
	if p.tx, err = sim.New(txm); err != nil {
		t.Fatal(err)
	}
	if p.rx, err = sim.New(rxm); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*sim.Sim{p.tx, p.rx} {
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
		s.Set("gt_ready", 1)
	}
	return p
}

func (p *pair) get(s *sim.Sim, name string) uint64 {
	v, err := s.Get(name)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

func (p *pair) words(s *sim.Sim, name string) []uint64 {
	v, err := s.GetWords(name)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// step runs one cycle.
func (p *pair) step() {
	n := p.c.Lanes
	// The card's word on offer.
	var w word
	valid := p.rng.Float64() < p.load
	if valid {
		for i := range w.data {
			w.data[i] = p.rng.Uint64()
		}
		w.ctl = p.rng.IntN(5) == 0
	}
	p.tx.SetWords("tx_data", w.data[:])
	p.tx.Set("tx_ctl", b2u(w.ctl))
	p.tx.Set("tx_valid", b2u(valid))
	p.tx.Settle()
	if valid && p.get(p.tx, "tx_ready") == 1 {
		p.sent = append(p.sent, w)
	}
	txd := p.words(p.tx, "gt_txdata")
	txh := p.words(p.tx, "gt_txheader")
	data := make([]uint64, n)
	hdr := make([]uint8, n)
	for l := range n {
		data[l] = txd[l]
		hdr[l] = uint8(field(txh, 6*l, 2))
	}
	p.fibre.Send(data, hdr)

	rxData := make([]uint64, n)
	rxHdr := make([]uint8, n)
	rxValid := make([]bool, n)
	p.fibre.Receive(p.slip, rxData, rxHdr, rxValid)
	hw := make([]uint64, (6*n+63)/64)
	vw := uint64(0)
	for l := range n {
		setField(hw, 6*l, uint64(rxHdr[l]))
		if rxValid[l] {
			vw |= 3 << (2 * l)
		}
	}
	p.rx.SetWords("gt_rxdata", rxData)
	p.rx.SetWords("gt_rxheader", hw)
	p.rx.Set("gt_rxdatavalid", vw)
	p.rx.Set("gt_rxheadervalid", vw)
	p.rx.Settle()
	slips := p.get(p.rx, "gt_rxgearboxslip")
	for l := range n {
		p.slip[l] = slips>>l&1 == 1
	}
	if p.get(p.rx, "rx_valid") == 1 {
		var g word
		copy(g.data[:], p.words(p.rx, "rx_data"))
		g.ctl = p.get(p.rx, "rx_ctl") == 1
		p.got = append(p.got, g)
	}
	p.tx.Step()
	p.rx.Step()
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func field(ws []uint64, lo, w int) uint64 {
	v := ws[lo/64] >> (lo % 64)
	if lo%64+w > 64 {
		v |= ws[lo/64+1] << (64 - lo%64)
	}
	return v & (1<<w - 1)
}

func setField(ws []uint64, lo int, v uint64) {
	ws[lo/64] |= v << (lo % 64)
	if lo%64+6 > 64 {
		ws[lo/64+1] |= v >> (64 - lo%64)
	}
}

// runUntilUp steps until phy_up, failing after limit cycles.
func (p *pair) runUntilUp(limit int) int {
	for i := range limit {
		if p.get(p.rx, "phy_up") == 1 {
			return i
		}
		p.step()
	}
	p.t.Fatalf("lanes not bonded after %d cycles (locked %b)", limit, p.get(p.rx, "lanes_locked"))
	return 0
}

// match says where got runs in order within sent: the index in sent of
// got[0], and how many of got follow sent from there.
func match(sent, got []word) (at, same int) {
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

// TestScrambler: the software scrambler and descrambler invert each
// other, and the descrambler resynchronises from any state within a block
// (clause 49.2.6's self-synchronisation).
func TestScrambler(t *testing.T) {
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
	for _, n := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("%d lanes", n), func(t *testing.T) {
			skew := []int{3, 0, 7, 1, 5, 2, 6, 4}[:n]
			p := newPair(t, Config{Lanes: n, MarkerWords: 16}, FibreConfig{Lanes: n, Skew: skew, Seed: uint64(n)})
			up := p.runUntilUp(40000)
			from := len(p.sent)
			for range 4000 {
				p.step()
				if p.get(p.rx, "phy_up") != 1 {
					t.Fatalf("phy_up fell %d cycles after bonding", len(p.sent)-from)
				}
			}
			at, same := match(p.sent, p.got)
			if at < 0 || same != len(p.got) || same < 100 {
				t.Fatalf("%d words sent, %d delivered: %d in order from sent[%d]", len(p.sent), len(p.got), same, at)
			}
			if last := at + same; len(p.sent)-last > 8 {
				t.Errorf("%d words sent after the last delivered", len(p.sent)-last)
			}
			if at > from {
				t.Errorf("the first word delivered was sent %d words after bonding", at-from)
			}
			ctl := 0
			for _, w := range p.got {
				if w.ctl {
					ctl++
				}
			}
			if ctl == 0 {
				t.Error("no control word delivered")
			}
			if r := p.get(p.rx, "realigns"); r > 2 {
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
// catch: its frames and control words carry CRCs).
func TestLanesRecover(t *testing.T) {
	p := newPair(t, Config{Lanes: 4, MarkerWords: 16}, FibreConfig{Lanes: 4, Skew: []int{2, 0, 5, 1}, Seed: 9})
	p.runUntilUp(40000)
	for range 500 {
		p.step()
	}
	p.fibre.Slip(2, -1)
	fell := false
	for range 2000 {
		p.step()
		fell = fell || p.get(p.rx, "phy_up") == 0
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
	if at < mark-8 || same != len(p.got) || same < 100 {
		t.Fatalf("after the slip: %d delivered, %d in order from sent[%d] (rebonded at %d)", len(p.got), same, at, mark)
	}

	q := newPair(t, Config{Lanes: 4, MarkerWords: 16}, FibreConfig{Lanes: 4, Skew: []int{1, 3, 0, 2}, BitErrorRate: 1e-5, Seed: 5})
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
	t.Logf("bit errors at 1e-5: %d of %d words intact, %d realigns", good, len(q.sent), q.get(q.rx, "realigns"))
}

// TestVerilog: both modules, for every lane count, are clean under
// Verilator -Wall.
func TestVerilog(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8} {
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
		{Config{Lanes: 16}, "16 lanes"},
		{Config{Lanes: 3}, "3 lanes"},
		{Config{Lanes: 4, MarkerWords: 1}, "marker_words 1"},
		{Config{Lanes: 4, SkewBlocks: 5000}, "skew 5000"},
	} {
		if _, err := TX(c.c); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.c, err, c.want)
		}
	}
}

// TestSynth synthesises both modules for four lanes with Yosys
// (synth_xilinx, UltraScale+ cells) and holds the clock estimate of each
// above its word clock at 4x25.78125Gbps, a QSFP28 cage's plan: 390.625
// MHz (a 66-bit block a cycle with the asynchronous gearbox).
func TestSynth(t *testing.T) {
	tools.Require(t, "yosys")
	dir := t.TempDir()
	var tops []string
	for _, build := range []func(Config) (*ir.Module, error){TX, RX} {
		m, err := build(Config{Lanes: 4})
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
		tops = append(tops, m.Name())
	}
	const wordMHz = 25781.25 / 66
	for _, top := range tops {
		r, err := check.Synth(dir, top)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d LUT, %d FF, %d LUTRAM, %.0f MHz (%s to %s)", top, r.LUT, r.FF, r.LUTRAM, r.Timing.EstMHz, r.Timing.From, r.Timing.To)
		if r.Timing.EstMHz < wordMHz {
			t.Errorf("%s: clock estimate %.0f MHz, under the %.1f MHz word clock (%s to %s)", top, r.Timing.EstMHz, wordMHz, r.Timing.From, r.Timing.To)
		}
	}
}
