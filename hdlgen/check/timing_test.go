package check

import (
	"math"
	"testing"
)

// TestEstimate: the critical path of a small netlist by the delay model:
// a flip-flop through four LUTs back into itself (the slow path),
// beside a port through one LUT and a CARRY4 to an output port, and a
// block RAM's output through one LUT.
func TestEstimate(t *testing.T) {
	netlist := `{"modules": {"top": {
	  "ports": {"a": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [9]}},
	  "netnames": {"q": {"hide_name": 0, "bits": [3]}, "$x": {"hide_name": 1, "bits": [3]}, "d": {"hide_name": 0, "bits": [6]},
	    "ram_out": {"hide_name": 0, "bits": [10]}, "r": {"hide_name": 0, "bits": [12]}},
	  "cells": {
	    "ff1": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [6], "Q": [3]}},
	    "l1": {"type": "LUT2", "port_directions": {"I0": "input", "I1": "input", "O": "output"}, "connections": {"I0": [3], "I1": [2], "O": [4]}},
	    "l2": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [4], "O": [5]}},
	    "l3": {"type": "LUT3", "port_directions": {"I0": "input", "I1": "input", "I2": "input", "O": "output"}, "connections": {"I0": [5], "I1": ["0"], "I2": [3], "O": [13]}},
	    "l0": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [13], "O": [6]}},
	    "l4": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [2], "O": [7]}},
	    "c1": {"type": "CARRY4", "port_directions": {"S": "input", "CO": "output"}, "connections": {"S": [7], "CO": [9]}},
	    "ram": {"type": "RAMB36E1", "port_directions": {"DO": "output", "DI": "input"}, "connections": {"DO": [10], "DI": [12]}},
	    "l5": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [10], "O": [11]}},
	    "ff2": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [11], "Q": [12]}}
	  }}}}`
	tm, err := estimate([]byte(netlist), "top")
	if err != nil {
		t.Fatal(err)
	}
	want := Overhead + 4*LUTDelay
	if math.Abs(tm.PathNs-want) > 0.001 || tm.LUTLevels != 4 || tm.Carries != 0 || tm.From != "q" || tm.To != "q" {
		t.Errorf("got %+v, want %.3f ns over 4 LUTs from q to q", tm, want)
	}
	if math.Abs(tm.EstMHz-1000/want) > 0.01 {
		t.Errorf("est %.3f MHz, want %.3f (%+v)", tm.EstMHz, 1000/want, tm)
	}
	// Without the slow path, the RAM's path is the slowest: its output
	// starts late.
	slow := `"connections": {"I0": [13], "O": [6]}`
	fast := `"connections": {"I0": [3], "O": [6]}`
	tm, err = estimate([]byte(replace(netlist, slow, fast)), "top")
	if err != nil {
		t.Fatal(err)
	}
	if want := Overhead + BRAMClockToOut + LUTDelay; math.Abs(tm.PathNs-want) > 0.001 || tm.From != "ram_out" || tm.To != "r" {
		t.Errorf("got %+v, want %.3f ns from ram_out to r", tm, want)
	}
	// A DSP slice with MREG and PREG but no input registers: a path into
	// it pays the multiplier; its output starts like a flip-flop's.
	dsp := `{"modules": {"top": {"ports": {}, "netnames": {"q": {"hide_name": 0, "bits": [2]}, "p": {"hide_name": 0, "bits": [3]}},
	  "cells": {
	    "ff": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [4], "Q": [2]}},
	    "mul": {"type": "DSP48E1", "parameters": {"AREG": "00000000000000000000000000000000", "BREG": "0", "MREG": "1", "PREG": "1"},
	      "port_directions": {"A": "input", "P": "output"}, "connections": {"A": [2], "P": [3]}},
	    "l": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [3], "O": [4]}}
	  }}}}`
	tm, err = estimate([]byte(dsp), "top")
	if want := Overhead + DSPMultDelay; err != nil || math.Abs(tm.PathNs-want) > 0.001 || tm.From != "q" || tm.To != "p" {
		t.Errorf("DSP: got %+v %v, want %.3f ns from q to p", tm, err, want)
	}

	// A loop of LUTs is an error, not a hang.
	loop := replace(netlist, `"connections": {"I0": [3], "I1": [2], "O": [4]}`, `"connections": {"I0": [5], "I1": [2], "O": [4]}`)
	if _, err := estimate([]byte(loop), "top"); err == nil {
		t.Error("a combinational loop gave no error")
	}
	if _, err := estimate([]byte(netlist), "other"); err == nil {
		t.Error("a missing module gave no error")
	}
}

func replace(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("no " + old)
}

// TestEstimateLUTRAM: a distributed RAM's write is clocked: a long path
// into its data ends there and does not run on through its read to what
// it feeds, while its read address does reach its output.
func TestEstimateLUTRAM(t *testing.T) {
	netlist := `{"modules": {"top": {
	  "ports": {},
	  "netnames": {"q": {"hide_name": 0, "bits": [2]}, "a": {"hide_name": 0, "bits": [7]}, "r": {"hide_name": 0, "bits": [9]}},
	  "cells": {
	    "ff": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [2], "Q": [2]}},
	    "l1": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [2], "O": [3]}},
	    "l2": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [3], "O": [4]}},
	    "l3": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [4], "O": [5]}},
	    "mem": {"type": "RAM32M", "port_directions": {"DIA": "input", "WE": "input", "ADDRA": "input", "DOA": "output"},
	      "connections": {"DIA": [5, 5], "WE": [5], "ADDRA": [7], "DOA": [8, 8]}},
	    "fa": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [7], "Q": [7]}},
	    "l4": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [8], "O": [10]}},
	    "fr": {"type": "FDRE", "port_directions": {"D": "input", "Q": "output"}, "connections": {"D": [10], "Q": [9]}}
	  }}}}`
	tm, err := estimate([]byte(netlist), "top")
	if err != nil {
		t.Fatal(err)
	}
	// Three LUTs into the RAM's write side; the read, from the address
	// register, is the RAM and one LUT: three levels either way, never
	// the five a combinational RAM would chain.
	if tm.LUTLevels != 3 {
		t.Errorf("got %+v: want a path of 3 levels, the write side's or the read's", tm)
	}
}
