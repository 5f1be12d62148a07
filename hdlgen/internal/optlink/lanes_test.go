package optlink

import (
	"math/rand/v2"
	"testing"

	"onic/hdlgen/internal/gty"
	"onic/hdlgen/sim"
)

// lanePath is one direction of a port over lanes: the sender's GTY
// wrapper (transmit), the transceivers and fibre (gty.Fibre), and the
// receiver's GTY wrapper (receive), on one clock.
type lanePath struct {
	t      testing.TB
	tx, rx *sim.Sim
	fibre  *gty.Fibre
	n      int
	slip   []bool
}

func newLanePath(t testing.TB, c gty.Config, fc gty.FibreConfig) *lanePath {
	t.Helper()
	txm, err := gty.TX(c)
	if err != nil {
		t.Fatal(err)
	}
	rxm, err := gty.RX(c)
	if err != nil {
		t.Fatal(err)
	}
	p := &lanePath{t: t, fibre: gty.NewFibre(fc), n: c.Lanes, slip: make([]bool, c.Lanes)}
	for _, s := range []**sim.Sim{&p.tx, &p.rx} {
		m := txm
		if s == &p.rx {
			m = rxm
		}
		if *s, err = sim.New(m); err != nil {
			t.Fatal(err)
		}
		(*s).SetReset(true)
		(*s).Step()
		(*s).SetReset(false)
		(*s).Drive("gt_ready", []uint64{1})
	}
	return p
}

func (p *lanePath) words(s *sim.Sim, name string) []uint64 {
	v, err := s.GetWords(name)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// ready says whether the sender's wrapper takes a word this cycle.
func (p *lanePath) ready() bool {
	p.tx.Settle()
	return p.words(p.tx, "tx_ready")[0] == 1
}

// received is what the receiver's wrapper delivers this cycle, and
// whether its lanes are bonded.
func (p *lanePath) received() (wire, bool) {
	var w wire
	copy(w.data[:], p.words(p.rx, "rx_data"))
	w.ctl = p.words(p.rx, "rx_ctl")[0] == 1
	w.valid = p.words(p.rx, "rx_valid")[0] == 1
	return w, p.words(p.rx, "phy_up")[0] == 1
}

// step sends w (taken if valid) and clocks both wrappers.
func (p *lanePath) step(w wire) {
	p.tx.Drive("tx_data", w.data[:])
	p.tx.Drive("tx_ctl", []uint64{b2u(w.ctl)})
	p.tx.Drive("tx_valid", []uint64{b2u(w.valid)})
	p.tx.Settle()
	txd, txh := p.words(p.tx, "gt_txdata"), p.words(p.tx, "gt_txheader")
	data, hdr := make([]uint64, p.n), make([]uint8, p.n)
	for l := range p.n {
		data[l] = txd[l]
		hdr[l] = uint8(txh[6*l/64] >> (6 * l % 64) & 3)
	}
	p.fibre.Send(data, hdr)
	rd, rh, rv := make([]uint64, p.n), make([]uint8, p.n), make([]bool, p.n)
	p.fibre.Receive(p.slip, rd, rh, rv)
	hw, vw := make([]uint64, (6*p.n+63)/64), uint64(0)
	for l := range p.n {
		hw[6*l/64] |= uint64(rh[l]) << (6 * l % 64)
		if rv[l] {
			vw |= 3 << (2 * l)
		}
	}
	p.rx.Drive("gt_rxdata", rd)
	p.rx.Drive("gt_rxheader", hw)
	p.rx.Drive("gt_rxdatavalid", []uint64{vw})
	p.rx.Drive("gt_rxheadervalid", []uint64{vw})
	p.rx.Settle()
	slips := p.words(p.rx, "gt_rxgearboxslip")[0]
	for l := range p.n {
		p.slip[l] = slips>>l&1 == 1
	}
	p.tx.Step()
	p.rx.Step()
}

// TestOverLanes: two link layers joined through the GTY wrappers and a
// model of the transceivers and fibre — four lanes a direction, skewed,
// each with its own block boundary to find, and bits flipped on the line
// — bond the lanes, train, and carry every TLP both ways exactly once, in
// order and unchanged, the damaged frames and control words repaired by
// Naks and replays (issue 48 point 3).
func TestOverLanes(t *testing.T) {
	m, err := Module(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	a, b := newCard(t, "A", m), newCard(t, "B", m)
	c := gty.Config{Lanes: 4, MarkerWords: 32}
	ab := newLanePath(t, c, gty.FibreConfig{Lanes: 4, Skew: []int{3, 0, 5, 1}, BitErrorRate: 1e-5, Seed: 1})
	ba := newLanePath(t, c, gty.FibreConfig{Lanes: 4, Skew: []int{0, 4, 1, 2}, BitErrorRate: 1e-5, Seed: 2})
	r := rand.New(rand.NewPCG(3, 4))
	sentA, sentB := a.queue(r, 300), b.queue(r, 300)
	upAt := -1
	cycles := 0
	for ; cycles < 200000 && (len(a.got) < len(sentB) || len(b.got) < len(sentA)); cycles++ {
		fromA, upB := ab.received()
		fromB, upA := ba.received()
		a.phyUp, b.phyUp = upA, upB
		// TLPs are offered once both links are up (a down link drops
		// what it is given: nothing waits at a dark port).
		offer := upAt >= 0
		wa := a.cycle(r, fromB, offer && r.Float64() < 0.8, r.Float64() < 0.8, ab.ready())
		wb := b.cycle(r, fromA, offer && r.Float64() < 0.8, r.Float64() < 0.8, ba.ready())
		ab.step(wa)
		ba.step(wb)
		if upAt < 0 && a.state() == StateUp && b.state() == StateUp {
			upAt = cycles
		}
	}
	if upAt < 0 {
		t.Fatalf("links never up in %d cycles", cycles)
	}
	if err := sameTLPs(sentA, b.got); err != nil {
		t.Errorf("A to B: %v", err)
	}
	if err := sameTLPs(sentB, a.got); err != nil {
		t.Errorf("B to A: %v", err)
	}
	repaired := 0
	for _, x := range []*card{a, b} {
		repaired += int(x.count("replays"))
		t.Logf("%s: %d replays, %d Naks, %d CRC errors, %d lost", x.name, x.count("replays"), x.count("naks"), x.count("crc_errors"), x.count("lost"))
	}
	if repaired == 0 {
		t.Error("bits flipped on the lanes but nothing was replayed")
	}
	t.Logf("up at cycle %d, done at %d", upAt, cycles)
}
