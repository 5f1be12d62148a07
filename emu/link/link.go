// Package link models one PCIe link, both directions, at TLP and DLLP
// granularity: generation and width with their line codes (in the symbol
// time), per-TLP framing, SKP ordered sets, Ack and UpdateFC DLLPs at the
// specification's recommended rates, credit-based flow control with finite
// receive buffers that stall the sender, a replay buffer released by Acks,
// damaged TLPs answered with a Nak and replayed (or replayed when the
// replay timer expires), REPLAY_NUM rollover, and propagation delay. See
// docs/emu.md for what is and is not modelled.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package link

import (
	"fmt"
	"math"

	"onic/emu/sim"
	"onic/pcie/dll"
	"onic/pcie/lanes"
	"onic/tlp"
)

// Class is a flow-control class.
type Class uint8

// Flow-control classes.
const (
	Posted Class = iota
	NonPosted
	Completion
	numClasses
)

var classNames = [numClasses]string{"posted", "non-posted", "completion"}

// String returns "posted", "non-posted" or "completion".
func (c Class) String() string { return classNames[c%numClasses] }

// ClassOf returns the flow-control class of a TLP kind.
func ClassOf(k tlp.Kind) Class {
	switch {
	case k.IsPosted():
		return Posted
	case k.IsRequest():
		return NonPosted
	}
	return Completion
}

// Packet is a TLP crossing the link.
type Packet struct {
	Class   Class
	Bytes   int    // TLP bytes: prefixes, header, payload, digest
	Payload int    // data bytes, for data credits
	Arg     uint64 // the sender's cookie, handed to the receiver
	TLP     *tlp.TLP
	// Room is what p takes in its sender's egress buffer while it waits
	// to be sent, in the sender's own unit (the O-NIC counts data
	// beats): the link sums it per end (QueuedRoom, NotifyRoom).
	Room int
}

// Credits are receive-buffer sizes in flow-control credits: one header
// credit per TLP, one data credit per 16 bytes. Zero means infinite, as
// root complexes and endpoints advertise for completions.
type Credits struct {
	PH, PD, NPH, NPD, CplH, CplD int
}

// DefaultCredits: 64 headers and 16 KiB of posted data, 64 non-posted
// headers and 1 KiB of their data, infinite completions.
var DefaultCredits = Credits{PH: 64, PD: 1024, NPH: 64, NPD: 64}

// Config describes a link.
type Config struct {
	Gen   tlp.Gen
	Lanes int
	// MPS selects the Ack and UpdateFC timing (the tables are by MPS).
	MPS int
	// Propagation is the flight time in each direction.
	Propagation sim.Time
	// Credits are the receive buffers at each end (DefaultCredits if zero).
	Credits Credits
	// ReplayBytes is each transmitter's replay buffer (default 16 KiB): a
	// TLP waits while the unacknowledged bytes would exceed it.
	ReplayBytes int
	// ReplayTimeout is the replay timer's limit (0: PCIe's REPLAY_TIMER,
	// about three Ack latency limits, Base §3.6.2.1, plus the round trip,
	// which its tables leave out).
	ReplayTimeout sim.Time
	// RxDelay is how long a receiver holds a TLP before freeing its
	// buffer credits.
	RxDelay sim.Time
	// Plan, when set, makes this an O-NIC's optical link instead of an
	// electrical PCIe one: its time is the optical link layer's 512-bit
	// words (docs/hdl.md, "The optical link") on lane plan Plan, a word
	// every Plan.WordPS64(ClockMHz) — the plan's word time, or the
	// slower end's user-clock period when the plan is faster. A TLP
	// takes whole words (its bytes and Framing over 64, rounded up: the
	// RTL's frames start on word boundaries), an Ack or UpdateFC one
	// control word that carries both the Ack and the credits, as the
	// RTL's does, and there are no SKP ordered sets (the transceiver
	// wrapper compensates clocks with control words). Ack and UpdateFC
	// wait as the RTL's AckCycles default does. Gen and Lanes are then
	// ignored.
	Plan lanes.Plan
	// ClockMHz is the user clock of the optical link's ends (with Plan;
	// default 250).
	ClockMHz float64
	// RxWords, with Plan, is each end's receive buffer in the optical
	// link layer's 64-byte words, one pool for every TLP as the RTL's
	// (optlink's rx_words, docs/hdl.md): a TLP takes the words of its
	// frame's token, four-DW header slot and payload, and PCIe's credits
	// per class (Credits) do not apply. Zero keeps Credits.
	RxWords int
}

// DefaultRxWords is an optical link end's receive buffer in words, as the
// RTL's optical link layer has it by default (optlink's rx_words: 16 KiB).
const DefaultRxWords = 256

// frontDWs is what an optical frame holds before its payload: the token
// and the four-DW header slot (docs/hdl.md, "The optical link").
const frontDWs = 5

// wordBytes is the optical link's word: what one of its symbol times
// carries.
const wordBytes = 64

// Receiver takes TLPs as they arrive at one end of a link.
type Receiver interface {
	// Receive is called when p has arrived at end side (0 or 1). It
	// returns how long p stays in the end's receive buffer beyond the
	// link's RxDelay: 0 when the receiver takes it at once, longer when
	// whatever drains the buffer is busy. The TLP's credits are freed
	// after that, so a slow receiver holds its sender back. HoldOpen
	// keeps them until the receiver calls Release: it cannot tell yet
	// when it will take p.
	Receive(l *Link, side int, p *Packet) (hold sim.Time)
}

// HoldOpen is what Receive returns to keep a TLP's receive-buffer
// credits for an unknown time, until the receiver calls Release.
const HoldOpen sim.Time = -1 << 62

// Stats counts what one direction carried.
type Stats struct {
	TLPs, TLPBytes, PayloadBytes uint64
	Acks, UpdateFCs, SKPs        uint64
	BusySymbols                  int64
	CreditStalls, ReplayStalls   uint64 // times the transmitter had TLPs but could not send
	// The data link layer's recovery (PCIe Base §3.6): TLPs of this
	// direction that arrived damaged (a bad LCRC: the receiver discards
	// them), Naks this end's transmitter sent for TLPs it received
	// damaged or out of sequence, the replays it started (for a Nak or
	// its replay timer) and the TLPs they sent again, the replays its
	// replay timer started, and REPLAY_NUM rollovers (a fourth replay of
	// the same TLP).
	Damaged, Naks, Replays, Resent, ReplayTimeouts, Rollovers uint64
}

type itemKind uint8

const (
	itemTLP itemKind = iota
	itemAck
	itemFC
	itemSKP
	itemNak
)

type item struct {
	p       *Packet
	seq     uint64   // TLP sequence number, the acked sequence number, or (queued) the order it was queued in
	ready   sim.Time // queued: may not start before this; on the wire: arrives then
	hdr, pd int32    // UpdateFC credits returned
	kind    itemKind
	class   Class
	bad     bool // a TLP that arrives damaged
	again   bool // a TLP sent again from the replay buffer
}

// ring is a FIFO that grows as needed and then stops allocating. Its size
// is a power of two, so positions wrap with a mask. Popped slots are not
// cleared: a stale packet pointer only keeps alive a packet its owner
// keeps anyway.
type ring[T any] struct {
	buf        []T
	head, size int
}

func (r *ring[T]) push(v T) {
	if r.size == len(r.buf) {
		nb := make([]T, max(16, 2*len(r.buf)))
		for i := 0; i < r.size; i++ {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.size)&(len(r.buf)-1)] = v
	r.size++
}

func (r *ring[T]) front() *T { return &r.buf[r.head] }

// at is the i-th element from the front.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

func (r *ring[T]) pop() T {
	v := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.size--
	return v
}

// unacked is a TLP in a replay buffer: its sequence number, size and
// packet.
type unacked struct {
	seq   uint64
	bytes int64
	p     *Packet
}

// dir is one direction: the transmitter at end `from` and the receiver at
// the other end.
type dir struct {
	// transmitter
	queue    [numClasses]ring[item]
	rr       int
	busy     bool  // an evTxDone is due at nextSym, where the current burst ends
	inBurst  int   // items in the burst ending at nextSym
	nextSym  int64 // first free symbol time
	sinceSKP int64 // symbol times sent since the last SKP ordered set
	limitH   [numClasses]int64
	limitD   [numClasses]int64
	usedH    [numClasses]int64
	usedD    [numClasses]int64
	seq      uint64        // last TLP sequence number sent
	queued   uint64        // TLPs queued so far: a queued item's order stamp
	replay   ring[unacked] // unacknowledged TLPs
	unacked  int64
	resend   int // the replay buffer's last TLPs still to be sent again
	// The replay timer: running, and when it last started again (a TLP
	// sent into an empty replay buffer, an Ack that acknowledged some, a
	// replay); replayNum counts replays since the last Ack that did.
	timerArmed bool
	progress   sim.Time
	replayNum  int
	ackOut     bool   // an Ack to send on this direction
	nakOut     bool   // a Nak to send on this direction (with ackSeq)
	ackSeq     uint64 // for TLPs received by this direction's transmitter end
	fcOut      [numClasses]bool
	fcH, fcD   [numClasses]int64 // credits to return on this direction
	flight     ring[item]        // items on the wire, in order
	stalled    bool
	// room sums the Room of the TLPs queued; roomH is told, with
	// roomArg, once it falls to roomAt (NotifyRoom; nil: nobody asked).
	room    int64
	roomAt  int64
	roomH   sim.Handler
	roomArg uint64
	// receiver (the far end) for TLPs of this direction
	rxSeq    uint64
	nakSched bool // NAK_SCHEDULED: a Nak went out, no good TLP since
	ackArmed bool
	fcArmed  [numClasses]bool
	rxUsedH  [numClasses]int64
	rxUsedD  [numClasses]int64
	// held are the credits of TLPs the receiver holds open (HoldOpen),
	// oldest first.
	held  ring[heldTLP]
	Stats Stats
}

// heldTLP is the credits of a TLP held open by its receiver.
type heldTLP struct {
	class Class
	dc    int64
}

// Link is a PCIe link between end 0 and end 1.
type Link struct {
	s        *sim.Sim
	cfg      Config
	p64      int64 // symbol period times 64, in ps
	ackSym   int64
	fcSym    int64
	skpEvery int64
	skpLen   int64
	width    int64             // bytes a symbol time carries: the lanes, or an optical word
	optical  bool              // timed in the optical link's words (Config.Plan)
	bufH     [numClasses]int64 // receive buffer sizes (0: infinite)
	bufD     [numClasses]int64
	// pooled: one receive buffer of words for every class (RxWords), in
	// bufD[Posted]; maxCost is what the largest TLP takes of a buffer.
	pooled   bool
	maxCost  int64
	dirs     [2]dir
	rx       [2]Receiver
	down     bool
	epoch    uint64 // bumped when the link goes down: arrivals from before are lost
	lost     LostFunc
	damage   DamageFunc
	rollover func(side int)
	// replayTime is the replay timer's limit.
	replayTime sim.Time
}

// DamageFunc says whether TLP p, put on the wire from end side (first
// sent or sent again), arrives damaged: its LCRC does not check, so the
// receiver discards it and asks for a replay with a Nak.
type DamageFunc func(side int, p *Packet) bool

// OnDamage sets what decides which TLPs arrive damaged (nil: none do).
// The replay timer runs only while one is set: nothing is lost without
// it.
func (l *Link) OnDamage(f DamageFunc) { l.damage = f }

// OnRollover sets what is told when REPLAY_NUM rolls over at end side's
// transmitter: four replays of the same TLP with no Ack between them,
// after which PCIe's data link layer has its physical layer retrain
// (Base §3.6.2.1). f may take the link down; the link counts the
// rollover and replays again if it does not.
func (l *Link) OnRollover(f func(side int)) { l.rollover = f }

// LostFunc is told about each TLP lost because the link went down while
// it was on the wire or waiting to be sent from end side.
type LostFunc func(side int, p *Packet)

// OnLost sets what is told about TLPs the link loses when it goes down.
func (l *Link) OnLost(f LostFunc) { l.lost = f }

// Up reports whether the link is up.
func (l *Link) Up() bool { return !l.down }

// SetDown takes the link down (as when its optical circuit goes dark):
// TLPs on the wire are lost, queued TLPs and DLLPs are discarded, and
// nothing is sent until SetUp. Each lost TLP is reported to OnLost.
func (l *Link) SetDown() {
	if l.down {
		return
	}
	l.down = true
	l.epoch++
	for side := range l.dirs {
		d := &l.dirs[side]
		// What the far end never received good: on the wire, or discarded
		// damaged and waiting to be sent again (every TLP on the wire is
		// in its sender's replay buffer until acknowledged).
		for i := range d.replay.size {
			if u := d.replay.at(i); u.seq > d.rxSeq && l.lost != nil {
				l.lost(side, u.p)
			}
		}
		d.flight.size, d.replay.size, d.held.size = 0, 0, 0
		for c := range d.queue {
			for d.queue[c].size > 0 {
				if it := d.queue[c].pop(); l.lost != nil {
					l.lost(side, it.p)
				}
			}
		}
		d.room = 0
		l.dequeued(d)
	}
}

// SetUp brings the link back (DL_Up after training): flow control starts
// again from the full advertised buffers, the replay buffers are empty,
// and sending resumes.
func (l *Link) SetUp() {
	if !l.down {
		return
	}
	l.down = false
	for side := range l.dirs {
		d := &l.dirs[side]
		stats := d.Stats
		next := d.nextSym
		*d = dir{}
		d.Stats, d.nextSym = stats, next
		d.limitH, d.limitD = l.bufH, l.bufD
	}
}

// Event kinds, in the low byte of an event's argument; bit 8 is the
// direction, bits 9-10 the class.
const (
	evTxDone = iota
	evArrive
	evAckTimer
	evFCTimer
	evFree
	evReplayTimer
)

// New builds a link in s, delivering TLPs that arrive at end 0 to rx0 and
// at end 1 to rx1. It checks the configuration.
func New(s *sim.Sim, c Config, rx0, rx1 Receiver) (*Link, error) {
	if c.Plan != (lanes.Plan{}) {
		if err := c.Plan.Check(); err != nil {
			return nil, fmt.Errorf("link: %v", err)
		}
		if c.ClockMHz == 0 {
			c.ClockMHz = 250
		}
		if !(c.ClockMHz >= 1 && c.ClockMHz <= 1000) {
			return nil, fmt.Errorf("link: clock %g MHz must be 1 to 1000", c.ClockMHz)
		}
		// The timing tables below are then the RTL's (Gen3 x16), read in
		// words.
		c.Gen, c.Lanes = tlp.Gen3, 16
	}
	if !c.Gen.Valid() {
		return nil, fmt.Errorf("link: gen %d: must be 1 to 5", c.Gen)
	}
	switch c.Lanes {
	case 1, 2, 4, 8, 16:
	default:
		return nil, fmt.Errorf("link: lanes %d: must be 1, 2, 4, 8 or 16", c.Lanes)
	}
	if err := tlp.CheckSize("link: mps", c.MPS); err != nil {
		return nil, err
	}
	if c.Propagation < 0 || c.RxDelay < 0 || c.ReplayTimeout < 0 {
		return nil, fmt.Errorf("link: propagation, replay_timeout and rx_delay must not be negative")
	}
	if c.Credits == (Credits{}) {
		c.Credits = DefaultCredits
	}
	if c.ReplayBytes == 0 {
		c.ReplayBytes = 16 << 10
	}
	if c.ReplayBytes < 4096+64 {
		return nil, fmt.Errorf("link: replay_bytes %d cannot hold one maximal TLP", c.ReplayBytes)
	}
	cr := c.Credits
	for _, v := range []int{cr.PH, cr.PD, cr.NPH, cr.NPD, cr.CplH, cr.CplD} {
		if v < 0 {
			return nil, fmt.Errorf("link: credits must not be negative")
		}
	}
	if cr.PD != 0 && cr.PD < c.MPS/16 || cr.CplD != 0 && cr.CplD < c.MPS/16 {
		return nil, fmt.Errorf("link: data credits must hold at least one MPS-sized payload (%d credits)", c.MPS/16)
	}
	l := &Link{s: s, cfg: c, p64: symbolPeriod64(c.Gen), rx: [2]Receiver{rx0, rx1},
		ackSym: dll.AckLatency(c.Gen, c.Lanes, c.MPS), fcSym: dll.UpdateFCLatency(c.Gen, c.Lanes, c.MPS)}
	l.skpEvery, l.skpLen = skipParams(c.Gen)
	l.width = int64(c.Lanes)
	if c.Plan != (lanes.Plan{}) {
		// Four symbol times of Gen3 x16 to a word, as the RTL's AckCycles.
		l.p64, l.width, l.skpEvery, l.optical = c.Plan.WordPS64(c.ClockMHz), wordBytes, math.MaxInt64, true
		l.ackSym, l.fcSym = max(1, l.ackSym/4), max(1, l.fcSym/4)
	}
	// PCIe's REPLAY_TIMER limits (Base §3.6.2.1) are about three Ack
	// latency limits; an optical link's round trip, which they leave out,
	// comes on top.
	l.replayTime = l.SymbolTime(3*l.ackSym) + 2*c.Propagation
	if c.ReplayTimeout > 0 {
		l.replayTime = c.ReplayTimeout
	}
	l.bufH = [numClasses]int64{int64(cr.PH), int64(cr.NPH), int64(cr.CplH)}
	l.bufD = [numClasses]int64{int64(cr.PD), int64(cr.NPD), int64(cr.CplD)}
	l.maxCost = int64(c.MPS / 16)
	if c.RxWords != 0 {
		if !l.optical || c.RxWords < 0 || c.RxWords > 1<<20 {
			return nil, fmt.Errorf("link: rx_words %d: an optical link's buffer of 1 to %d words", c.RxWords, 1<<20)
		}
		l.pooled = true
		l.bufH = [numClasses]int64{}
		l.bufD = [numClasses]int64{Posted: int64(c.RxWords)}
		l.maxCost = wordsOf(c.MPS)
		if int64(c.RxWords) < wordsOf(4096) {
			return nil, fmt.Errorf("link: rx_words %d cannot hold one maximal TLP (%d words)", c.RxWords, wordsOf(4096))
		}
	}
	for d := range l.dirs {
		l.dirs[d].limitH = l.bufH // the initial advertisement: the whole buffer
		l.dirs[d].limitD = l.bufD
	}
	return l, nil
}

// Config returns the link's configuration.
func (l *Link) Config() Config { return l.cfg }

// Stats returns what the transmitter at end side has sent.
func (l *Link) Stats(side int) Stats { return l.dirs[side].Stats }

// Counters calls visit with a pointer to each of both directions' Stats
// counters (BusySymbols as its bits), always in the same order: the
// emulator's transfer level (docs/emu.md) extrapolates them over the
// simulated time it skips.
func (l *Link) Counters(visit func(*uint64)) {
	for i := range l.dirs {
		st := &l.dirs[i].Stats
		for _, p := range []*uint64{&st.TLPs, &st.TLPBytes, &st.PayloadBytes, &st.Acks, &st.UpdateFCs, &st.SKPs,
			&st.CreditStalls, &st.ReplayStalls, &st.Damaged, &st.Naks, &st.Replays, &st.Resent, &st.ReplayTimeouts, &st.Rollovers} {
			visit(p)
		}
		busy := uint64(st.BusySymbols)
		visit(&busy)
		st.BusySymbols = int64(busy)
	}
}

// StallCounters calls visit with the counters among Counters' that count
// how often a TLP waited at the transmitter (for credits, for room in the
// replay buffer): how often depends on where the credits' return falls,
// not only on the traffic's rate.
func (l *Link) StallCounters(visit func(*uint64)) {
	for i := range l.dirs {
		visit(&l.dirs[i].Stats.CreditStalls)
		visit(&l.dirs[i].Stats.ReplayStalls)
	}
}

// SymbolTime returns the time of symbol k (k*period, rounded up to a ps).
func (l *Link) SymbolTime(k int64) sim.Time { return sim.Time((k*l.p64 + 63) / 64) }

// symbolAt returns the first symbol whose (rounded-up) time is at or after
// t: the smallest k with SymbolTime(k) >= t. It is exact at the times
// SymbolTime produces, so back-to-back transmissions lose no symbol.
func (l *Link) symbolAt(t sim.Time) int64 {
	if t <= 0 {
		return 0
	}
	return (int64(t)-1)*64/l.p64 + 1
}

// Queued returns how many TLPs wait at end side's transmitter.
func (l *Link) Queued(side int, c Class) int { return l.dirs[side].queue[c].size }

// DropQueued discards the TLPs waiting to be sent from end side but the
// keep queued first (over all classes, in the order they were queued),
// handing each discarded one to drop, and returns how many it discarded.
// TLPs already sent — on the wire or waiting for an Ack — stay. The O-NIC
// uses it when a port stalls: its egress buffer keeps what fits.
func (l *Link) DropQueued(side, keep int, drop func(*Packet)) int {
	d := &l.dirs[side]
	total := 0
	for c := range d.queue {
		total += d.queue[c].size
	}
	if total <= keep {
		return 0
	}
	// The first TLP to drop is the (keep+1)-th queued: each class's queue
	// is in order, so merge their heads that far.
	seqAt := func(c, i int) uint64 { q := &d.queue[c]; return q.buf[(q.head+i)&(len(q.buf)-1)].seq }
	var at [numClasses]int
	var limit uint64 // TLPs stamped below it stay
	for range keep + 1 {
		best := -1
		for c := range d.queue {
			if at[c] < d.queue[c].size && (best < 0 || seqAt(c, at[c]) < seqAt(best, at[best])) {
				best = c
			}
		}
		limit = seqAt(best, at[best])
		at[best]++
	}
	n := 0
	for c := range d.queue {
		q := &d.queue[c]
		k := 0
		for k < q.size && q.buf[(q.head+k)&(len(q.buf)-1)].seq < limit {
			k++
		}
		for i := k; i < q.size; i++ {
			p := q.buf[(q.head+i)&(len(q.buf)-1)].p
			d.room -= int64(p.Room)
			drop(p)
			n++
		}
		q.size = k
	}
	l.dequeued(d)
	return n
}

// EachQueued calls f with the TLPs waiting at end side's transmitter, in
// the order they were queued (over all classes), until f returns false.
func (l *Link) EachQueued(side int, f func(*Packet) bool) {
	d := &l.dirs[side]
	var at [numClasses]int
	seqAt := func(c int) uint64 { q := &d.queue[c]; return q.buf[(q.head+at[c])&(len(q.buf)-1)].seq }
	for {
		best := -1
		for c := range d.queue {
			q := &d.queue[c]
			if at[c] < q.size && (best < 0 || q.buf[(q.head+at[c])&(len(q.buf)-1)].seq < seqAt(best)) {
				best = c
			}
		}
		if best < 0 {
			return
		}
		q := &d.queue[best]
		p := q.buf[(q.head+at[best])&(len(q.buf)-1)].p
		at[best]++
		if !f(p) {
			return
		}
	}
}

// Send queues p for transmission from end side. TLPs of a class go in
// order; classes are served round-robin as their credits allow.
func (l *Link) Send(side int, p *Packet) { l.SendAt(side, p, 0) }

// SendAt queues p like Send, but it does not start before ready: a
// component with a fixed processing latency hands its output over at once
// instead of scheduling an event of its own. Ready times within a class
// must not decrease.
func (l *Link) SendAt(side int, p *Packet, ready sim.Time) {
	if l.down {
		if l.lost != nil {
			l.lost(side, p)
		}
		return
	}
	d := &l.dirs[side]
	d.queued++
	d.room += int64(p.Room)
	d.queue[p.Class].push(item{kind: itemTLP, p: p, ready: ready, seq: d.queued})
	l.kick(side)
}

func dataCredits(payload int) int64 { return int64(payload+15) / 16 }

// wordsOf is the receive-buffer words an optical frame with payload bytes
// of payload takes: its token, header slot and payload, in 64-byte words.
func wordsOf(payload int) int64 { return int64(frontDWs+(payload+3)/4+15) / 16 }

// cost is the class whose credits p takes and its data credits: its own
// class and dataCredits, or, on a pooled optical link, the pool's and the
// words of its frame.
func (l *Link) cost(p *Packet) (Class, int64) {
	if l.pooled {
		return Posted, wordsOf(p.Payload)
	}
	return p.Class, dataCredits(p.Payload)
}

// withCredits has an Ack or Nak of a pooled optical link carry the
// credits its transmitter d has to return, as the card's control word
// carries both the Ack or Nak and the credit limit: one word, not two.
func (l *Link) withCredits(d *dir, it item) item {
	if l.pooled && (d.fcH[Posted] != 0 || d.fcD[Posted] != 0) {
		it.class, it.hdr, it.pd = Posted, int32(d.fcH[Posted]), int32(d.fcD[Posted])
		d.fcH[Posted], d.fcD[Posted], d.fcOut[Posted] = 0, 0, false
	}
	return it
}

// next picks what transmitter side sends next, at time at: DLLPs first,
// then a TLP of the next class round-robin that is ready and whose credits
// and replay room allow it. If no TLP is ready yet, the one that will be
// ready first is committed now to start at its ready time (returned as
// start; 0 means at once): deciding early saves a wake-up event, at the
// price of a DLLP due meanwhile waiting one TLP.
func (l *Link) next(side int, at sim.Time) (it item, start sim.Time, ok bool) {
	d := &l.dirs[side]
	if d.nakOut {
		// A Nak acknowledges what came before the TLP it asks again for:
		// it stands for a pending Ack too.
		d.nakOut, d.ackOut = false, false
		return l.withCredits(d, item{kind: itemNak, seq: d.ackSeq}), 0, true
	}
	if d.ackOut {
		d.ackOut = false
		return l.withCredits(d, item{kind: itemAck, seq: d.ackSeq}), 0, true
	}
	for c := Class(0); c < numClasses; c++ {
		if d.fcOut[c] {
			d.fcOut[c] = false
			it := item{kind: itemFC, class: c, hdr: int32(d.fcH[c]), pd: int32(d.fcD[c])}
			d.fcH[c], d.fcD[c] = 0, 0
			if l.pooled {
				// The optical link's control word carries the Ack too.
				it.seq = l.dirs[1-side].rxSeq
			}
			return it, 0, true
		}
	}
	if d.resend > 0 {
		// A replay goes first, in order, before any new TLP (§3.6.2.1);
		// its credits were taken when it was first sent.
		u := d.replay.at(d.replay.size - d.resend)
		d.resend--
		return item{kind: itemTLP, p: u.p, seq: u.seq, again: true}, 0, true
	}
	waiting := false
	best, bestReady := -1, sim.Time(0)
	for i := 0; i < int(numClasses); i++ {
		c := Class((d.rr + i) % int(numClasses))
		q := &d.queue[c]
		if q.size == 0 {
			continue
		}
		waiting = true
		head := q.front()
		p := head.p
		if c != Posted && d.queue[Posted].size != 0 && d.queue[Posted].front().seq < head.seq {
			// PCIe ordering (Base Spec 5.0 Table 2-39): a request or
			// completion must not pass a posted write queued before it;
			// posted writes may pass both (so nothing deadlocks).
			continue
		}
		if cc, dc := l.cost(p); l.bufH[cc] != 0 && d.usedH[cc]+1 > d.limitH[cc] || l.bufD[cc] != 0 && d.usedD[cc]+dc > d.limitD[cc] {
			continue
		}
		if d.unacked+l.frameBytes(p) > int64(l.cfg.ReplayBytes) {
			if !d.stalled {
				d.Stats.ReplayStalls++
				d.stalled = true
			}
			return item{}, 0, false
		}
		r := max(head.ready, at)
		if best < 0 || r < bestReady {
			best, bestReady = int(c), r
			if r == at {
				break // ready now: take it, round-robin order
			}
		}
	}
	if best < 0 {
		if waiting && !d.stalled {
			d.Stats.CreditStalls++
			d.stalled = true
		}
		return item{}, 0, false
	}
	c := Class(best)
	p := d.queue[c].pop().p
	if p.Room != 0 {
		d.room -= int64(p.Room)
		l.dequeued(d)
	}
	cc, dc := l.cost(p)
	d.usedH[cc]++
	d.usedD[cc] += dc
	d.rr = (best + 1) % int(numClasses)
	d.seq++
	if bestReady == at {
		bestReady = 0
	}
	return item{kind: itemTLP, p: p, seq: d.seq}, bestReady, true
}

// burst is how many items a transmitter commits back to back: those
// waiting when it starts and those that come while the burst is on the
// wire. Committing a short burst saves an event per item; a DLLP that
// becomes due during a burst waits for its end (at most a few TLP times,
// well inside the Ack and UpdateFC latencies).
const burst = 4

// kick starts the transmitter at end side if it has work: it sends up to
// a burst of items back to back. Work that comes while a burst is on the
// wire joins it if the burst has room; an event marks the end of a burst
// only when the burst is full (more work may follow then), so a
// transmitter fed one item at a time needs no events of its own.
func (l *Link) kick(side int) {
	d := &l.dirs[side]
	if d.busy || l.down {
		return
	}
	now := l.symbolAt(l.s.Now())
	sym := d.nextSym
	if now >= sym {
		sym, d.inBurst = now, 0 // idle: a new burst
	}
	for d.inBurst < burst {
		var it item
		if d.sinceSKP >= l.skpEvery {
			it = item{kind: itemSKP}
		} else {
			var start sim.Time
			var ok bool
			if it, start, ok = l.next(side, l.SymbolTime(sym)); !ok {
				break
			}
			if start != 0 {
				sym = max(sym, l.symbolAt(start))
			}
		}
		d.stalled = false
		sym = l.transmit(side, it, sym)
		d.inBurst++
	}
	d.nextSym = max(d.nextSym, sym)
	if d.inBurst == burst {
		d.busy = true
		l.s.At(l.SymbolTime(d.nextSym), l, evTxDone|uint64(side)<<8|l.epoch<<16)
	}
}

// transmit puts item it on the wire of the transmitter at end side from
// symbol start and returns the symbol after it, scheduling its arrival.
func (l *Link) transmit(side int, it item, start int64) int64 {
	d := &l.dirs[side]
	var bytes int64
	switch it.kind {
	case itemTLP:
		bytes = l.frameBytes(it.p)
		if it.again {
			d.Stats.Resent++
		} else {
			d.Stats.TLPs++
			d.Stats.TLPBytes += uint64(it.p.Bytes)
			d.Stats.PayloadBytes += uint64(it.p.Payload)
			if d.replay.size == 0 {
				d.progress = l.SymbolTime(start)
			}
			d.replay.push(unacked{seq: it.seq, bytes: bytes, p: it.p})
			d.unacked += bytes
		}
		if l.damage != nil {
			it.bad = l.damage(side, it.p)
			if !d.timerArmed {
				d.timerArmed = true
				l.s.At(max(d.progress+l.replayTime, l.s.Now()), l, evReplayTimer|uint64(side)<<8|l.epoch<<16)
			}
		}
	case itemAck:
		bytes = DLLPBytes
		d.Stats.Acks++
	case itemNak:
		bytes = DLLPBytes
		d.Stats.Naks++
	case itemFC:
		bytes = DLLPBytes
		d.Stats.UpdateFCs++
	}
	syms := (bytes + l.width - 1) / l.width
	if it.kind == itemSKP {
		syms = l.skpLen
		d.sinceSKP = 0
		d.Stats.SKPs++
	} else {
		d.sinceSKP += syms
	}
	d.Stats.BusySymbols += syms
	end := start + syms
	if it.kind != itemSKP {
		// Items arrive in the order they were sent, so only the first one
		// on the wire has an event; arrive takes the rest in turn.
		it.ready = l.SymbolTime(end) + l.cfg.Propagation
		d.flight.push(it)
		if d.flight.size == 1 {
			l.s.At(it.ready, l, evArrive|uint64(side)<<8|l.epoch<<16)
		}
	}
	return end
}

// CanTake says whether the transmitter at end side could send p now, as
// far as the far end's credits and its own replay buffer go: a port that
// watches whether its partner takes TLPs again (the card's link is ready
// when its input slice has room, which a TLP waiting for credits takes).
func (l *Link) CanTake(side int, p *Packet) bool {
	d := &l.dirs[side]
	cc, dc := l.cost(p)
	if l.down || l.bufH[cc] != 0 && d.usedH[cc]+1 > d.limitH[cc] || l.bufD[cc] != 0 && d.usedD[cc]+dc > d.limitD[cc] {
		return false
	}
	return d.unacked+l.frameBytes(p) <= int64(l.cfg.ReplayBytes)
}

// frameBytes is what p takes on the wire and in the replay buffer: its
// bytes and Framing; on an optical link, whole words, the frame's header
// slot holding four DWs whatever the header's size (as the RTL's frame,
// its LCRC in the last word's last DW).
func (l *Link) frameBytes(p *Packet) int64 {
	b := int64(p.Bytes + Framing)
	if l.optical {
		b += int64(max(0, 16-(p.Bytes-p.Payload)))
		b = (b + wordBytes - 1) / wordBytes * wordBytes
	}
	return b
}

// Handle runs the link's events.
func (l *Link) Handle(s *sim.Sim, arg uint64) {
	side := int(arg >> 8 & 1)
	c := Class(arg >> 9 & 3)
	if k := arg & 0xFF; (k == evTxDone || k == evArrive || k == evReplayTimer) && arg>>16 != l.epoch&(1<<48-1) {
		return // scheduled before the link went down: what it concerned is gone
	}
	if l.down && arg&0xFF != evTxDone {
		return
	}
	switch arg & 0xFF {
	case evTxDone:
		d := &l.dirs[side]
		d.busy, d.inBurst = false, 0
		l.kick(side)
	case evArrive:
		l.arrive(side)
		if d := &l.dirs[side]; d.flight.size > 0 && !l.down {
			l.s.At(d.flight.front().ready, l, evArrive|uint64(side)<<8|l.epoch<<16)
		}
	case evAckTimer:
		// The receiver at end side acknowledges what it has received; the
		// Ack goes out on side's own transmitter.
		rxDir := &l.dirs[1-side]
		rxDir.ackArmed = false
		tx := &l.dirs[side]
		tx.ackOut, tx.ackSeq = true, rxDir.rxSeq
		l.kick(side)
	case evFCTimer:
		rxDir := &l.dirs[1-side]
		rxDir.fcArmed[c] = false
		tx := &l.dirs[side]
		if tx.fcH[c] != 0 || tx.fcD[c] != 0 {
			tx.fcOut[c] = true
			l.kick(side)
		}
	case evFree:
		l.free(side, c, int64(arg>>16&0xFFFF))
	case evReplayTimer:
		d := &l.dirs[side]
		d.timerArmed = false
		if d.replay.size == 0 {
			return // everything was acknowledged: the timer stops
		}
		if due := d.progress + l.replayTime; s.Now() < due {
			d.timerArmed = true // it was restarted meanwhile
			s.At(due, l, evReplayTimer|uint64(side)<<8|l.epoch<<16)
			return
		}
		d.Stats.ReplayTimeouts++
		if l.replayAll(side) {
			d.timerArmed = true
			s.At(d.progress+l.replayTime, l, evReplayTimer|uint64(side)<<8|l.epoch<<16)
		}
	}
}

// replayAll has the transmitter at end side send its whole replay buffer
// again (after a Nak or its replay timer), counting REPLAY_NUM. It
// reports false if the rollover handler took the link down.
func (l *Link) replayAll(side int) bool {
	d := &l.dirs[side]
	if d.replay.size == 0 {
		return true
	}
	d.progress = l.s.Now()
	if d.replayNum++; d.replayNum >= dll.ReplayRollover {
		d.replayNum = 0
		d.Stats.Rollovers++
		if l.rollover != nil {
			l.rollover(side)
			if l.down {
				return false
			}
		}
	}
	d.resend = d.replay.size
	d.Stats.Replays++
	l.kick(side)
	return true
}

// acknowledge releases the TLPs up to seq from the replay buffer of the
// transmitter at end side; if any were, the replay timer and REPLAY_NUM
// start again.
func (l *Link) acknowledge(side int, seq uint64) {
	tx := &l.dirs[side]
	n := tx.replay.size
	for tx.replay.size > 0 && tx.replay.front().seq <= seq {
		tx.unacked -= tx.replay.pop().bytes
	}
	if tx.replay.size != n {
		tx.progress, tx.replayNum = l.s.Now(), 0
		tx.resend = min(tx.resend, tx.replay.size)
	}
}

// arrive handles the next item arriving at the far end of direction side.
func (l *Link) arrive(side int) {
	d := &l.dirs[side]
	it := d.flight.pop()
	far := 1 - side
	switch it.kind {
	case itemTLP:
		p := it.p
		if it.bad || it.seq != d.rxSeq+1 {
			l.reject(side, it)
			return
		}
		d.rxSeq, d.nakSched = it.seq, false
		if !d.ackArmed {
			d.ackArmed = true
			l.s.At(l.SymbolTime(l.symbolAt(l.s.Now())+l.ackSym), l, evAckTimer|uint64(far)<<8)
		}
		// The receiver may reuse p (send it on, resized) before it
		// returns: take its credits first.
		class, dc := l.cost(p)
		d.rxUsedH[class]++
		d.rxUsedD[class] += dc
		var hold sim.Time
		if l.rx[far] != nil {
			hold = l.rx[far].Receive(l, far, p)
		}
		if hold == HoldOpen {
			d.held.push(heldTLP{class, dc})
			return
		}
		l.freeAfter(side, class, dc, max(hold, 0))
	case itemAck:
		// An Ack sent by end side acknowledges TLPs it received, which
		// the transmitter at the far end holds for replay (and, on a
		// pooled optical link, returns credits with them).
		l.acknowledge(far, it.seq)
		l.credit(far, it)
		l.kick(far)
	case itemNak:
		// A Nak acknowledges the TLPs before the one it names and has the
		// far end send the rest again.
		l.acknowledge(far, it.seq)
		l.credit(far, it)
		l.replayAll(far)
	case itemFC:
		if l.pooled {
			l.acknowledge(far, it.seq) // (the control word's Ack)
		}
		l.credit(far, it)
		l.kick(far)
	}
}

// credit gives the transmitter at end far the credits item it returns.
func (l *Link) credit(far int, it item) {
	tx := &l.dirs[far]
	tx.limitH[it.class] += int64(it.hdr)
	tx.limitD[it.class] += int64(it.pd)
}

// freeAfter frees a received TLP's credits after hold and the link's
// RxDelay.
func (l *Link) freeAfter(side int, class Class, dc int64, hold sim.Time) {
	if hold += l.cfg.RxDelay; hold == 0 {
		l.free(side, class, dc)
	} else {
		l.s.After(hold, l, evFree|uint64(side)<<8|uint64(class)<<9|uint64(dc)<<16)
	}
}

// Epoch names the link's current up period: it changes each time the
// link goes down. A receiver holding TLPs open passes it to Release.
func (l *Link) Epoch() uint64 { return l.epoch }

// Release frees, after hold, the credits of the oldest TLP that end side
// holds open (its Receive returned HoldOpen); a receiver releases its
// TLPs in the order they arrived. It does nothing if the link went down
// since epoch (Epoch then): what was held went with it.
func (l *Link) Release(side int, epoch uint64, hold sim.Time) {
	d := &l.dirs[1-side]
	if l.down || epoch != l.epoch || d.held.size == 0 {
		return
	}
	h := d.held.pop()
	l.freeAfter(1-side, h.class, h.dc, max(hold, 0))
}

// QueuedRoom is the Room of the TLPs waiting at end side's transmitter.
func (l *Link) QueuedRoom(side int) int64 { return l.dirs[side].room }

// NotifyRoom has the link tell h (with arg, at the time) once the Room
// of the TLPs waiting at end side's transmitter is at most room: at once
// if it is now. One notification is pending per end at a time; a new one
// replaces it. Going down empties the queue, which tells h too.
func (l *Link) NotifyRoom(side int, room int64, h sim.Handler, arg uint64) {
	d := &l.dirs[side]
	d.roomH, d.roomAt, d.roomArg = h, room, arg
	l.dequeued(d)
}

// dequeued tells the handler waiting for room at d, if the room it wants
// is there.
func (l *Link) dequeued(d *dir) {
	if d.roomH != nil && d.room <= d.roomAt {
		h := d.roomH
		d.roomH = nil
		l.s.At(l.s.Now(), h, d.roomArg)
	}
}

// reject discards a TLP of direction side that arrived damaged or out of
// sequence (PCIe Base §3.6.3.1): one already received (a replay of what
// an Ack was still on its way for) is acknowledged again; otherwise a Nak
// goes back unless one has gone since the last good TLP (NAK_SCHEDULED).
// It takes no credits: the replay will.
func (l *Link) reject(side int, it item) {
	d := &l.dirs[side]
	far := 1 - side
	if it.bad {
		d.Stats.Damaged++
	}
	if !it.bad && it.seq <= d.rxSeq {
		if !d.ackArmed {
			d.ackArmed = true
			l.s.At(l.SymbolTime(l.symbolAt(l.s.Now())+l.ackSym), l, evAckTimer|uint64(far)<<8)
		}
		return
	}
	if d.nakSched {
		return
	}
	d.nakSched = true
	tx := &l.dirs[far]
	tx.nakOut, tx.ackSeq = true, d.rxSeq
	l.kick(far)
}

// free releases receive-buffer credits of a TLP that arrived on direction
// side, and schedules their return: at once if the buffer had run full
// (the sender may be waiting), else with the next UpdateFC.
func (l *Link) free(side int, c Class, dc int64) {
	d := &l.dirs[side]
	far := 1 - side
	wasFull := l.bufH[c] != 0 && d.rxUsedH[c] >= l.bufH[c] || l.bufD[c] != 0 && d.rxUsedD[c]+l.maxCost > l.bufD[c]
	d.rxUsedH[c]--
	d.rxUsedD[c] -= dc
	if l.bufH[c] == 0 && l.bufD[c] == 0 {
		return // infinite credits: nothing to return
	}
	tx := &l.dirs[far]
	if l.bufH[c] != 0 {
		tx.fcH[c]++
	}
	if l.bufD[c] != 0 {
		tx.fcD[c] += dc
	}
	if wasFull {
		tx.fcOut[c] = true
		l.kick(far)
		return
	}
	if !d.fcArmed[c] {
		d.fcArmed[c] = true
		l.s.At(l.SymbolTime(l.symbolAt(l.s.Now())+l.fcSym), l, evFCTimer|uint64(far)<<8|uint64(c)<<9)
	}
}
