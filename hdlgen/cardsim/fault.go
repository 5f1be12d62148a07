package cardsim

import (
	"fmt"
	"time"

	"onic/hdlgen/internal/optlink"
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

// Fault makes port p of card i withhold its flow-control credits from its
// partner from from to to: all of them (hold 0: kind stall), or all but
// one TLP's more every hold (kind slow).
func (s *Set) Fault(i, p int, from, to, hold time.Duration) error {
	if i < 0 || i >= len(s.cards) || p < 0 || p >= Ports || from < 0 || to <= from || hold < 0 {
		return fmt.Errorf("cardsim: fault on card %d port %d from %v to %v (hold %v)", i, p, from, to, hold)
	}
	s.faults = append(s.faults, &creditFault{card: i, port: p, from: from, to: to, hold: hold})
	return nil
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
