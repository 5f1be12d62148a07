package cardsim

import (
	"fmt"
	"io"
	"slices"
	"time"

	"onic/emu/scenario"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// QuietCycles is how long a set of cards must be quiet (Set.Quiet) before
// nothing is left in flight: longer than the link layer's replay timer
// (2,048 cycles by default), so that a frame still unacknowledged would
// have been sent again, and far longer than its Ack latency.
const QuietCycles = 4096

// Set is a scenario's O-NICs run as cards in one clock, with the fibres
// of their lit circuits: what the emulator drives in place of its Go
// model (it implements emu/cluster.Hardware).
type Set struct {
	names  []string
	cards  []*Card
	period time.Duration
	fibres []*Fibre
	// lit are the ports with a fibre, by card and port.
	lit map[[2]int]*Fibre
	// partners are the ports whose circuit ends at a Partner (a Go-model
	// O-NIC's port), by card and port.
	partners map[[2]int]*partnerLink
	plinks   []*partnerLink // the same, in the order they were lit
	// vcd is the waveform window, if one was asked for (TraceWindow).
	vcd *window
	// faults are the ports withholding credits (Fault).
	faults []*creditFault
	// lines are the fibres into ports that damage frames (Fault, kind
	// errors).
	lines []*lineFault
}

// window is a card's waveform over simulated times [from, to).
type window struct {
	card     int
	from, to time.Duration
	w        io.Writer
	on, done bool
}

// NewSet builds the cards of cfg's O-NICs named in names (every O-NIC
// when names is empty). They share one clock, so their clock_mhz must be
// equal.
func NewSet(cfg scenario.Config, names []string) (*Set, error) {
	names, chosen, err := pick(cfg, names)
	if err != nil {
		return nil, err
	}
	s := &Set{lit: map[[2]int]*Fibre{}, partners: map[[2]int]*partnerLink{}}
	mhz := 0.0
	for i, o := range chosen {
		name := names[i]
		if mhz != 0 && o.ClockMHz != mhz {
			return nil, fmt.Errorf("onics[%s].clock_mhz: %g MHz, but the other cards run at %g: the cards share one clock", name, o.ClockMHz, mhz)
		}
		mhz = o.ClockMHz
		c, err := New(Config{ONIC: o, ID: tlp.NewID(1, 0, 0), Where: fmt.Sprintf("onics[%s]", name)})
		if err != nil {
			return nil, err
		}
		s.names, s.cards = append(s.names, name), append(s.cards, c)
	}
	s.period = time.Duration(float64(time.Microsecond) / mhz)
	return s, nil
}

// pick is the O-NICs of cfg named (all when names is empty), in that
// order, with their defaults, and their names.
func pick(cfg scenario.Config, names []string) ([]string, []scenario.ONICConfig, error) {
	if len(names) == 0 {
		for _, o := range cfg.ONICs {
			names = append(names, o.Name)
		}
	}
	var out []scenario.ONICConfig
	for _, name := range names {
		at := -1
		for i, o := range cfg.ONICs {
			if o.Name == name {
				at = i
			}
		}
		if at < 0 {
			return nil, nil, fmt.Errorf("--rtl %s: the scenario has no such O-NIC", name)
		}
		o := cfg.ONICs[at]
		o.Defaults()
		out = append(out, o)
	}
	return names, out, nil
}

// ONICs are the O-NICs the set runs, by scenario name; the other methods
// number them in this order.
func (s *Set) ONICs() []string { return s.names }

// Card is the i'th card.
func (s *Set) Card(i int) *Card { return s.cards[i] }

// Period is the cards' clock period.
func (s *Set) Period() time.Duration { return s.period }

// SetID gives card i its requester ID.
func (s *Set) SetID(i int, id tlp.ID) error { return s.cards[i].SetID(id) }

// Request hands card i a request from its host for BAR bar.
func (s *Set) Request(i int, t *tlp.TLP, bar int) error { return s.cards[i].Request(t, bar) }

// Complete hands card i its host's completion for one of its reads.
func (s *Set) Complete(i int, t *tlp.TLP) error { return s.cards[i].Complete(t) }

// Queued is how many beats wait to go into card i.
func (s *Set) Queued(i int) int { return s.cards[i].Queued() }

// Out is what card i has sent its host since the last call.
func (s *Set) Out(i int) []tlp.TLP { return s.cards[i].Out() }

// SetMSIX gives card i its function's MSI-X Enable and Function Mask.
func (s *Set) SetMSIX(i int, enable, mask bool) error { return s.cards[i].SetMSIX(enable, mask) }

// Light joins port pa of card a and port pb of card b with a fibre of
// delay cycles each way.
func (s *Set) Light(a, pa, b, pb, delay int) error {
	if a == b && pa == pb {
		return fmt.Errorf("cardsim: %s port %d joined to itself", s.names[a], pa)
	}
	if s.partners[[2]int{a, pa}] != nil || s.partners[[2]int{b, pb}] != nil {
		return fmt.Errorf("cardsim: %s port %d or %s port %d is lit already", s.names[a], pa, s.names[b], pb)
	}
	if s.lit[[2]int{a, pa}] != nil || s.lit[[2]int{b, pb}] != nil {
		return fmt.Errorf("cardsim: %s port %d or %s port %d is lit already", s.names[a], pa, s.names[b], pb)
	}
	f := NewFibre(s.cards[a], pa, s.cards[b], pb, delay)
	s.fibres = append(s.fibres, f)
	s.lit[[2]int{a, pa}], s.lit[[2]int{b, pb}] = f, f
	return nil
}

// partnerLink is a card's port joined to a Partner by a fibre: rings of
// words on their way each way.
type partnerLink struct {
	card, port int
	p          *Partner
	toCard     []Word
	toPartner  []Word
	at         int
}

// LightPartner lights a circuit between port p of card i and a Partner
// (the far end a Go-model O-NIC's port is), delay cycles each way.
func (s *Set) LightPartner(i, p, delay int) error {
	k := [2]int{i, p}
	if s.lit[k] != nil || s.partners[k] != nil {
		return fmt.Errorf("cardsim: %s port %d is lit already", s.names[i], p)
	}
	delay = max(delay, 1)
	l := &partnerLink{card: i, port: p, p: NewPartner(), toCard: make([]Word, delay), toPartner: make([]Word, delay)}
	s.partners[k], s.plinks = l, append(s.plinks, l)
	s.cards[i].SetPHY(p, true)
	return nil
}

// PartnerSend queues t at the Partner of card i's port p, to go to the
// card; it reports false when the port has none.
func (s *Set) PartnerSend(i, p int, t tlp.TLP) bool {
	l := s.partners[[2]int{i, p}]
	if l == nil {
		return false
	}
	l.p.Send(t)
	return true
}

// PartnerQueued is how many TLPs wait at the Partner of card i's port p.
func (s *Set) PartnerQueued(i, p int) int {
	if l := s.partners[[2]int{i, p}]; l != nil {
		return l.p.Queued()
	}
	return 0
}

// PartnerGot is what the Partner of card i's port p took from the card
// since the last call.
func (s *Set) PartnerGot(i, p int) []tlp.TLP {
	if l := s.partners[[2]int{i, p}]; l != nil {
		return l.p.Got()
	}
	return nil
}

// Partner is the Partner of card i's port p, or nil.
func (s *Set) Partner(i, p int) *Partner {
	if l := s.partners[[2]int{i, p}]; l != nil {
		return l.p
	}
	return nil
}

// Dark ends the circuit at port p of card i (both ends go dark).
func (s *Set) Dark(i, p int) {
	if l := s.partners[[2]int{i, p}]; l != nil {
		l.p.SetPHY(false)
		s.cards[i].SetPHY(p, false)
		s.cards[i].SetLane(p, Word{})
		delete(s.partners, [2]int{i, p})
		s.plinks = slices.DeleteFunc(s.plinks, func(x *partnerLink) bool { return x == l })
		return
	}
	f := s.lit[[2]int{i, p}]
	if f == nil {
		return
	}
	f.Cut()
	for k, x := range s.lit {
		if x == f {
			delete(s.lit, k)
		}
	}
	for j, x := range s.fibres {
		if x == f {
			s.fibres = append(s.fibres[:j], s.fibres[j+1:]...)
			break
		}
	}
}

// Capture makes every card keep the TLPs its ports receive (Received).
func (s *Set) Capture(on bool) {
	for _, c := range s.cards {
		c.Capture(on)
	}
}

// Received is the TLPs port p of card i received since the last call.
func (s *Set) Received(i, p int) []tlp.TLP { return s.cards[i].Received(p) }

// PortTLPs is how many TLPs port p of card i has sent.
func (s *Set) PortTLPs(i, p int) uint64 { return s.cards[i].PortTLPs(p) }

// Dropped calls drop for each TLP card i's ports dropped since the last
// call (Card.Drops), in order.
func (s *Set) Dropped(i int, drop func(port int, hold bool, reason pmgr.Reason, word uint64)) {
	for _, d := range s.cards[i].Drops() {
		drop(d.Port, d.Hold, d.Reason, d.Word)
	}
}

// PortState is port p of card i's link state (0 down, 1 training, 2 up).
func (s *Set) PortState(i, p int) int { return s.cards[i].PortState(p) }

// Cycle runs every card one clock cycle, the one whose rising edge is at
// simulated time now (negative: before time 0, as when circuits lit at
// the start train), then carries the fibres' words.
func (s *Set) Cycle(now time.Duration) error {
	if v := s.vcd; v != nil && !v.done && now >= 0 {
		c := s.cards[v.card]
		switch {
		case !v.on && now >= v.from:
			c.s.VCDTime(uint64(now / time.Nanosecond))
			if err := c.TraceVCD(v.w, uint64(2*((s.period+time.Nanosecond)/(2*time.Nanosecond)))); err != nil {
				return err
			}
			v.on = true
		case v.on && now >= v.to:
			v.on, v.done = false, true
			if err := c.StopVCD(); err != nil {
				return err
			}
		}
		if v.on {
			c.s.VCDTime(uint64(now / time.Nanosecond))
		}
	}
	for _, c := range s.cards {
		if err := c.Cycle(); err != nil {
			return err
		}
	}
	for _, f := range s.faults {
		f.withhold(s.cards[f.card], now)
	}
	for _, f := range s.fibres {
		f.Carry()
	}
	for _, l := range s.plinks {
		c := s.cards[l.card]
		w := l.p.Cycle(l.toPartner[l.at])
		l.toPartner[l.at] = c.Lane(l.port)
		c.SetLane(l.port, l.toCard[l.at])
		l.toCard[l.at] = w
		l.at = (l.at + 1) % len(l.toCard)
	}
	for _, f := range s.lines {
		f.damage(s.cards[f.card], now)
	}
	return nil
}

// Counter is card i's counter of that name (Card.Counter).
func (s *Set) Counter(i int, name string) (uint64, error) {
	if i < 0 || i >= len(s.cards) {
		return 0, fmt.Errorf("cardsim: no card %d", i)
	}
	return s.cards[i].Counter(name)
}

// Quiet is how many cycles every card has been quiet (Card.Quiet), or 0
// while a lit circuit is not up at both ends (training is not quiet).
func (s *Set) Quiet() uint64 {
	q := ^uint64(0)
	for _, c := range s.cards {
		q = min(q, c.Quiet())
	}
	for k, f := range s.lit {
		if s.cards[k[0]].PortState(k[1]) != 2 || f == nil {
			return 0
		}
	}
	for k, l := range s.partners {
		if s.cards[k[0]].PortState(k[1]) != 2 || !l.p.Up() || l.p.Busy() {
			return 0
		}
	}
	return q
}

// TraceWindow writes card i's waveform over simulated times [from, to)
// to w as the set runs, each edge at its simulated time (Close ends it if
// the run stops inside the window).
func (s *Set) TraceWindow(i int, from, to time.Duration, w io.Writer) error {
	if i < 0 || i >= len(s.cards) {
		return fmt.Errorf("cardsim: no card %d", i)
	}
	if to <= from {
		return fmt.Errorf("cardsim: the waveform window's end, %v, is not after its start, %v", to, from)
	}
	s.vcd = &window{card: i, from: from, to: to, w: w}
	return nil
}

// Close ends a waveform window still open.
func (s *Set) Close() error {
	if v := s.vcd; v != nil && v.on {
		v.on, v.done = false, true
		return s.cards[v.card].StopVCD()
	}
	return nil
}
