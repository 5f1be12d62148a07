package optlink

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/designs/internal/gty"
	"onic/hdlgen/ir"
)

// overLanes is one direction of a port over lanes (gty.Path) in the link
// tests' wire terms.
type overLanes struct{ *gty.Path }

func newOverLanes(t testing.TB, c gty.Config, fc gty.FibreConfig) overLanes {
	t.Helper()
	p, err := gty.NewPath(c, fc)
	if err != nil {
		t.Fatal(err)
	}
	return overLanes{p}
}

func (o overLanes) received() (wire, bool) {
	w, up := o.Received()
	return wire{data: w.Data, ctl: w.Ctl, valid: w.Valid}, up
}

func (o overLanes) step(w wire) { o.Step(gty.Word{Data: w.data, Ctl: w.ctl, Valid: w.valid}) }

// TestOverLanes: two link layers joined through the GTY wrappers and a
// model of the transceivers and fibre — four lanes a direction, and
// FLEET's sixteen on the 4-byte interface, skewed, each with its own
// block boundary to find, and bits flipped on the line — bond the lanes,
// train, and carry every TLP both ways exactly once, in order and
// unchanged, the damaged frames and control words repaired by Naks and
// replays (issue 48 point 3).
func TestOverLanes(t *testing.T) {
	m, err := Module(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{4, 16} {
		t.Run(fmt.Sprintf("%d lanes", n), func(t *testing.T) { overLanesRun(t, m, n) })
	}
}

func overLanesRun(t *testing.T, m *ir.Module, n int) {
	a, b := newCard(t, "A", m), newCard(t, "B", m)
	c := gty.Config{Lanes: n, MarkerWords: 32}
	skewAB := []int{3, 0, 5, 1, 2, 4, 0, 3, 1, 5, 2, 0, 4, 1, 3, 2}[:n]
	skewBA := []int{0, 4, 1, 2, 5, 3, 1, 0, 2, 4, 0, 3, 5, 2, 1, 4}[:n]
	ab := newOverLanes(t, c, gty.FibreConfig{Lanes: n, Skew: skewAB, BitErrorRate: 1e-5, Seed: 1})
	ba := newOverLanes(t, c, gty.FibreConfig{Lanes: n, Skew: skewBA, BitErrorRate: 1e-5, Seed: 2})
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
		wa := a.cycle(r, fromB, offer && r.Float64() < 0.8, r.Float64() < 0.8, ab.Ready())
		wb := b.cycle(r, fromA, offer && r.Float64() < 0.8, r.Float64() < 0.8, ba.Ready())
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
