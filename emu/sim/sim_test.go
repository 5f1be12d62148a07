package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type recorder struct {
	got []uint64
	at  []Time
}

func (r *recorder) Handle(s *Sim, arg uint64) {
	r.got = append(r.got, arg)
	r.at = append(r.at, s.Now())
}

func TestOrder(t *testing.T) {
	s := New(0)
	r := &recorder{}
	s.At(30, r, 3)
	s.At(10, r, 1)
	s.At(20, r, 2)
	s.At(10, r, 11) // same time as arg 1, scheduled later: runs after it
	s.At(20, r, 22)
	s.Run(100)
	if want := []uint64{1, 11, 2, 22, 3}; !slices.Equal(r.got, want) {
		t.Fatalf("order %v, want %v", r.got, want)
	}
	if want := []Time{10, 10, 20, 20, 30}; !slices.Equal(r.at, want) {
		t.Fatalf("times %v, want %v", r.at, want)
	}
	if s.Now() != 100 || s.Events() != 5 {
		t.Fatalf("now %v events %d", s.Now(), s.Events())
	}
}

// TestAgainstSort schedules many events at random times (with many ties)
// and checks they come out sorted by time, then by scheduling order.
func TestAgainstSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := New(0)
	rec := &recorder{}
	type ev struct {
		at  Time
		seq uint64
	}
	var want []ev
	for i := 0; i < 20000; i++ {
		at := Time(r.IntN(500))
		s.At(at, rec, uint64(i))
		want = append(want, ev{at, uint64(i)})
	}
	slices.SortStableFunc(want, func(a, b ev) int { return int(a.at - b.at) })
	s.Run(1000)
	for i, w := range want {
		if rec.got[i] != w.seq || rec.at[i] != w.at {
			t.Fatalf("event %d: got %d at %v, want %d at %v", i, rec.got[i], rec.at[i], w.seq, w.at)
		}
	}
}

type chain struct{ n int }

func (c *chain) Handle(s *Sim, arg uint64) {
	c.n++
	if arg > 0 {
		s.After(5, c, arg-1)
	}
}

func TestRunUntilAndStep(t *testing.T) {
	s := New(0)
	c := &chain{}
	s.At(0, c, 10) // runs at 0, 5, 10, ..., 50
	s.Run(22)
	if c.n != 5 || s.Now() != 22 {
		t.Fatalf("after Run(22): %d events, now %v", c.n, s.Now())
	}
	for s.Step() {
	}
	if c.n != 11 || s.Now() != 50 {
		t.Fatalf("after stepping: %d events, now %v", c.n, s.Now())
	}
	// Scheduling in the past runs now.
	rec := &recorder{}
	s.At(1, rec, 7)
	s.Run(60)
	if rec.at[0] != 50 {
		t.Fatalf("past event ran at %v", rec.at[0])
	}
}

type stopper struct{}

func (stopper) Handle(s *Sim, arg uint64) { s.Stop() }

func TestStop(t *testing.T) {
	s := New(0)
	rec := &recorder{}
	s.At(10, stopper{}, 0)
	s.At(20, rec, 1)
	s.Run(100)
	if s.Now() != 10 || len(rec.got) != 0 || s.Pending() != 1 {
		t.Fatalf("Stop: now %v, ran %v, pending %d", s.Now(), rec.got, s.Pending())
	}
}

func TestTimeString(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		want string
	}{{500, "500ps"}, {1500, "1.5ns"}, {1250 * Nanosecond, "1.25us"}, {3 * Millisecond, "3ms"}, {2 * Second, "2s"}} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("%d: %q, want %q", int64(tc.t), got, tc.want)
		}
	}
}

// hold is the classic "hold model": every event schedules one more at a
// pseudo-random delay, keeping the number pending constant.
type hold struct{ x uint64 }

func (h *hold) Handle(s *Sim, arg uint64) {
	h.x ^= h.x << 13
	h.x ^= h.x >> 7
	h.x ^= h.x << 17
	s.After(Time(1+h.x%10000), h, arg)
}

func TestSchedulingAllocs(t *testing.T) {
	s := New(2048)
	h := &hold{x: 1}
	for i := 0; i < 1024; i++ {
		s.At(Time(i), h, uint64(i))
	}
	if a := testing.AllocsPerRun(10, func() {
		for i := 0; i < 1000; i++ {
			s.Step()
		}
	}); a != 0 {
		t.Errorf("%.1f allocs per 1000 events, want 0", a)
	}
}

// BenchmarkHold1024 runs the hold model with 1024 pending events; ns/op is
// per event (the target is 10 million events per second: under 100 ns).
func BenchmarkHold1024(b *testing.B) {
	s := New(2048)
	h := &hold{x: 88172645463325252}
	for i := 0; i < 1024; i++ {
		s.At(Time(i), h, uint64(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Step()
	}
}

// TestShift moves the odd events 100 earlier and checks every event runs
// at its new time, in time then scheduling order, the even ones
// untouched, and nothing before now.
func TestShift(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := New(0)
	rec := &recorder{}
	s.Run(50)
	type ev struct {
		at  Time
		arg uint64
	}
	var want []ev
	for i := range 5000 {
		at := 50 + Time(r.IntN(400))
		s.At(at, rec, uint64(i))
		if i%2 == 1 {
			at = max(at-100, 50)
		}
		want = append(want, ev{at, uint64(i)})
	}
	s.Shift(100, func(_ Handler, arg uint64) bool { return arg%2 == 1 })
	slices.SortStableFunc(want, func(a, b ev) int { return int(a.at - b.at) })
	s.Run(1000)
	if len(rec.got) != len(want) {
		t.Fatalf("%d events ran, want %d", len(rec.got), len(want))
	}
	for i, w := range want {
		if rec.got[i] != w.arg || rec.at[i] != w.at {
			t.Fatalf("event %d: got %d at %v, want %d at %v", i, rec.got[i], rec.at[i], w.arg, w.at)
		}
	}
}
