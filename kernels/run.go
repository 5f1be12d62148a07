package kernels

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
)

// Traffic sets how a run offers beats and takes results: each input
// offers its next beat in a cycle with probability Offer, and the output
// is ready with probability Ready (1 and 1: back to back). A beat once
// offered is held, unchanged, until taken, as AXI-Stream requires.
type Traffic struct {
	Offer, Ready float64
	Seed         uint64

	// split cuts a packet into beats (nil: full beats, the last
	// partial); tests use it for partial beats mid-packet.
	split func(p []byte, nb int) ([][]byte, [][]bool)
}

// Full is back-to-back traffic: every input always offers, the output is
// always ready.
var Full = Traffic{Offer: 1, Ready: 1}

// Stats is what a run measured.
type Stats struct {
	Cycles    int // clock edges until the output's last beat left
	InBeats   int // beats taken from input 0
	OutBeats  int // beats sent on the output
	FirstIn   int // cycle of the first input beat taken
	FirstOut  int // cycle of the first output beat sent
	LastOut   int // cycle of the last output beat sent
	InStalls  int // cycles input 0 offered a beat the kernel did not take, from its first beat on
	OutStalls int // cycles the output offered a beat the consumer did not take
	// Regs are the AXI-Lite registers read back after the packet (the
	// addresses of the kernel's RefRegs), by address.
	Regs map[uint32]uint32
	// OutCycles is the cycle each output beat left, in order.
	OutCycles []int
}

// Latency is the cycles from the first beat in to the first beat out.
func (s Stats) Latency() int { return s.FirstOut - s.FirstIn }

// beats cuts a packet into beats of n bytes, each with its keep mask.
func beats(p []byte, n int) (data [][]byte, keep [][]bool) {
	for off := 0; off < len(p) || off == 0; off += n {
		d, k := make([]byte, n), make([]bool, n)
		for i := 0; i < n && off+i < len(p); i++ {
			d[i], k[i] = p[off+i], true
		}
		data, keep = append(data, d), append(keep, k)
		if len(p) == 0 {
			break
		}
	}
	return data, keep
}

// words packs bytes (and garbage where keep is false, if rng is not nil)
// into little-endian 64-bit words.
func words(b []byte, keep []bool, rng *rand.Rand) []uint64 {
	w := make([]uint64, (len(b)+7)/8)
	for i, c := range b {
		if !keep[i] && rng != nil {
			c = byte(rng.Uint32())
		}
		w[i/8] |= uint64(c) << (8 * (i % 8))
	}
	return w
}

// maskWords is a keep mask as words.
func maskWords(keep []bool) []uint64 {
	w := make([]uint64, (len(keep)+63)/64)
	for i, k := range keep {
		if k {
			w[i/64] |= 1 << (i % 64)
		}
	}
	return w
}

// Run simulates the kernel's module on one packet per input under the
// given traffic and returns the output packet's present bytes. An empty
// packet is one beat with no bytes kept.
func (k *Kernel) Run(in [][]byte, t Traffic) ([]byte, Stats, error) {
	m, err := k.Module()
	if err != nil {
		return nil, Stats{}, err
	}
	return k.run(m, in, t, nil, nil, nil)
}

// Recorder receives, each cycle, the value of every input port of the
// module (in port order) before the clock edge — what a replay testbench
// applies — and whether an output beat moved.
type Recorder func(cycle int, inputs []ir.Port, values [][]uint64)

// run drives module m (the kernel's) as Run does, telling rec each
// cycle's inputs and, if log is not nil, appending a line per cycle in
// the format of the replay testbench (see RunRTL).
//
// Long: the cycle loop drives inputs, checks outputs and records in one
// place, so each cycle's order is plain.
func (k *Kernel) run(m *ir.Module, in [][]byte, t Traffic, rec Recorder, log *[]string, vcd io.Writer) ([]byte, Stats, error) {
	if len(in) != k.Inputs {
		return nil, Stats{}, fmt.Errorf("kernel %s: %d input packets for %d inputs", k.Name, len(in), k.Inputs)
	}
	s, err := sim.New(m)
	if err != nil {
		return nil, Stats{}, err
	}
	if vcd != nil {
		// At the O-NIC's 250 MHz: 4 ns a cycle.
		if err := s.TraceVCD(vcd, 4); err != nil {
			return nil, Stats{}, err
		}
		defer s.Flush()
	}
	rng := rand.New(rand.NewPCG(t.Seed, 0x6b65726e))
	nb := k.InBits() / 8
	type src struct {
		data    [][]byte
		keep    [][]bool
		next    int
		offered bool
		payload []uint64
	}
	srcs := make([]*src, len(in))
	for i, p := range in {
		split := beats
		if t.split != nil {
			split = t.split
		}
		d, kp := split(p, nb)
		srcs[i] = &src{data: d, keep: kp}
	}
	var ports []ir.Port
	for _, p := range m.Ports() {
		if !p.Output {
			ports = append(ports, p)
		}
	}
	values := make([][]uint64, len(ports))
	set := func(name string, v []uint64) {
		for i, p := range ports {
			if p.Name == name {
				values[i] = v
			}
		}
		s.SetWords(name, v)
	}
	st := Stats{FirstIn: -1, FirstOut: -1}
	lite := hasPort(m, "s_axil_araddr")
	var out []byte
	ob := k.OutBits() / 8
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	limit := 1000 + 200*len(srcs[0].data)
	if t.Offer > 0 && t.Ready > 0 {
		limit = int(float64(limit) / min(t.Offer, t.Ready))
	}
	for c := 0; ; c++ {
		if c > limit {
			return out, st, fmt.Errorf("kernel %s: no last beat after %d cycles (%d of %d beats in)", k.Name, c, srcs[0].next, len(srcs[0].data))
		}
		for i, sr := range srcs {
			p := fmt.Sprintf("s%d_", i)
			if !sr.offered && sr.next < len(sr.data) && rng.Float64() < t.Offer {
				sr.offered = true
				sr.payload = words(sr.data[sr.next], sr.keep[sr.next], rng)
			}
			if sr.offered {
				driveBeat(set, p, sr.payload, maskWords(sr.keep[sr.next]), sr.next == len(sr.data)-1)
			} else {
				driveIdle(set, p, rng, nb)
			}
		}
		ready := uint64(0)
		if rng.Float64() < t.Ready {
			ready = 1
		}
		set("m_tready", []uint64{ready})
		if lite {
			idleLite(set)
		}
		if rec != nil {
			rec(c, ports, values)
		}
		// Transfers on this edge.
		var line strings.Builder
		for i, sr := range srcs {
			r, _ := s.Get(fmt.Sprintf("s%d_tready", i))
			fmt.Fprintf(&line, "%d", r)
			switch {
			case sr.offered && r == 1:
				sr.offered = false
				sr.next++
				if i == 0 {
					st.InBeats++
					if st.FirstIn < 0 {
						st.FirstIn = c
					}
				}
			case sr.offered && i == 0 && st.FirstIn >= 0:
				st.InStalls++
			}
		}
		valid, _ := s.Get("m_tvalid")
		fmt.Fprintf(&line, " %d", valid)
		if lite {
			liteLog(&line, s)
		}
		done := false
		if valid == 1 && ready == 0 {
			st.OutStalls++
		}
		if valid == 1 && ready == 1 {
			data, _ := s.GetWords("m_tdata")
			keep, _ := s.GetWords("m_tkeep")
			last, _ := s.Get("m_tlast")
			fmt.Fprintf(&line, " %s %s %d", hexWords(data, 8*ob), hexWords(keep, ob), last)
			for b := range ob {
				if keep[b/64]>>(b%64)&1 == 1 {
					out = append(out, byte(data[b/8]>>(8*(b%8))))
				}
			}
			st.OutBeats++
			st.OutCycles = append(st.OutCycles, c)
			if st.FirstOut < 0 {
				st.FirstOut = c
			}
			st.LastOut = c
			done = last == 1
		}
		if log != nil {
			*log = append(*log, line.String())
		}
		s.Step()
		if done {
			st.Cycles = c + 1
			if lite && k.RefRegs != nil {
				st.Regs, err = k.readBack(s, in, set, rec, ports, values, log, c+1)
			}
			return out, st, err
		}
	}
}

// driveBeat offers a beat on the AXI-Stream input named by prefix p.
func driveBeat(set func(string, []uint64), p string, data, keep []uint64, last bool) {
	l := uint64(0)
	if last {
		l = 1
	}
	set(p+"tdata", data)
	set(p+"tkeep", keep)
	set(p+"tlast", []uint64{l})
	set(p+"tvalid", []uint64{1})
}

// driveIdle offers nothing on input p, with garbage on the unqualified
// signals (nb bytes of data), as AXI-Stream allows.
func driveIdle(set func(string, []uint64), p string, rng *rand.Rand, nb int) {
	set(p+"tdata", randWords(rng, 8*nb))
	set(p+"tkeep", randWords(rng, nb))
	set(p+"tlast", []uint64{rng.Uint64() & 1})
	set(p+"tvalid", []uint64{0})
}

// idleLite drives an AXI-Lite interface with no transaction, ready for
// responses.
func idleLite(set func(string, []uint64)) {
	for _, p := range []string{"s_axil_awaddr", "s_axil_awvalid", "s_axil_wdata", "s_axil_wstrb", "s_axil_wvalid", "s_axil_araddr", "s_axil_arvalid"} {
		set(p, []uint64{0})
	}
	set("s_axil_bready", []uint64{1})
	set("s_axil_rready", []uint64{1})
}

// liteLog appends a cycle's AXI-Lite read channel to a log line: " r"
// and rvalid, and the data when valid.
func liteLog(line *strings.Builder, s *sim.Sim) {
	rv, _ := s.Get("s_axil_rvalid")
	fmt.Fprintf(line, " r%d", rv)
	if rv == 1 {
		rd, _ := s.Get("s_axil_rdata")
		fmt.Fprintf(line, " %08x", rd)
	}
}

// readBack reads the registers of the kernel's RefRegs over AXI-Lite,
// one read at a time in address order, from cycle c0 on, logging and
// recording each cycle as run does.
func (k *Kernel) readBack(s *sim.Sim, in [][]byte, set func(string, []uint64), rec Recorder, ports []ir.Port, values [][]uint64, log *[]string, c0 int) (map[uint32]uint32, error) {
	ref, err := k.RefRegs(in)
	if err != nil {
		return nil, err
	}
	addrs := slices.Sorted(maps.Keys(ref))
	got := map[uint32]uint32{}
	i, asked := 0, false
	for c := c0; i < len(addrs); c++ {
		if c > c0+16*len(addrs)+16 {
			return got, fmt.Errorf("kernel %s: AXI-Lite read of %#x not answered", k.Name, addrs[i])
		}
		for j := range k.Inputs {
			set(fmt.Sprintf("s%d_tvalid", j), []uint64{0})
		}
		set("m_tready", []uint64{1})
		idleLite(set)
		if !asked {
			set("s_axil_araddr", []uint64{uint64(addrs[i])})
			set("s_axil_arvalid", []uint64{1})
		}
		if rec != nil {
			rec(c, ports, values)
		}
		var line strings.Builder
		for j := range k.Inputs {
			r, _ := s.Get(fmt.Sprintf("s%d_tready", j))
			fmt.Fprintf(&line, "%d", r)
		}
		v, _ := s.Get("m_tvalid")
		fmt.Fprintf(&line, " %d", v)
		liteLog(&line, s)
		if log != nil {
			*log = append(*log, line.String())
		}
		if ar, _ := s.Get("s_axil_arready"); !asked && ar == 1 {
			asked = true
		}
		if rv, _ := s.Get("s_axil_rvalid"); rv == 1 {
			rd, _ := s.Get("s_axil_rdata")
			got[addrs[i]] = uint32(rd)
			i, asked = i+1, false
		}
		s.Step()
	}
	return got, nil
}

// randWords is a random value of n bits, as words.
func randWords(rng *rand.Rand, n int) []uint64 {
	w := make([]uint64, (n+63)/64)
	for i := range w {
		w[i] = rng.Uint64()
	}
	if n%64 != 0 {
		w[len(w)-1] &= 1<<(n%64) - 1
	}
	return w
}

// hasPort says whether m has a port named name.
func hasPort(m *ir.Module, name string) bool {
	for _, p := range m.Ports() {
		if p.Name == name {
			return true
		}
	}
	return false
}
