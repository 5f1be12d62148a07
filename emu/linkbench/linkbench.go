// Package linkbench streams back-to-back DMA over one simulated PCIe link
// and measures the effective payload bandwidth the link model delivers.
// Model states the analytical accounting of the same overheads; tests hold
// the simulation to it.
//
// The device is at end 0 of the link, the host (root port) at end 1. Each
// DMA transfer starts at a 4 KiB-aligned address, so every transfer splits
// into the same TLPs.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package linkbench

import (
	"fmt"

	"onic/emu/link"
	"onic/emu/sim"
	"onic/pcie/lanes"
	"onic/tlp"
)

// Op is the DMA direction, from the device's point of view.
type Op string

// Operations.
const (
	Write Op = "write" // device writes host memory (MWr upstream)
	Read  Op = "read"  // device reads host memory (MRd upstream, CplD downstream)
	RdWr  Op = "rdwr"  // both at once
)

// Config describes a linkbench run. Zero fields take the defaults noted.
type Config struct {
	Gen   tlp.Gen
	Lanes int
	MPS   int
	MRRS  int // default 512
	RCB   int // default 64
	Op    Op  // default write
	Size  int // bytes per DMA transfer
	// Addr32 uses 3 DW headers; by default DMA addresses are above 4 GiB
	// and requests carry 4 DW headers, as on hosts with large memories.
	Addr32 bool
	ECRC   bool
	Tags   int      // outstanding reads, default 256
	Memory sim.Time // host memory read latency, default 300 ns
	// Propagation of the link, default 5 ns.
	Propagation sim.Time
	// The run measures from Warmup (default 5 us) for Window (40 us).
	Warmup, Window sim.Time
	Credits        link.Credits
	ReplayBytes    int
	// Plan, when set, runs an O-NIC's optical link on that lane plan
	// instead (link.Config.Plan; Gen and Lanes are then ignored): what
	// an optical port carries. Model does not cover it.
	Plan lanes.Plan
}

// Check fills in defaults and checks the configuration.
func (c *Config) Check() error {
	if c.Tags == 0 {
		c.Tags = 256
	}
	if c.Memory == 0 {
		c.Memory = 300 * sim.Nanosecond
	}
	if c.Propagation == 0 {
		c.Propagation = 5 * sim.Nanosecond
	}
	if c.Warmup == 0 {
		c.Warmup = 5 * sim.Microsecond
	}
	if c.Window == 0 {
		c.Window = 40 * sim.Microsecond
	}
	if c.Op == "" {
		c.Op = Write
	}
	if c.MRRS == 0 {
		c.MRRS = 512
	}
	if c.RCB == 0 {
		c.RCB = 64
	}
	switch {
	case !c.Gen.Valid():
		return fmt.Errorf("gen %d: must be 1 to 5", c.Gen)
	case c.Lanes != 1 && c.Lanes != 2 && c.Lanes != 4 && c.Lanes != 8 && c.Lanes != 16:
		return fmt.Errorf("lanes %d: must be 1, 2, 4, 8 or 16", c.Lanes)
	case c.Op != Write && c.Op != Read && c.Op != RdWr:
		return fmt.Errorf("op %q: must be write, read or rdwr", c.Op)
	case c.Size < 1 || c.Size > 1<<20:
		return fmt.Errorf("size %d: must be 1 to 1048576 bytes", c.Size)
	case c.RCB != 64 && c.RCB != 128:
		return fmt.Errorf("rcb %d: must be 64 or 128", c.RCB)
	case c.Tags < 1 || c.Tags > 1024:
		return fmt.Errorf("tags %d: must be 1 to 1024", c.Tags)
	case c.Memory < 0 || c.Propagation < 0 || c.Warmup < 0 || c.Window <= 0:
		return fmt.Errorf("memory latency and propagation must not be negative, the window must be positive")
	}
	if err := tlp.CheckSize("mps", c.MPS); err != nil {
		return err
	}
	return tlp.CheckSize("mrrs", c.MRRS)
}

// Result is what a run measured, or what the model predicts.
type Result struct {
	EffectiveGbps float64 `json:"effective_gbps"` // payload delivered, Gb/s (both directions summed for rdwr)
	TLPRate       float64 `json:"tlps_per_sec"`   // data TLPs delivered per second
	Utilization   float64 `json:"utilization"`    // busy fraction of the data direction(s)
	RawGbps       float64 `json:"raw_gbps"`       // one direction's rate after line coding
}

// RawGbps is one direction's bit rate after line coding.
func RawGbps(g tlp.Gen, lanes int) float64 {
	p, c := g.Encoding()
	return float64(g.TransferRate()) / 1000 * float64(p) / float64(c) * float64(lanes)
}

// hdrBytes is the TLP header (and digest) size of a kind under c.
func (c *Config) hdrBytes(k tlp.Kind) int {
	n := 12
	if !c.Addr32 && (k == tlp.MWr || k == tlp.MRd) {
		n = 16
	}
	if c.ECRC {
		n += 4
	}
	return n
}

// base is where DMA i starts: 4 KiB-aligned, above 4 GiB unless Addr32.
func (c *Config) base(i int) uint64 {
	b := uint64(i%4096) * uint64((c.Size+4095)&^4095)
	if !c.Addr32 {
		b += 1 << 32
	}
	return b
}

// Packet kinds, in the low byte of Packet.Arg; a read's tag is above.
const (
	kindWrite = iota
	kindRead
	kindCpl
)

// readReq is an outstanding read, indexed by tag.
type readReq struct {
	ch   tlp.Chunk
	left int // bytes still to come back
}

// bench is one run.
type bench struct {
	cfg       Config
	s         *sim.Sim
	l         *link.Link
	pool      []*link.Packet
	dmaW      int
	wChunks   []tlp.Chunk
	wNext     int
	dmaR      int
	rChunks   []tlp.Chunk
	rNext     int
	reqs      []readReq
	freeTags  []int
	due       []int // tags whose completions are waiting for memory, in order
	measuring bool
	bytesIn   [2]uint64 // payload delivered to end 0 (read data) and end 1 (written data)
	tlpsIn    [2]uint64
}

func (b *bench) packet(class link.Class, bytes, payload int, arg uint64) *link.Packet {
	var p *link.Packet
	if n := len(b.pool); n > 0 {
		p, b.pool = b.pool[n-1], b.pool[:n-1]
	} else {
		p = new(link.Packet)
	}
	*p = link.Packet{Class: class, Bytes: bytes, Payload: payload, Arg: arg}
	return p
}

// Run simulates c and measures it.
func Run(c Config) (Result, error) {
	if err := c.Check(); err != nil {
		return Result{}, err
	}
	b := &bench{cfg: c, s: sim.New(1024), reqs: make([]readReq, c.Tags)}
	for t := c.Tags - 1; t >= 0; t-- {
		b.freeTags = append(b.freeTags, t)
	}
	l, err := link.New(b.s, link.Config{Gen: c.Gen, Lanes: c.Lanes, MPS: c.MPS, Propagation: c.Propagation,
		Credits: c.Credits, ReplayBytes: c.ReplayBytes, Plan: c.Plan}, b, b)
	if err != nil {
		return Result{}, err
	}
	b.l = l
	b.feed()
	b.s.Run(c.Warmup)
	start := [2]link.Stats{l.Stats(0), l.Stats(1)}
	b.measuring = true
	b.s.Run(c.Warmup + c.Window)
	end := [2]link.Stats{l.Stats(0), l.Stats(1)}

	secs := float64(c.Window) / float64(sim.Second)
	res := Result{RawGbps: RawGbps(c.Gen, c.Lanes)}
	var dirs []int
	switch c.Op {
	case Write:
		dirs = []int{0}
	case Read:
		dirs = []int{1}
	default:
		dirs = []int{0, 1}
	}
	psPerSym := float64(l.SymbolTime(1<<30)) / float64(1<<30)
	for _, d := range dirs {
		res.TLPRate += float64(b.tlpsIn[1-d]) / secs
		busy := float64(end[d].BusySymbols-start[d].BusySymbols) * psPerSym
		res.Utilization += busy / float64(c.Window) / float64(len(dirs))
	}
	res.EffectiveGbps = float64(b.bytesIn[0]+b.bytesIn[1]) * 8 / secs / 1e9
	return res, nil
}

// feed keeps the device's transmit queues topped up: writes always
// waiting, reads as far as tags allow.
func (b *bench) feed() {
	c := &b.cfg
	if c.Op != Read {
		for b.l.Queued(0, link.Posted) < 8 {
			if b.wNext == len(b.wChunks) {
				b.wChunks = b.wChunks[:0]
				for ch := range tlp.Chunks(c.base(b.dmaW), c.Size, c.MPS) {
					b.wChunks = append(b.wChunks, ch)
				}
				b.wNext = 0
				b.dmaW++
			}
			ch := b.wChunks[b.wNext]
			b.wNext++
			// Arg carries the bytes the write delivers.
			b.l.Send(0, b.packet(link.Posted, c.hdrBytes(tlp.MWr)+int(ch.LengthDW)*4, int(ch.LengthDW)*4,
				kindWrite|uint64(ch.Size)<<8))
		}
	}
	if c.Op != Write {
		for len(b.freeTags) > 0 && b.l.Queued(0, link.NonPosted) < 8 {
			if b.rNext == len(b.rChunks) {
				b.rChunks = b.rChunks[:0]
				for ch := range tlp.Chunks(c.base(b.dmaR), c.Size, c.MRRS) {
					b.rChunks = append(b.rChunks, ch)
				}
				b.rNext = 0
				b.dmaR++
			}
			ch := b.rChunks[b.rNext]
			b.rNext++
			tag := b.freeTags[len(b.freeTags)-1]
			b.freeTags = b.freeTags[:len(b.freeTags)-1]
			b.reqs[tag] = readReq{ch: ch, left: ch.Size}
			b.l.Send(0, b.packet(link.NonPosted, c.hdrBytes(tlp.MRd), 0, kindRead|uint64(tag)<<8))
		}
	}
}

// Receive handles a TLP arriving at either end; both ends take TLPs at
// once.
func (b *bench) Receive(l *link.Link, side int, p *link.Packet) sim.Time {
	kind, val := p.Arg&0xFF, int(p.Arg>>8)
	b.pool = append(b.pool, p)
	switch kind {
	case kindWrite:
		b.count(1, val)
		b.feed()
	case kindRead:
		// The host reads memory, then completes.
		b.due = append(b.due, val)
		b.s.After(b.cfg.Memory, b, 0)
	case kindCpl:
		r := &b.reqs[val&0xFFFF]
		n := val >> 16 // bytes this completion returns
		r.left -= n
		b.count(0, n)
		if r.left <= 0 {
			b.freeTags = append(b.freeTags, val&0xFFFF)
			b.feed()
		}
	}
	return 0
}

func (b *bench) count(side, n int) {
	if b.measuring {
		b.bytesIn[side] += uint64(n)
		b.tlpsIn[side]++
	}
}

// Handle sends the completions of the oldest read whose memory access is
// done.
func (b *bench) Handle(s *sim.Sim, arg uint64) {
	tag := b.due[0]
	b.due = b.due[1:]
	ch := b.reqs[tag].ch
	a := ch.Addr &^ 3
	for c := range tlp.Completions(a, ch.LengthDW, ch.FirstBE, ch.LastBE, b.cfg.RCB, b.cfg.MPS) {
		n := min(int(c.ByteCount), int(c.LengthDW)*4-int(c.LowerAddress&3))
		payload := int(c.LengthDW) * 4
		b.l.Send(1, b.packet(link.Completion, b.cfg.hdrBytes(tlp.CplD)+payload, payload, kindCpl|uint64(tag|n<<16)<<8))
	}
}
