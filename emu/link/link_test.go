package link

import (
	"fmt"
	"strings"
	"testing"

	"onic/emu/sim"
	"onic/tlp"
)

type sink struct {
	at   []sim.Time
	pkts []*Packet
	hold sim.Time // how long each TLP stays in the receive buffer
}

func (s *sink) Receive(l *Link, side int, p *Packet) sim.Time {
	s.at = append(s.at, l.s.Now())
	s.pkts = append(s.pkts, p)
	return s.hold
}

func newLink(t *testing.T, c Config) (*sim.Sim, *Link, *sink, *sink) {
	t.Helper()
	s := sim.New(0)
	a, b := &sink{}, &sink{}
	l, err := New(s, c, a, b)
	if err != nil {
		t.Fatal(err)
	}
	return s, l, a, b
}

// TestSymbolClock: symbolAt inverts SymbolTime exactly, for every
// generation, so back-to-back packets lose no symbol.
func TestSymbolClock(t *testing.T) {
	for g := tlp.Gen1; g <= tlp.Gen5; g++ {
		_, l, _, _ := newLink(t, Config{Gen: g, Lanes: 16, MPS: 256})
		for k := int64(0); k < 5000; k++ {
			if got := l.symbolAt(l.SymbolTime(k)); got != k {
				t.Fatalf("Gen%d: symbolAt(SymbolTime(%d)) = %d", g, k, got)
			}
		}
	}
}

// TestOneTLP: a 256-byte MWr (16-byte header) on Gen3 x16 takes
// ceil((16+256+8)/16) = 18 symbol times of 1.015625 ns, then 5 ns of
// flight.
func TestOneTLP(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Propagation: 5 * sim.Nanosecond})
	l.Send(0, &Packet{Class: Posted, Bytes: 16 + 256, Payload: 256})
	s.Run(sim.Microsecond)
	want := sim.Time(18*1015625/1000+1) + 5*sim.Nanosecond // 18 symbols = 18281.25 ps, rounded up
	if len(b.at) != 1 || b.at[0] != want {
		t.Fatalf("arrived at %v, want %v", b.at, want)
	}
	// The receiver acknowledges it and returns its credits on the other
	// direction; the data direction carried only the TLP.
	st0, st1 := l.Stats(0), l.Stats(1)
	if st0.TLPs != 1 || st0.Acks != 0 || st0.UpdateFCs != 0 || st1.Acks != 1 || st1.UpdateFCs != 1 {
		t.Fatalf("stats: data %+v, reverse %+v", st0, st1)
	}
	if l.dirs[0].unacked != 0 || l.dirs[0].limitH[Posted] != 64+1 {
		t.Fatalf("after the Ack and UpdateFC: unacked %d, PH limit %d", l.dirs[0].unacked, l.dirs[0].limitH[Posted])
	}
}

// TestCreditsBlockUntilUpdateFC: with one posted header credit the second
// TLP waits for the first one's UpdateFC.
func TestCreditsBlockUntilUpdateFC(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 128, Propagation: 50 * sim.Nanosecond,
		Credits: Credits{PH: 1, PD: 64, NPH: 8, NPD: 8}})
	for range 3 {
		l.Send(0, &Packet{Class: Posted, Bytes: 16 + 64, Payload: 64})
	}
	s.Run(10 * sim.Microsecond)
	if len(b.at) != 3 {
		t.Fatalf("%d of 3 TLPs arrived", len(b.at))
	}
	gap := b.at[1] - b.at[0]
	if gap < 100*sim.Nanosecond { // the UpdateFC's flight back plus the TLP's flight out
		t.Fatalf("second TLP %v after the first: it did not wait for credits", gap)
	}
	if l.Stats(0).CreditStalls == 0 {
		t.Error("no credit stall counted")
	}
}

// TestReceiverHoldThrottles: a receiver that keeps each TLP in its buffer
// for 1 us (Receive's hold) lets through only as many TLPs per hold as
// the buffer has header credits, the sender counts credit stalls, and a
// receiver that holds nothing takes the same TLPs several times faster.
func TestReceiverHoldThrottles(t *testing.T) {
	run := func(hold sim.Time) (sim.Time, Stats) {
		s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256,
			Credits: Credits{PH: 4, PD: 64, NPH: 8, NPD: 8}})
		b.hold = hold
		for range 40 {
			l.Send(0, &Packet{Class: Posted, Bytes: 16 + 256, Payload: 256})
		}
		s.Run(sim.Second)
		if len(b.at) != 40 {
			t.Fatalf("hold %v: %d of 40 TLPs arrived", hold, len(b.at))
		}
		return b.at[39], l.Stats(0)
	}
	fast, fastStats := run(0)
	slow, slowStats := run(sim.Microsecond)
	// 40 TLPs, 4 buffered per hold: at least 9 holds before the last
	// one arrives.
	if slow < 9*sim.Microsecond || slow > 11*sim.Microsecond {
		t.Fatalf("with a 1 us hold and 4 credits the 40th TLP arrived at %v, want 9-11 us", slow)
	}
	if fast > 3*sim.Microsecond { // four credits and UpdateFC round trips slow it a little
		t.Fatalf("without a hold the 40th TLP arrived at %v, want under 3 us", fast)
	}
	if slowStats.CreditStalls <= fastStats.CreditStalls {
		t.Fatalf("credit stalls: %d with the hold, %d without", slowStats.CreditStalls, fastStats.CreditStalls)
	}
}

// notice records when a link told it of room.
type notice struct{ at []sim.Time }

func (n *notice) Handle(s *sim.Sim, _ uint64) { n.at = append(n.at, s.Now()) }

// TestHoldOpen: a receiver that holds its TLPs open (HoldOpen) stops its
// sender once the buffer's header credits are taken, for as long as it
// likes; Release frees them oldest first and the sender goes on; a
// Release from before the link went down does nothing.
func TestHoldOpen(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Credits: Credits{PH: 4, PD: 64, NPH: 8, NPD: 8}})
	b.hold = HoldOpen
	for range 10 {
		l.Send(0, &Packet{Class: Posted, Bytes: 16 + 256, Payload: 256})
	}
	s.Run(50 * sim.Microsecond)
	if len(b.at) != 4 || l.Queued(0, Posted) != 6 {
		t.Fatalf("held open: %d of 10 TLPs arrived in 50 us, %d still queued; want 4 and 6", len(b.at), l.Queued(0, Posted))
	}
	for range 2 {
		l.Release(1, l.Epoch(), 0)
	}
	s.Run(100 * sim.Microsecond)
	if len(b.at) != 6 || b.at[4] < 50*sim.Microsecond {
		t.Fatalf("after two releases at 50 us: %d TLPs arrived (%v), want 6, the last two after 50 us", len(b.at), b.at)
	}
	epoch := l.Epoch()
	l.SetDown()
	l.SetUp()
	l.Release(1, epoch, 0) // (from before: nothing)
	s.Run(150 * sim.Microsecond)
	if l.dirs[0].rxUsedH[Posted] != 0 {
		t.Fatalf("a release from before the link went down freed credits: %d headers in use", l.dirs[0].rxUsedH[Posted])
	}
}

// TestNotifyRoom: the link sums its queued TLPs' Room per end and tells
// a handler once it falls to what the handler asked for — when TLPs are
// sent, dropped, or lost as the link goes down — and at once if it is
// there already.
func TestNotifyRoom(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Credits: Credits{PH: 2, PD: 64, NPH: 8, NPD: 8}})
	b.hold = HoldOpen
	for range 6 {
		l.Send(0, &Packet{Class: Posted, Bytes: 16 + 256, Payload: 256, Room: 4})
	}
	s.Run(10 * sim.Microsecond) // two sent, four queued
	if got := l.QueuedRoom(0); got != 16 {
		t.Fatalf("queued room %d, want 16", got)
	}
	n := &notice{}
	l.NotifyRoom(0, 12, n, 0)
	s.Run(20 * sim.Microsecond)
	if len(n.at) != 0 {
		t.Fatalf("told of room at %v with none freed", n.at)
	}
	l.Release(1, l.Epoch(), 0)
	s.Run(30 * sim.Microsecond)
	if len(n.at) != 1 || n.at[0] < 20*sim.Microsecond || l.QueuedRoom(0) != 12 {
		t.Fatalf("after a release at 20 us: told at %v, queued room %d", n.at, l.QueuedRoom(0))
	}
	l.NotifyRoom(0, 4, n, 0)
	if l.DropQueued(0, 1, func(*Packet) {}) != 2 || l.QueuedRoom(0) != 4 {
		t.Fatalf("after dropping all but one, queued room %d", l.QueuedRoom(0))
	}
	s.Run(31 * sim.Microsecond)
	l.NotifyRoom(0, 0, n, 0)
	l.SetDown()
	s.Run(32 * sim.Microsecond)
	if len(n.at) != 3 || l.QueuedRoom(0) != 0 {
		t.Fatalf("told at %v (want three times: release, drop, down), queued room %d", n.at, l.QueuedRoom(0))
	}
	l.NotifyRoom(0, 0, n, 0)
	s.Run(33 * sim.Microsecond)
	if len(n.at) != 4 {
		t.Fatalf("asked for room that is there: told at %v", n.at)
	}
}

func TestOrderingAndClasses(t *testing.T) {
	s, l, a, b := newLink(t, Config{Gen: tlp.Gen2, Lanes: 4, MPS: 256})
	for i := range 5 {
		l.Send(0, &Packet{Class: Posted, Bytes: 20, Arg: uint64(i)})
		l.Send(0, &Packet{Class: NonPosted, Bytes: 16, Arg: uint64(100 + i)})
	}
	l.Send(1, &Packet{Class: Completion, Bytes: 16 + 64, Payload: 64, Arg: 7})
	s.Run(sim.Millisecond)
	var posted, np []uint64
	for _, p := range b.pkts {
		if p.Class == Posted {
			posted = append(posted, p.Arg)
		} else {
			np = append(np, p.Arg)
		}
	}
	if len(posted) != 5 || len(np) != 5 || posted[4] != 4 || np[0] != 100 || np[4] != 104 {
		t.Fatalf("order within classes lost: %v %v", posted, np)
	}
	for i := 1; i < len(posted); i++ {
		if posted[i] < posted[i-1] {
			t.Fatalf("posted reordered: %v", posted)
		}
	}
	if len(a.pkts) != 1 || a.pkts[0].Arg != 7 {
		t.Fatal("the completion did not cross the other way")
	}
}

func TestConfigErrors(t *testing.T) {
	s := sim.New(0)
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Gen: 0, Lanes: 16, MPS: 256}, "gen 0"},
		{Config{Gen: 3, Lanes: 3, MPS: 256}, "lanes 3"},
		{Config{Gen: 3, Lanes: 16, MPS: 200}, "mps 200"},
		{Config{Gen: 3, Lanes: 16, MPS: 256, Propagation: -1}, "negative"},
		{Config{Gen: 3, Lanes: 16, MPS: 256, ReplayBytes: 1000}, "replay_bytes"},
		{Config{Gen: 3, Lanes: 16, MPS: 256, Credits: Credits{PH: -1}}, "negative"},
		{Config{Gen: 3, Lanes: 16, MPS: 512, Credits: Credits{PH: 8, PD: 16}}, "at least one MPS-sized payload"},
	} {
		if _, err := New(s, tc.c, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

type echo struct{}

func (e *echo) Receive(l *Link, side int, p *Packet) sim.Time { l.Send(1-side, p); return 0 }

// TestSteadyStateAllocs: once the queues have grown, moving TLPs and DLLPs
// allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	s := sim.New(0)
	e := &echo{}
	l, err := New(s, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256}, e, e)
	if err != nil {
		t.Fatal(err)
	}
	for range 16 {
		l.Send(0, &Packet{Class: Posted, Bytes: 272, Payload: 256})
	}
	s.Run(20 * sim.Microsecond)
	if a := testing.AllocsPerRun(20, func() { s.Run(s.Now() + sim.Microsecond) }); a != 0 {
		t.Errorf("%.1f allocs per simulated microsecond", a)
	}
}

// TestDownAndUp: TLPs on the wire and queued when the link goes down are
// lost and reported; nothing is delivered while down; after SetUp sending
// resumes with fresh credits.
func TestDownAndUp(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Propagation: 100 * sim.Nanosecond})
	var lost []uint64
	l.OnLost(func(side int, p *Packet) { lost = append(lost, p.Arg) })
	for i := range 10 {
		l.Send(0, &Packet{Class: Posted, Bytes: 272, Payload: 256, Arg: uint64(i)})
	}
	s.Run(50 * sim.Nanosecond) // two or three on the wire, none arrived
	l.SetDown()
	if len(lost) != 10 || len(b.pkts) != 0 || l.Up() {
		t.Fatalf("after down: lost %v, delivered %d", lost, len(b.pkts))
	}
	l.Send(0, &Packet{Class: Posted, Bytes: 272, Payload: 256, Arg: 99})
	s.Run(sim.Microsecond)
	if len(lost) != 11 || len(b.pkts) != 0 {
		t.Fatalf("a send while down: lost %v, delivered %d", lost, len(b.pkts))
	}
	l.SetUp()
	for i := range 3 {
		l.Send(0, &Packet{Class: Posted, Bytes: 272, Payload: 256, Arg: uint64(100 + i)})
	}
	s.Run(2 * sim.Microsecond)
	if len(b.pkts) != 3 || b.pkts[0].Arg != 100 || l.dirs[0].limitH[Posted] != 64+3 {
		t.Fatalf("after up: delivered %d, PH limit %d", len(b.pkts), l.dirs[0].limitH[Posted])
	}
}

// TestReadsDoNotPassWrites: PCIe's ordering rules (Base Spec 5.0 Table
// 2-39) on one direction. With posted credits for one write at a time, a
// read or completion queued behind writes waits for every one of them
// (the flush-by-read-back that drivers rely on), while a write queued
// behind reads that lack credits passes them.
func TestReadsDoNotPassWrites(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 128, Propagation: 50 * sim.Nanosecond,
		Credits: Credits{PH: 1, PD: 64, NPH: 8, NPD: 8}})
	for i := range 3 {
		l.Send(0, &Packet{Class: Posted, Bytes: 16 + 64, Payload: 64, Arg: uint64(i)})
	}
	l.Send(0, &Packet{Class: NonPosted, Bytes: 16, Arg: 10})
	l.Send(0, &Packet{Class: Completion, Bytes: 16 + 4, Payload: 4, Arg: 20})
	s.Run(10 * sim.Microsecond)
	var got []uint64
	for _, p := range b.pkts {
		got = append(got, p.Arg)
	}
	if len(got) != 5 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("arrival order %v: the read or completion passed a write", got)
	}

	// Writes pass reads stuck for credits.
	s, l, _, b = newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 128, Propagation: 50 * sim.Nanosecond,
		Credits: Credits{PH: 8, PD: 64, NPH: 1, NPD: 8}})
	for i := range 3 {
		l.Send(0, &Packet{Class: NonPosted, Bytes: 16, Arg: uint64(10 + i)})
	}
	l.Send(0, &Packet{Class: Posted, Bytes: 16 + 64, Payload: 64, Arg: 0})
	s.Run(10 * sim.Microsecond)
	got = got[:0]
	for _, p := range b.pkts {
		got = append(got, p.Arg)
	}
	if len(got) != 4 || got[0] != 10 || got[1] != 0 {
		t.Fatalf("arrival order %v: the write did not pass the reads waiting for credits", got)
	}
}

// TestDropQueued: with the receiver holding every TLP, what waits to be
// sent is discarded but the first queued (across classes, in order), the
// discarded are handed over in their classes' order, what was already
// sent still arrives, and the kept ones go once credits return.
func TestDropQueued(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 128, Propagation: 50 * sim.Nanosecond,
		Credits: Credits{PH: 2, PD: 64, NPH: 2, NPD: 8}})
	b.hold = 5 * sim.Microsecond
	classes := []Class{Posted, NonPosted, Posted, Completion, NonPosted, Posted, Posted, NonPosted, Completion, Posted}
	for i, c := range classes {
		l.Send(0, &Packet{Class: c, Bytes: 16, Arg: uint64(i)})
	}
	// Posted 0 and 2, non-posted 1 and 4 take the credits; completion 3
	// goes (infinite credits); 5, 6 and 9 wait for posted credits, and 7
	// and 8 behind 5 (they may not pass a posted write queued first).
	s.Run(sim.Microsecond)
	queued := 0
	for c := range numClasses {
		queued += l.Queued(0, c)
	}
	if queued != 5 {
		t.Fatalf("%d TLPs queued, want 5", queued)
	}
	var dropped []uint64
	if n := l.DropQueued(0, 2, func(p *Packet) { dropped = append(dropped, p.Arg) }); n != 3 {
		t.Fatalf("DropQueued discarded %d, want 3", n)
	}
	if fmt.Sprint(dropped) != "[9 7 8]" {
		t.Fatalf("discarded %v, want 9, 7 and 8 (the last queued, by class)", dropped)
	}
	if n := l.DropQueued(0, 2, func(*Packet) { t.Fatal("discarded a TLP that fits") }); n != 0 {
		t.Fatalf("a second DropQueued discarded %d", n)
	}
	s.Run(50 * sim.Microsecond)
	var got []uint64
	for _, p := range b.pkts {
		got = append(got, p.Arg)
	}
	if fmt.Sprint(got) != "[0 1 2 3 4 5 6]" {
		t.Fatalf("arrived %v, want 0 to 6", got)
	}
}

// TestDamagedTLPsReplayed: the data link layer's recovery (PCIe Base
// §3.6). TLPs that arrive damaged are discarded, the receiver answers the
// first with a Nak (and no other until a good TLP comes: NAK_SCHEDULED),
// those behind it on the wire are discarded as out of sequence, and the
// sender replays its buffer; a replay that is damaged too is sent again
// when the replay timer expires; the fourth replay of one TLP with no Ack
// between is a REPLAY_NUM rollover. Every TLP arrives once, in order, and
// the link's counters say what happened.
func TestDamagedTLPsReplayed(t *testing.T) {
	const n = 400
	for _, tc := range []struct {
		name string
		// bad says whether the k-th time TLP arg is put on the wire it
		// arrives damaged (k from 0).
		bad                                       func(arg uint64, k int) bool
		damaged, naks, timeouts, rollovers, minRp uint64
	}{
		{"none", func(uint64, int) bool { return false }, 0, 0, 0, 0, 0},
		{"every 100th once", func(a uint64, k int) bool { return a%100 == 7 && k == 0 }, 4, 4, 0, 0, 4},
		// 30 is damaged on the wire behind 7, already discarded: no Nak.
		{"one behind another", func(a uint64, k int) bool { return (a == 7 || a == 30) && k == 0 }, 2, 1, 0, 0, 2},
		{"a replay damaged too", func(a uint64, k int) bool { return a == 100 && k < 2 }, 2, 1, 1, 0, 2},
		{"five tries", func(a uint64, k int) bool { return a == 200 && k < 5 }, 5, 1, 4, 1, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Propagation: 500 * sim.Nanosecond})
			tries := map[uint64]int{}
			l.OnDamage(func(side int, p *Packet) bool {
				k := tries[p.Arg]
				tries[p.Arg]++
				return side == 0 && tc.bad(p.Arg, k)
			})
			rolled := 0
			l.OnRollover(func(side int) { rolled++ })
			for i := range n {
				l.Send(0, &Packet{Class: Posted, Bytes: 272, Payload: 256, Arg: uint64(i)})
			}
			s.Run(200 * sim.Microsecond)
			if len(b.pkts) != n {
				t.Fatalf("%d of %d TLPs arrived", len(b.pkts), n)
			}
			for i, p := range b.pkts {
				if p.Arg != uint64(i) {
					t.Fatalf("TLP %d arrived %d-th", p.Arg, i)
				}
			}
			tx, rx := l.Stats(0), l.Stats(1)
			if tx.Damaged != tc.damaged || rx.Naks != tc.naks || tx.ReplayTimeouts != tc.timeouts || tx.Rollovers != tc.rollovers ||
				uint64(rolled) != tc.rollovers || tx.Resent < tc.minRp || tx.TLPs != n || tx.Replays != rx.Naks+tx.ReplayTimeouts {
				t.Errorf("sent %d TLPs, %d damaged, %d Naks, %d replays (%d TLPs sent again), %d replay timeouts, %d rollovers (%d told)",
					tx.TLPs, tx.Damaged, rx.Naks, tx.Replays, tx.Resent, tx.ReplayTimeouts, tx.Rollovers, rolled)
			}
			if d := &l.dirs[0]; d.replay.size != 0 || d.unacked != 0 || d.resend != 0 {
				t.Errorf("the replay buffer holds %d TLPs (%d bytes, %d to resend) at the end", d.replay.size, d.unacked, d.resend)
			}
		})
	}
}

// TestDamagedLostOnDown: a link taken down while a damaged TLP waits to
// be sent again reports it lost, with those behind it, and nothing
// twice.
func TestDamagedLostOnDown(t *testing.T) {
	s, l, _, b := newLink(t, Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Propagation: 2 * sim.Microsecond})
	l.OnDamage(func(side int, p *Packet) bool { return p.Arg == 3 })
	lost := map[uint64]int{}
	l.OnLost(func(side int, p *Packet) { lost[p.Arg]++ })
	for i := range 10 {
		l.Send(0, &Packet{Class: Posted, Bytes: 272, Payload: 256, Arg: uint64(i)})
	}
	s.Run(3 * sim.Microsecond) // all arrived, 3 on damaged, the Nak on its way back
	l.SetDown()
	if len(b.pkts) != 3 || len(lost) != 7 {
		t.Fatalf("delivered %d, lost %v", len(b.pkts), lost)
	}
	for a, k := range lost {
		if a < 3 || k != 1 {
			t.Fatalf("lost %v", lost)
		}
	}
}
