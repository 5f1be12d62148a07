package axis

import (
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/testbenches/verilator"
)

// parkModule parks the one-word packets s_tpark marks until release.
// The word is {last, 15 bits}.
func parkModule() *ir.Module {
	mod := ir.NewModule("park")
	in := Input(mod, "s", 16)
	release := mod.Input("release", 1)
	out, parked, room := Park(mod, "p", in, mod.Input("s_tpark", 1), 8, 3, func(ir.Value) ir.Value { return release })
	Output(mod, "m", out)
	mod.Output("m_tparked", parked)
	mod.Output("room", room)
	return mod
}

// TestPark: a stream of packets (one to three words), some one-word
// packets marked to park. With release low the marked ones wait, at most
// eight of them, and every other packet passes them whole and in order;
// room falls once five wait (no more than three words free); released, the parked ones leave
// in order, each flagged as parked. Nothing is lost or duplicated.
func TestPark(t *testing.T) {
	s, err := sim.New(parkModule())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	type word struct{ v, last, park uint64 }
	var in []word
	for p := range 400 {
		if rng.IntN(3) == 0 {
			in = append(in, word{uint64(p) << 2, 1, 1})
			continue
		}
		n := 1 + rng.IntN(3)
		for k := range n {
			in = append(in, word{uint64(p)<<2 | uint64(k), b(k == n-1), 0})
		}
	}
	var passed, parkedOut []uint64
	next, waiting, roomLow := 0, 0, false
	for cyc := 0; cyc < 20000 && (next < len(in) || len(passed)+len(parkedOut) < len(in)); cyc++ {
		release := cyc > 2000 && rng.IntN(2) == 0 // nothing released for the first 2000 cycles
		s.Set("release", b(release))
		valid := next < len(in) && rng.IntN(4) != 0
		s.Set("s_tvalid", b(valid))
		if valid {
			w := in[next]
			s.Set("s_tdata", w.last<<15|w.v)
			s.Set("s_tpark", w.park)
		}
		ready := rng.IntN(4) != 0
		s.Set("m_tready", b(ready))
		if r, _ := s.Get("room"); r == 0 {
			roomLow = true
			if waiting < 8-3 { // room: more than 3 of the 8 words free
				t.Fatalf("cycle %d: room low with %d parked", cyc, waiting)
			}
		}
		if v, _ := s.Get("m_tvalid"); v == 1 && ready {
			d, _ := s.Get("m_tdata")
			if p, _ := s.Get("m_tparked"); p == 1 {
				if !release {
					t.Fatalf("cycle %d: a parked word left without release", cyc)
				}
				parkedOut = append(parkedOut, d&0x7FFF)
				waiting--
			} else {
				passed = append(passed, d&0x7FFF)
			}
		}
		if r, _ := s.Get("s_tready"); r == 1 && valid {
			if in[next].park == 1 {
				waiting++
				if waiting > 8 {
					t.Fatalf("cycle %d: %d parked in a park of 8", cyc, waiting)
				}
			}
			next++
		}
		s.Step()
	}
	var wantPassed, wantParked []uint64
	for _, w := range in {
		if w.park == 1 {
			wantParked = append(wantParked, w.v)
		} else {
			wantPassed = append(wantPassed, w.v)
		}
	}
	if len(passed) != len(wantPassed) || len(parkedOut) != len(wantParked) {
		t.Fatalf("%d passed (want %d), %d parked out (want %d)", len(passed), len(wantPassed), len(parkedOut), len(wantParked))
	}
	for i := range passed {
		if passed[i] != wantPassed[i] {
			t.Fatalf("passing word %d: %#x, want %#x", i, passed[i], wantPassed[i])
		}
	}
	for i := range parkedOut {
		if parkedOut[i] != wantParked[i] {
			t.Fatalf("parked word %d: %#x, want %#x", i, parkedOut[i], wantParked[i])
		}
	}
	if !roomLow {
		t.Fatal("room never fell: the test does not fill the park")
	}
}

func TestParkVerilog(t *testing.T) { verilator.Lint(t, parkModule()) }

// parkDropModule parks the one-word packets s_tpark marks in a park of
// eight with a register slice at its head (ParkOrDrop, sliceHead); a
// parked word may leave while release is high and its bit 2 equals sel,
// so the release decides on the word it lets go.
func parkDropModule() *ir.Module {
	mod := ir.NewModule("park_drop")
	in := Input(mod, "s", 16)
	release, sel := mod.Input("release", 1), mod.Input("sel", 1)
	out, parked, dropped := ParkOrDrop(mod, "p", in, mod.Input("s_tpark", 1), 8, true, func(head ir.Value) ir.Value {
		return mod.And(release, mod.Eq(mod.Slice(head, 2, 1), sel))
	})
	Output(mod, "m", out)
	mod.Output("m_tparked", parked)
	mod.Output("dropped", dropped)
	return mod
}

// TestParkOrDropSliced: as TestPark, through ParkOrDrop with a register
// slice at the park's head. Every passing packet leaves whole and in
// order; a parked word leaves only when the release says so of that very
// word; a marked word that finds the FIFO full is dropped and flagged
// (never waiting at the input, so what passes goes on), which happens
// only with the FIFO's eight words and at most the slice's two waiting;
// the parked words that leave are the marked ones less the dropped, in
// order.
func TestParkOrDropSliced(t *testing.T) {
	s, err := sim.New(parkDropModule())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	type word struct{ v, last, park uint64 }
	var in []word
	for p := range 600 {
		if rng.IntN(2) == 0 {
			in = append(in, word{uint64(p) << 2, 1, 1})
			continue
		}
		n := 1 + rng.IntN(3)
		for k := range n {
			in = append(in, word{uint64(p)<<2 | uint64(k), b(k == n-1), 0})
		}
	}
	var passed, parkedOut, wantParked []uint64
	next, waiting, drops := 0, 0, 0
	for cyc := 0; cyc < 40000 && (next < len(in) || len(passed)+len(parkedOut)+drops < len(in)); cyc++ {
		release := cyc > 300 && rng.IntN(6) == 0 // the park fills first, then drains slower than it fills
		sel := uint64(rng.IntN(2))
		s.Set("release", b(release))
		s.Set("sel", sel)
		valid := next < len(in) && rng.IntN(4) != 0
		s.Set("s_tvalid", b(valid))
		if valid {
			w := in[next]
			s.Set("s_tdata", w.last<<15|w.v)
			s.Set("s_tpark", w.park)
		}
		ready := rng.IntN(4) != 0
		s.Set("m_tready", b(ready))
		if v, _ := s.Get("m_tvalid"); v == 1 && ready {
			d, _ := s.Get("m_tdata")
			if p, _ := s.Get("m_tparked"); p == 1 {
				if !release || (d>>2)&1 != sel {
					t.Fatalf("cycle %d: parked word %#x left with release %v, sel %d", cyc, d&0x7FFF, release, sel)
				}
				parkedOut = append(parkedOut, d&0x7FFF)
				waiting--
			} else {
				passed = append(passed, d&0x7FFF)
			}
		}
		if r, _ := s.Get("s_tready"); r == 1 && valid {
			if in[next].park == 1 {
				if dr, _ := s.Get("dropped"); dr == 1 {
					if waiting < 8 {
						t.Fatalf("cycle %d: a marked word dropped with %d parked", cyc, waiting)
					}
					drops++
				} else {
					waiting++
					wantParked = append(wantParked, in[next].v)
				}
				if waiting > 10 {
					t.Fatalf("cycle %d: %d parked in a park of 8 and a slice of 2", cyc, waiting)
				}
			}
			next++
		} else if dr, _ := s.Get("dropped"); dr == 1 {
			t.Fatalf("cycle %d: dropped with no marked word taken", cyc)
		}
		s.Step()
	}
	var wantPassed []uint64
	for _, w := range in {
		if w.park == 0 {
			wantPassed = append(wantPassed, w.v)
		}
	}
	if drops == 0 {
		t.Fatal("nothing dropped: the test does not fill the park")
	}
	if len(passed) != len(wantPassed) || len(parkedOut) != len(wantParked) {
		t.Fatalf("%d passed (want %d), %d parked out (want %d), %d dropped", len(passed), len(wantPassed), len(parkedOut), len(wantParked), drops)
	}
	for i := range passed {
		if passed[i] != wantPassed[i] {
			t.Fatalf("passing word %d: %#x, want %#x", i, passed[i], wantPassed[i])
		}
	}
	for i := range parkedOut {
		if parkedOut[i] != wantParked[i] {
			t.Fatalf("parked word %d: %#x, want %#x", i, parkedOut[i], wantParked[i])
		}
	}
	t.Logf("%d passed, %d parked and released, %d dropped", len(passed), len(parkedOut), drops)
}

func TestParkOrDropVerilog(t *testing.T) { verilator.Lint(t, parkDropModule()) }
