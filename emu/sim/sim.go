// Package sim is onic's discrete-event engine: integer picosecond time, a
// 4-ary min-heap of pending events held by value (no allocation once it has
// grown to the run's peak), and deterministic order — events at the same
// time run in the order they were scheduled.
//
// Components implement Handler and schedule themselves with At or After;
// the argument word lets one handler serve many kinds of event without a
// closure per event.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package sim

import (
	"fmt"
	"slices"
)

// Time is simulated time in picoseconds.
type Time int64

// Units of simulated time.
const (
	// Forever is the end of simulated time (about 106 days): no event is
	// later, and times past it are taken as it.
	Forever Time = 1<<63 - 1

	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// String formats t with a unit that keeps it readable, e.g. "1.25us".
func (t Time) String() string {
	switch a := max(t, -t); {
	case a >= Second:
		return fmt.Sprintf("%.6gs", float64(t)/float64(Second))
	case a >= Millisecond:
		return fmt.Sprintf("%.6gms", float64(t)/float64(Millisecond))
	case a >= Microsecond:
		return fmt.Sprintf("%.6gus", float64(t)/float64(Microsecond))
	case a >= Nanosecond:
		return fmt.Sprintf("%.6gns", float64(t)/float64(Nanosecond))
	}
	return fmt.Sprintf("%dps", int64(t))
}

// Handler is something that events happen to.
type Handler interface {
	// Handle runs the event scheduled with arg, at s.Now().
	Handle(s *Sim, arg uint64)
}

// entry is a heap element: the ordering key and where the event's payload
// is. Keeping payloads out of the heap makes sifting move 24 bytes, not 40.
type entry struct {
	at   Time
	seq  uint64
	slot uint32
}

func (a *entry) before(b *entry) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

type payload struct {
	h   Handler
	arg uint64
}

// Sim is one simulation: a clock and the pending events.
type Sim struct {
	now    Time
	seq    uint64
	heap   []entry
	slots  []payload
	free   []uint32 // free payload slots
	events uint64
	stop   bool
}

// New returns a simulation at time 0 with room for hint pending events.
func New(hint int) *Sim {
	hint = max(hint, 16)
	return &Sim{heap: make([]entry, 0, hint), slots: make([]payload, 0, hint), free: make([]uint32, 0, hint)}
}

// Now returns the current simulated time.
func (s *Sim) Now() Time { return s.now }

// Events returns how many events have run.
func (s *Sim) Events() uint64 { return s.events }

// Pending returns how many events are scheduled.
func (s *Sim) Pending() int { return len(s.heap) }

// At schedules h to handle arg at time t. A time in the past is taken as
// now: the engine never runs time backwards.
func (s *Sim) At(t Time, h Handler, arg uint64) {
	if t < s.now {
		t = s.now
	}
	s.seq++
	var slot uint32
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
		s.slots[slot] = payload{h, arg}
	} else {
		slot = uint32(len(s.slots))
		s.slots = append(s.slots, payload{h, arg})
	}
	s.heap = append(s.heap, entry{at: t, seq: s.seq, slot: slot})
	s.up(len(s.heap) - 1)
}

// After schedules h to handle arg d after now (at Forever if that is
// later).
func (s *Sim) After(d Time, h Handler, arg uint64) { s.At(s.Add(d), h, arg) }

// Add is now+d, saturating at Forever (and at now for a negative d).
func (s *Sim) Add(d Time) Time {
	if d <= 0 {
		return s.now
	}
	if d > Forever-s.now {
		return Forever
	}
	return s.now + d
}

// Stop makes Run return after the current event.
func (s *Sim) Stop() { s.stop = true }

// Run processes events in time order until none is left, the next one is
// later than until, or Stop is called. The clock ends at until (or at the
// last event, if Stop ended the run), never earlier than it started.
func (s *Sim) Run(until Time) {
	s.stop = false
	for len(s.heap) > 0 && !s.stop {
		if s.heap[0].at > until {
			break
		}
		s.runTop()
	}
	if !s.stop && until > s.now {
		s.now = until
	}
}

// RunLimit is Run that also returns after n events, so a caller can stay
// responsive during a long run; it reports whether the run reached until
// (or was stopped) rather than running out of its n events.
func (s *Sim) RunLimit(until Time, n int) bool {
	s.stop = false
	for len(s.heap) > 0 && !s.stop {
		if s.heap[0].at > until {
			break
		}
		if n <= 0 {
			return false
		}
		n--
		s.runTop()
	}
	if !s.stop && until > s.now {
		s.now = until
	}
	return true
}

// Step runs the next event, if any, and reports whether it ran one.
func (s *Sim) Step() bool {
	if len(s.heap) == 0 {
		return false
	}
	s.runTop()
	return true
}

// runTop removes the earliest event, frees its slot and runs it.
func (s *Sim) runTop() {
	e := s.pop()
	p := s.slots[e.slot]
	s.slots[e.slot] = payload{} // drop the handler reference
	s.free = append(s.free, e.slot)
	s.now = e.at
	s.events++
	p.h.Handle(s, p.arg)
}

// Shift moves the pending events that match earlier by d (never before
// now) and leaves the others where they are; among events at the same
// time, the order they were scheduled in still decides. It is how a
// caller that skips simulated time it accounts for otherwise (the
// cluster's transfer level) keeps what is fixed to the scenario's clock —
// a MEMS phase, a flow's start — at its time, while everything scheduled
// relative to now keeps its distance.
func (s *Sim) Shift(d Time, match func(h Handler, arg uint64) bool) {
	if d <= 0 {
		return
	}
	moved := false
	for i := range s.heap {
		e := &s.heap[i]
		if p := s.slots[e.slot]; match(p.h, p.arg) {
			e.at = max(e.at-d, s.now)
			moved = true
		}
	}
	if moved {
		h := s.heap
		slices.SortFunc(h, func(a, b entry) int {
			if a.before(&b) {
				return -1
			}
			if b.before(&a) {
				return 1
			}
			return 0
		})
	}
}

// The heap is 4-ary: shallower than a binary heap, and a node's children
// share a cache line.

func (s *Sim) up(i int) {
	h := s.heap
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (s *Sim) pop() entry {
	h := s.heap
	top := h[0]
	n := len(h) - 1
	last := h[n]
	s.heap = h[:n]
	if n == 0 {
		return top
	}
	h = s.heap
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		if c+3 < n { // all four children: a small tournament
			m1, m2 := c, c+2
			if h[c+1].before(&h[c]) {
				m1 = c + 1
			}
			if h[c+3].before(&h[c+2]) {
				m2 = c + 3
			}
			m = m1
			if h[m2].before(&h[m1]) {
				m = m2
			}
		} else {
			for j := c + 1; j < n; j++ {
				if h[j].before(&h[m]) {
					m = j
				}
			}
		}
		if !h[m].before(&last) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = last
	return top
}
