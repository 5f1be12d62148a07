package vbench

import (
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/testbenches/tools"
)

// TestBuildIsOptimised builds a counter's replay harness and checks, from
// the compiler commands make printed, that every file was compiled at -O3
// (verilated.mk's own -Os would otherwise win over -CFLAGS -O3), then
// replays the stimulus and checks the harness counted its cycles.
func TestBuildIsOptimised(t *testing.T) {
	verilator := tools.Require(t, "verilator")
	m := ir.NewModule("counter")
	en := m.Input("en", 1)
	cnt := m.Reg("cnt", 8, 0)
	m.SetNext(cnt, m.Add(cnt, m.Const(8, 1)))
	m.SetEnable(cnt, en)
	m.Output("count", cnt)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	st := &Stimulus{Inputs: []Port{{"rst", 1}, {"en", 1}}, Reads: []string{"count"}}
	for i := range 100 {
		st.Cycles = append(st.Cycles, [][]uint64{{b2u(i == 0)}, {uint64(i % 2)}})
	}
	bin, err := Build(t.TempDir(), verilator, m, st)
	if err != nil {
		t.Fatal(err)
	}
	cycles, _, err := Run(bin, 3)
	if err != nil {
		t.Fatal(err)
	}
	if cycles != 300 {
		t.Fatalf("the harness simulated %d cycles, want 3 × 100", cycles)
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TestCheckOptimised: a compilation whose last -O option is not -O3 (as
// verilated.mk's OPT_FAST=-Os after CFLAGS' -O3) is found, and an output
// with no compiler command is not taken for an optimised build.
func TestCheckOptimised(t *testing.T) {
	for _, tc := range []struct {
		out, err string
	}{
		{"g++ -O3 -c -o Vdut__ALL.o Vdut__ALL.cpp\nccache g++ -Os -O3 -c main.cpp\n", ""},
		{"g++ -O3 -Os -c -o Vdut__ALL.o Vdut__ALL.cpp\n", `ran at "-Os"`},
		{"g++ -c -o x.o x.cpp\n", `ran at ""`},
		{"make: Nothing to be done\n", "no compiler command"},
	} {
		err := checkOptimised([]byte(tc.out))
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %v, want an error with %q", tc.out, err, tc.err)
		}
	}
}
