package lanes

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Plan
		err  string
	}{
		{in: "16x8.25Gbps", want: Default},
		{in: "8x16.5Gb/s", want: Plan{8, 16_500_000}},
		{in: "4x25.78125Gbps", want: Plan{4, 25_781_250}},
		{in: " 4x28Gbps ", want: Plan{4, 28_000_000}},
		{in: "1x0.5Gbps", want: Plan{1, 500_000}},
		{in: "4x25.78125", err: "needs its unit"},
		{in: "16", err: "want LANESxRATE"},
		{in: "3x10Gbps", err: "lanes 3 must be"},
		{in: "32x10Gbps", err: "lanes 32 must be"},
		{in: "ax10Gbps", err: "not a whole number"},
		{in: "4x33Gbps", err: "must be 0.5 to 32.75Gbps"},
		{in: "4x0.4Gbps", err: "must be 0.5 to 32.75Gbps"},
		{in: "4x1.0000001Gbps", err: "at most six decimals"},
		{in: "4x1e1Gbps", err: "decimal number"},
		{in: "4x-1Gbps", err: "decimal number"},
		{in: "4x.5Gbps", err: "decimal number"},
	} {
		p, err := Parse(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Parse(%q) = %v, %v; want an error with %q", c.in, p, err, c.err)
		case c.err == "" && (err != nil || p != c.want):
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, p, err, c.want)
		case c.err == "":
			if q, err := Parse(p.String()); err != nil || q != p {
				t.Errorf("Parse(%q.String() = %q) = %v, %v", c.in, p.String(), q, err)
			}
		}
	}
}

// TestFigures holds each preset to its figures worked out by hand: the
// data rate (64/66 of the line) and a word's time on the fibre.
func TestFigures(t *testing.T) {
	for _, c := range []struct {
		p            Plan
		data, wordPS float64
	}{
		{Default, 128, 4000},
		{Plan{8, 16_500_000}, 128, 4000},
		{Plan{4, 25_781_250}, 100, 5120},
		{Plan{4, 28_000_000}, 108.6060606, 4714.2857143},
	} {
		if math.Abs(c.p.DataGbps()-c.data) > 1e-6 || math.Abs(c.p.WordPS()-c.wordPS) > 1e-6 {
			t.Errorf("%v: %g Gb/s of data, %g ps a word; want %g and %g", c.p, c.p.DataGbps(), c.p.WordPS(), c.data, c.wordPS)
		}
	}
	if got := Default.WordPS64(250); got != 4000*64 {
		t.Errorf("Default at 250 MHz: %d/64 ps a word, want 4000", got)
	}
	if got := Default.WordPS64(125); got != 8000*64 {
		t.Errorf("Default at 125 MHz: %d/64 ps a word, want the clock's 8000", got)
	}
	if got := (Plan{4, 25_781_250}).WordPS64(250); got != 5120*64 {
		t.Errorf("4x25.78125 at 250 MHz: %d/64 ps a word, want 5120", got)
	}
}

// TestPacer: over a long run the pacer takes words at the plan's rate
// (or one a cycle when the plan is faster), never falling more than a
// word behind the line, and spreads its pauses: no two in a row when
// the plan takes more than half the cycles.
func TestPacer(t *testing.T) {
	for _, p := range append(Presets, Plan{16, 10_312_500}, Plan{1, 10_312_500}) {
		const cycles = 100_000
		c := p.NewPacer(250)
		n, pauses, run := 0, 0, 0
		for i := range cycles {
			if c.Ready() {
				n, run = n+1, 0
			} else {
				pauses++
				run++
				if run > 1 && p.WordPS() < 8000 {
					t.Fatalf("%v: two pauses in a row at cycle %d", p, i)
				}
			}
			line := float64(i+1) * 4000 / p.WordPS() // words the line has carried
			if float64(n) > math.Ceil(line)+1 || p.WordPS() >= 4000 && float64(n) < line-1 {
				t.Fatalf("%v: %d words taken by cycle %d, the line carried %.2f", p, n, i, line)
			}
		}
		want := min(1, 4000/p.WordPS()) * cycles
		if math.Abs(float64(n)-want) > 1 {
			t.Errorf("%v: %d words in %d cycles, want %.1f", p, n, cycles, want)
		}
		t.Logf("%-16v %6.2f Gb/s of data: a word every %7.2f ps, %5.1f%% of cycles paused", p, p.DataGbps(), p.WordPS(), 100*float64(pauses)/cycles)
	}
}
