package sim

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"onic/hdlgen/ir"
)

// vcd writes a Value Change Dump of the named signals: ports, wires and
// registers, plus clk and rst.
type vcd struct {
	w      *bufio.Writer
	nodes  []int32    // traced nodes
	ids    []string   // their VCD identifiers
	last   [][]uint64 // their words as last dumped
	period uint64     // clock period in the timescale's units
	rst    bool       // rst as last dumped
	err    error
}

// TraceVCD starts writing a VCD of the simulation to w (for GTKWave and
// the like): clk, rst and every port, wire and register, with a clock of
// the given period in nanoseconds. Values are sampled after each rising
// edge; the dump is buffered, and Flush writes it out. Called after some
// Steps, the dump starts at the current cycle's time (a window of a long
// run; StopVCD ends it).
func (s *Sim) TraceVCD(w io.Writer, periodNs uint64) error {
	if periodNs < 2 || periodNs%2 != 0 {
		return fmt.Errorf("vcd: clock period %d ns must be even and at least 2", periodNs)
	}
	v := &vcd{w: bufio.NewWriter(w), period: periodNs}
	m := s.m
	// One identifier per traced node; a node with several names (a
	// register that drives an output port) gets a $var for each.
	names := map[int32][]string{}
	var order []int32
	add := func(i int32, name string) {
		if names[i] == nil {
			order = append(order, i)
		}
		names[i] = append(names[i], name)
	}
	for i := 0; i < m.Len(); i++ {
		if n := m.Node(i); n.Name != "" {
			add(int32(i), n.Name)
		}
	}
	for _, p := range m.Ports() {
		if p.Output {
			add(int32(p.Node), p.Name)
		}
	}
	fmt.Fprintf(v.w, "$version onic hdlgen/sim $end\n$timescale 1ns $end\n$scope module %s $end\n", m.Name())
	fmt.Fprintf(v.w, "$var wire 1 ! clk $end\n$var wire 1 \" rst $end\n")
	for k, i := range order {
		id := vcdID(k + 2)
		v.nodes, v.ids = append(v.nodes, i), append(v.ids, id)
		for _, name := range names[i] {
			fmt.Fprintf(v.w, "$var wire %d %s %s $end\n", m.Node(int(i)).W, id, name)
		}
	}
	start := s.cycles * v.period // (s.vcd is not v yet: edgeTime's reading)
	if s.vcdAtSet {
		start = s.vcdAt
	}
	fmt.Fprintf(v.w, "$upscope $end\n$enddefinitions $end\n#%d\n$dumpvars\n0!\n", start)
	fmt.Fprintf(v.w, "%d\"\n", b2u(s.rst))
	v.rst = s.rst
	v.last = make([][]uint64, len(v.nodes))
	for k, i := range v.nodes {
		v.last[k] = append([]uint64(nil), s.valueWords(int(i))...)
		v.value(k, m.Node(int(i)))
	}
	v.w.WriteString("$end\n")
	s.vcd = v
	return v.w.Flush()
}

// vcdID is the k'th short identifier from the printable range ! to ~.
func vcdID(k int) string {
	var b []byte
	for {
		b = append(b, byte('!'+k%94))
		k /= 94
		if k == 0 {
			return string(b)
		}
		k--
	}
}

func (v *vcd) value(k int, n *ir.Node) {
	words := v.last[k]
	if n.W == 1 {
		fmt.Fprintf(v.w, "%d%s\n", words[0], v.ids[k])
		return
	}
	// Binary, most significant word first, without leading zeros.
	top := len(words) - 1
	for top > 0 && words[top] == 0 {
		top--
	}
	v.w.WriteByte('b')
	v.w.WriteString(strconv.FormatUint(words[top], 2))
	for j := top - 1; j >= 0; j-- {
		s := strconv.FormatUint(words[j], 2)
		v.w.WriteString(strings.Repeat("0", 64-len(s)))
		v.w.WriteString(s)
	}
	fmt.Fprintf(v.w, " %s\n", v.ids[k])
}

// traceEdge records the rising edge just simulated, the values that
// changed after it, and the falling edge half a period later.
func (s *Sim) traceEdge() {
	v := s.vcd
	if v.err != nil {
		return
	}
	t := s.edgeTime()
	fmt.Fprintf(v.w, "#%d\n1!\n", t)
	if s.rst != v.rst {
		v.rst = s.rst
		fmt.Fprintf(v.w, "%d\"\n", b2u(s.rst))
	}
	for k, i := range v.nodes {
		if cur := s.valueWords(int(i)); !slices.Equal(cur, v.last[k]) {
			copy(v.last[k], cur)
			v.value(k, s.m.Node(int(i)))
		}
	}
	fmt.Fprintf(v.w, "#%d\n0!\n", t+v.period/2)
	if v.w.Buffered() > 64<<10 {
		v.err = v.w.Flush()
	}
}

// VCDTime sets the time, in the dump's nanoseconds, of the next rising
// edge the dump records (and of its start, if called before TraceVCD):
// for a simulation whose cycles run in step with another clock, which
// may pause, so that the waveform's times are that clock's. Without it an
// edge's time is its cycle number times the period.
func (s *Sim) VCDTime(ns uint64) { s.vcdAt, s.vcdAtSet = ns, true }

// edgeTime is the dump's time of the edge being recorded.
func (s *Sim) edgeTime() uint64 {
	if s.vcdAtSet {
		return s.vcdAt
	}
	return s.cycles * s.vcd.period
}

// StopVCD ends the dump TraceVCD started: it writes out what is buffered
// and records no more cycles.
func (s *Sim) StopVCD() error {
	err := s.Flush()
	s.vcd = nil
	return err
}

// Flush writes out what the VCD has buffered and reports any write error.
func (s *Sim) Flush() error {
	if s.vcd == nil {
		return nil
	}
	if s.vcd.err != nil {
		return s.vcd.err
	}
	return s.vcd.w.Flush()
}
