package cardsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"onic/emu/scenario"

	"onic/designs/internal/optlink"
)

// creditFault is a scenario fault (emu/scenario.FaultConfig) on a card's
// port as a receiver, acted out on the lanes: the credit limit the port
// advertises to its partner in its control words is held back, so the
// partner's link sees what a receiver whose buffer does not drain shows
// it. A stall freezes the limit it advertised when the fault began until
// to; slow lets it grow by one TLP of MPS payload every hold (the model's
// receiver keeps each TLP's buffer hold longer than the one before it),
// never past what the port really grants. At to the port's own limit
// goes out again.
type creditFault struct {
	card, port int
	from, to   time.Duration
	hold       time.Duration // slow: per TLP; 0 for a stall
	limit      uint16        // the limit when it began
	started    bool
}

// slowTLPWords is what one TLP of a slow fault lets the limit grow: a
// frame of 256 bytes of payload (the scenarios' MPS), in data words.
var slowTLPWords = uint16(optlink.DataWords(256 / 4))

// Fault acts out scenario fault f, the scenario's faults[idx], on port p
// of card i as a receiver, from f.From to f.To: it withholds the port's
// flow-control credits from its partner — all of them (kind stall), or
// all but one TLP's more every f.Hold (kind slow) — or damages the frame
// words that reach it at the bit error rate f.BER (kind errors). The
// emulator checked f (cluster.Build).
func (s *Set) Fault(i, p, idx int, f scenario.FaultConfig) error {
	if i < 0 || i >= len(s.cards) || p < 0 || p >= Ports || f.From < 0 || f.To <= f.From || f.Hold < 0 {
		return fmt.Errorf("cardsim: fault %s on card %d port %d from %v to %v (hold %v)", f.Kind, i, p, f.From, f.To, f.Hold)
	}
	switch f.Kind {
	case "stall", "slow":
		s.faults = append(s.faults, &creditFault{card: i, port: p, from: f.From, to: f.To, hold: f.Hold})
	case "errors":
		if !(f.BER > 0 && f.BER < 1) {
			return fmt.Errorf("cardsim: fault on card %d port %d: ber %g", i, p, f.BER)
		}
		s.lines = append(s.lines, &lineFault{card: i, port: p, from: f.From, to: f.To,
			word: -math.Expm1(512 * math.Log1p(-f.BER)), rng: rand.New(rand.NewPCG(uint64(idx), 0x63617264))}) // ("card")
	default:
		return fmt.Errorf("cardsim: fault on card %d port %d: kind %q", i, p, f.Kind)
	}
	return nil
}

// lineFault is a scenario fault of kind errors on a card's port: the
// fibre into it flips a bit of a frame word at the odds of one wrong
// bit of 512 at the fault's bit error rate (each draw from the fault's
// own seeded source, so a run repeats). The LCRC covers every bit of a
// frame, so the port's link finds each damaged frame it examines.
// Control words are left alone, as the emulator's link damages only
// TLPs.
type lineFault struct {
	card, port int
	from, to   time.Duration
	word       float64 // the odds that a word has a wrong bit
	rng        *rand.Rand
}

// damage flips a bit of the data word port f.port of its card receives
// next, if the fault is on at now and the draw says so.
func (f *lineFault) damage(k *Card, now time.Duration) {
	w := &k.lanes[f.port]
	if now < f.from || now >= f.to || !w.Valid || w.Ctl || f.rng.Float64() >= f.word {
		return
	}
	bit := f.rng.IntN(64 * LaneWords)
	w.Data[bit/64] ^= 1 << (bit % 64)
}

// withhold rewrites the control word port f.port of its card sends at
// now, if the fault is on then.
func (f *creditFault) withhold(k *Card, now time.Duration) {
	w := &k.tx[f.port]
	if now < f.from || now >= f.to || !w.Valid || !w.Ctl {
		return
	}
	c, err := optlink.DecodeControl(w.optlink())
	if err != nil {
		return
	}
	if !f.started {
		f.limit, f.started = c.Limit, true
	}
	allowed := f.limit
	if f.hold > 0 {
		allowed += uint16(int64((now-f.from)/f.hold)) * slowTLPWords
	}
	if int16(c.Limit-allowed) > 0 { // (the limit counts on modulo 2^16)
		c.Limit = allowed
		*w = wordOf(c.Word())
	}
}
