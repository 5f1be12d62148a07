package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The delay model of the clock estimate (docs/kernels.md, "Resources and timing"): a
// register-to-register path on an UltraScale+ -2 part costs Overhead
// (clock-to-out, setup, clock uncertainty) plus, per cell it passes, the
// figure below, routing to the next cell included. They are onic's
// assumptions for a first estimate before place and route, not figures
// from a data sheet, chosen so that eight LUT levels just fit 4 ns
// (250 MHz), the usual rule of thumb for the family; a 64-bit adder on
// the carry chain costs about as much as one LUT level more.
const (
	Overhead   = 0.40 // ns per path
	LUTDelay   = 0.43 // ns per LUT level, routing included
	CarryDelay = 0.05 // ns per CARRY4 (four bits of a carry chain)
	MuxFDelay  = 0.08 // ns per MUXF7/MUXF8
	// Cells whose outputs start a path later than a flip-flop's.
	BRAMClockToOut = 0.90 // ns: block RAM read data, unregistered output
	SRLClockToOut  = 0.40 // ns: shift-register LUT output
	// A DSP slice's multiply-add with no pipeline register inside, and
	// its parts: the multiplier (to MREG) and the post-adder (MREG to
	// PREG).
	DSPCombDelay  = 2.50 // ns
	DSPMultDelay  = 1.60 // ns
	DSPAdderDelay = 0.90 // ns
)

// Timing is the critical path of a synthesised netlist by the model
// above.
type Timing struct {
	PathNs    float64 `json:"path_ns"`    // Overhead plus the slowest path's cells
	LUTLevels int     `json:"lut_levels"` // LUTs on that path
	Carries   int     `json:"carries"`    // CARRY4 cells on that path
	// EstMHz is the clock the path allows: 1000 / PathNs.
	EstMHz float64 `json:"est_mhz"`
	// From and To name the path's ends: the nets of the register, port
	// or memory it starts from and ends at, as the netlist names them.
	From string `json:"from"`
	To   string `json:"to"`
}

// yosysNetlist is the part of Yosys's write_json output the estimate
// reads: the top module's ports and cells, their nets as bit numbers
// (constants are strings).
type yosysNetlist struct {
	Modules map[string]struct {
		Ports map[string]struct {
			Direction string `json:"direction"`
			Bits      []any  `json:"bits"`
		} `json:"ports"`
		Netnames map[string]struct {
			Hide int   `json:"hide_name"`
			Bits []any `json:"bits"`
		} `json:"netnames"`
		Cells map[string]struct {
			Type       string            `json:"type"`
			Parameters map[string]string `json:"parameters"`
			Dirs       map[string]string `json:"port_directions"`
			Conns      map[string][]any  `json:"connections"`
		} `json:"cells"`
	} `json:"modules"`
}

// cellKind is how the estimate treats a cell type: combinational cells
// with their delay; clocked ones with when their outputs are ready
// (start) and how long before the clock their inputs must be (setup,
// beyond the Overhead every path pays).
func cellKind(typ string, params map[string]string) (comb bool, delay, start, setup float64) {
	reg := func(p string) bool { return strings.Trim(params[p], "0") != "" }
	switch {
	case strings.HasPrefix(typ, "LUT"):
		return true, LUTDelay, 0, 0
	case typ == "CARRY4" || typ == "CARRY8":
		return true, CarryDelay, 0, 0
	case strings.HasPrefix(typ, "MUXF"):
		return true, MuxFDelay, 0, 0
	case strings.HasPrefix(typ, "RAMB"), strings.HasPrefix(typ, "URAM"): // (UltraRAM taken as a block RAM)
		return false, 0, BRAMClockToOut, 0
	case strings.HasPrefix(typ, "SRL"):
		return false, 0, SRLClockToOut, 0
	case strings.HasPrefix(typ, "RAM"): // distributed RAM: an asynchronous read
		return true, LUTDelay, 0, 0
	case strings.HasPrefix(typ, "DSP"):
		// The multiplier sits between the input registers (AREG, BREG)
		// and MREG; the post-adder between MREG and PREG.
		in := reg("AREG") && reg("BREG")
		switch {
		case !reg("MREG") && !reg("PREG"):
			if in {
				return false, 0, DSPCombDelay, 0
			}
			return true, DSPCombDelay, 0, 0
		case reg("MREG"):
			st := DSPAdderDelay // from MREG through the post-adder
			if reg("PREG") {
				st = 0
			}
			su := DSPMultDelay
			if in {
				su = 0
			}
			return false, 0, st, su
		default: // PREG alone: multiplier and adder before it
			su := DSPCombDelay
			if in {
				su = DSPCombDelay - DSPMultDelay + DSPAdderDelay
			}
			return false, 0, 0, su
		}
	case typ == "BUFG" || typ == "IBUF" || typ == "OBUF":
		return true, 0, 0, 0
	}
	return false, 0, 0, 0 // flip-flops and anything else clocked
}

// lutramWrite says whether port of a distributed RAM cell (RAM32M,
// RAM64X1D, ...) is on its write side — data, write enable, write clock
// — which its outputs do not follow combinationally.
func lutramWrite(typ, port string) bool {
	if !strings.HasPrefix(typ, "RAM") || strings.HasPrefix(typ, "RAMB") {
		return false
	}
	return port == "D" || port == "WE" || port == "WCLK" || strings.HasPrefix(port, "DI")
}

// estimate computes the critical path of module top in a Yosys JSON
// netlist (synth_xilinx output).
//
// Long: one compiler pass whose steps share its work lists and maps;
// pieces would pass them all back and forth.
func estimate(netlist []byte, top string) (Timing, error) {
	var nl yosysNetlist
	if err := json.Unmarshal(netlist, &nl); err != nil {
		return Timing{}, fmt.Errorf("netlist: %v", err)
	}
	mod, ok := nl.Modules[top]
	if !ok {
		return Timing{}, fmt.Errorf("netlist: no module %s", top)
	}
	type cell struct {
		delay   float64
		lut     bool
		carry   bool
		inputs  []int
		outputs []int
	}
	bit := func(b any) (int, bool) {
		f, ok := b.(float64) // JSON numbers; constants are "0", "1", "x", "z"
		return int(f), ok
	}
	driver := map[int]int{}    // net -> combinational cell driving it
	start := map[int]float64{} // net -> arrival at a path's start
	var ends []int             // nets that end a path
	owner := map[int]int{}     // a register's input net -> its output net
	setup := map[int]float64{} // a path end's extra time before the clock
	var cells []cell
	// In name order, cells and their ports: on paths of equal delay the
	// first found is the one named, so the same netlist names the same
	// path every time.
	for _, cn := range slices.Sorted(maps.Keys(mod.Cells)) {
		c := mod.Cells[cn]
		comb, delay, st, su := cellKind(c.Type, c.Parameters)
		var in, out []int
		for _, port := range slices.Sorted(maps.Keys(c.Conns)) {
			bits := c.Conns[port]
			for _, b := range bits {
				n, ok := bit(b)
				if !ok {
					continue
				}
				switch {
				case c.Dirs[port] == "output":
					out = append(out, n)
				case comb && lutramWrite(c.Type, port):
					// A distributed RAM's write is clocked: its data and
					// enable end a path; only its read addresses reach
					// its outputs (a crossing FIFO's write side does not
					// run on into its read side).
					ends = append(ends, n)
				default:
					in = append(in, n)
				}
			}
		}
		if !comb {
			for _, n := range out {
				start[n] = max(start[n], st)
			}
			ends = append(ends, in...)
			for _, n := range in {
				setup[n] = max(setup[n], su)
			}
			if len(out) > 0 {
				for _, n := range in {
					owner[n] = out[0] // a path into a register is named by what it writes
				}
			}
			continue
		}
		i := len(cells)
		cells = append(cells, cell{delay: delay, lut: strings.HasPrefix(c.Type, "LUT"),
			carry: strings.HasPrefix(c.Type, "CARRY"), inputs: in, outputs: out})
		for _, n := range out {
			driver[n] = i
		}
	}
	for _, pn := range slices.Sorted(maps.Keys(mod.Ports)) {
		p := mod.Ports[pn]
		for _, b := range p.Bits {
			if n, ok := bit(b); ok && p.Direction == "output" {
				ends = append(ends, n)
			}
		}
	}
	// Arrival time at each net, with the LUTs and carries on the way: a
	// depth-first walk back from the path ends, memoised.
	type arrival struct {
		t           float64
		luts, carry int
		from        int // the net the path starts at
	}
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]int, len(cells))
	at := make([]arrival, len(cells)) // at a cell's outputs
	var net func(n int) (arrival, error)
	var visit func(i int) (arrival, error)
	net = func(n int) (arrival, error) {
		if i, ok := driver[n]; ok {
			return visit(i)
		}
		return arrival{t: start[n], from: n}, nil // a flip-flop, a port or a constant
	}
	visit = func(i int) (arrival, error) {
		switch state[i] {
		case done:
			return at[i], nil
		case visiting:
			return arrival{}, fmt.Errorf("netlist: a combinational loop")
		}
		state[i] = visiting
		worst := arrival{from: -1}
		for k, n := range cells[i].inputs {
			a, err := net(n)
			if err != nil {
				return arrival{}, err
			}
			if k == 0 || a.t > worst.t {
				worst = a
			}
		}
		c := &cells[i]
		worst.t += c.delay
		if c.lut {
			worst.luts++
		}
		if c.carry {
			worst.carry++
		}
		at[i], state[i] = worst, done
		return worst, nil
	}
	crit := arrival{from: -1}
	end := -1
	for _, n := range ends {
		a, err := net(n)
		if err != nil {
			return Timing{}, err
		}
		a.t += setup[n]
		if end < 0 || a.t > crit.t {
			crit, end = a, n
		}
	}
	// Name the ends by the netlist's names for their nets: a visible
	// name (the Verilog's) before one Yosys made up, then the shortest.
	names := map[int]string{}
	hidden, port := map[int]bool{}, map[int]bool{}
	for _, pn := range slices.Sorted(maps.Keys(mod.Ports)) { // a port's own name first
		for i, b := range mod.Ports[pn].Bits {
			if n, ok := bit(b); ok {
				names[n], port[n] = pn, true
				if len(mod.Ports[pn].Bits) > 1 {
					names[n] = fmt.Sprintf("%s[%d]", pn, i)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(mod.Netnames)) {
		nn := mod.Netnames[name]
		for i, b := range nn.Bits {
			n, ok := bit(b)
			if !ok || port[n] {
				continue
			}
			full := name
			if len(nn.Bits) > 1 {
				full = fmt.Sprintf("%s[%d]", name, i)
			}
			old, seen := names[n]
			h := nn.Hide != 0
			if !seen || hidden[n] && !h || hidden[n] == h && (len(full) < len(old) || len(full) == len(old) && full < old) {
				names[n], hidden[n] = full, h
			}
		}
	}
	to := names[end]
	if o, ok := owner[end]; ok && names[o] != "" {
		to = names[o]
	}
	path := Overhead + crit.t
	return Timing{PathNs: round3(path), LUTLevels: crit.luts, Carries: crit.carry, EstMHz: round3(1000 / path),
		From: names[crit.from], To: to}, nil
}

// round3 rounds to three decimals, so reports and JSON stay stable.
func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
