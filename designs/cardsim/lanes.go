package cardsim

import (
	"onic/designs/internal/gty"
)

// LaneFibre joins port PA of card A to port PB of card B through the GTY
// wrappers a board top puts on each port (designs/internal/gty) and a
// model of the transceivers and fibre between them (gty.Fibre: per-lane
// skew, block boundaries to find, slips, bit errors), a gty.Path each
// way on the cards' clock: each card's port takes a word when its
// wrapper does, and its PHY is up while the far wrapper's lanes are
// bonded.
type LaneFibre struct {
	A, B   *Card
	PA, PB int
	ab, ba *gty.Path
}

// NewLaneFibre lights the circuit: c is both wrappers' shape, ab and ba
// the fibre models from A to B and back.
func NewLaneFibre(a *Card, pa int, b *Card, pb int, c gty.Config, ab, ba gty.FibreConfig) (*LaneFibre, error) {
	f := &LaneFibre{A: a, B: b, PA: pa, PB: pb}
	var err error
	if f.ab, err = gty.NewPath(c, ab); err != nil {
		return nil, err
	}
	if f.ba, err = gty.NewPath(c, ba); err != nil {
		return nil, err
	}
	a.takes[pa], b.takes[pb] = f.ab.Ready, f.ba.Ready
	return f, nil
}

// Path is the direction from card A (ab) or from card B.
func (f *LaneFibre) Path(fromA bool) *gty.Path {
	if fromA {
		return f.ab
	}
	return f.ba
}

// Carry moves one cycle's words through the wrappers and the fibre: call
// it after both cards' Cycle, before the next.
func (f *LaneFibre) Carry() {
	word := func(w Word) gty.Word { return gty.Word{Data: w.Data, Ctl: w.Ctl, Valid: w.Valid} }
	f.ab.Step(word(f.A.Lane(f.PA)))
	f.ba.Step(word(f.B.Lane(f.PB)))
	for _, x := range []struct {
		to   *Card
		port int
		from *gty.Path
	}{{f.B, f.PB, f.ab}, {f.A, f.PA, f.ba}} {
		w, up := x.from.Received()
		x.to.SetLane(x.port, Word{Data: w.Data, Ctl: w.Ctl, Valid: w.Valid})
		x.to.SetPHY(x.port, up)
	}
}
