package card

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"onic/designs/manager"
	"onic/emu/cluster"
	"onic/emu/hostif"
	"onic/emu/scenario"
	"onic/hdlgen/ir"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/pcie/pg213"
	"onic/pcie/rc"
	"onic/tlp"
)

// rcOps is how many reads and writes host A and host B each make in
// TestCardsUnderRootComplexes.
var rcOps = flag.Int("rc-ops", 24, "reads and writes each host makes in TestCardsUnderRootComplexes")

// rcMem is how much of each host's memory, at 4 GiB, the other host's
// CPU writes and reads through its O-NIC's window.
const rcMem = 64 << 10

// An rcOp is one thing a host's CPU does in TestCardsUnderRootComplexes.
type rcOp struct {
	host int
	kind rcKind
	off  uint64 // in the other host's memory (rcWrite, rcRead) or BAR0 (rcRegs)
	n    int
	data []byte // what rcWrite writes
	gap  int    // cycles the card run lets pass before the next operation
}

type rcKind int

const (
	rcWrite  rcKind = iota // a write through the window
	rcRead                 // a read through the window
	rcRegs                 // a read of its own O-NIC's registers
	rcDenied               // a read through the window that an access check refuses
)

// rcConfig is the generator's input for O-NIC k in
// TestCardsUnderRootComplexes: the two-party scenario's, its host's
// software also allowed to the O-NIC's registers, and both access checks
// narrowed so that reads past the memory the test uses are refused —
// the peer's requesters may reach rcMem bytes of this host's memory, this
// host's CPU 2*rcMem of the peer's through the window. A read between the
// two crosses the fabric and is refused by the far O-NIC; one past both
// is refused by the near one.
func rcConfig(t testing.TB, k int) manager.Config {
	c := withRegisters(config(t, k))
	d := slices.Clone(c.Manager.Access.Domains)
	for i, size := range map[int]uint64{0: 2 * rcMem, 1: rcMem} {
		d[i].Ranges = slices.Clone(d[i].Ranges)
		for j := range d[i].Ranges {
			if d[i].Ranges[j].Base == 1<<32 {
				d[i].Ranges[j].Size = size
			}
		}
	}
	c.Manager.Access.Domains = d
	return c
}

// rcTraffic is the CPUs' program for seed: each host's memory at the
// start and what each CPU does, in turn — 1 byte to 4 KiB at any
// alignment through the window, and its O-NIC's registers: from the ID
// register on, or up to the whole MSI-X table (1 KiB, more than MPS) at
// any alignment.
func rcTraffic(seed uint64, ops int) (mem [2][]byte, prog []rcOp) {
	r := rand.New(rand.NewPCG(seed, 9))
	for k := range mem {
		mem[k] = make([]byte, rcMem)
		for i := range mem[k] {
			mem[k][i] = byte(r.Uint32())
		}
	}
	for i := range 2 * ops {
		op := rcOp{host: i % 2, n: 1 + r.IntN(4096)}
		if r.IntN(3) == 0 {
			op.n = 1 + r.IntN(64)
		}
		op.off = uint64(r.IntN(rcMem - op.n))
		switch k := i / 2 % 6; {
		case k == 0:
			op.kind = rcWrite
			op.data = make([]byte, op.n)
			for j := range op.data {
				op.data[j] = byte(r.Uint32())
			}
		case k < 4:
			op.kind = rcRead
			if r.IntN(8) == 0 {
				op.kind, op.n = rcDenied, 1+r.IntN(64)
				op.off = rcMem + uint64(r.IntN(2*rcMem-64))
			}
		default:
			op.kind, op.off, op.n = rcRegs, 0, 4*(1+r.IntN(8))
			if r.IntN(2) == 0 {
				op.n = 1 + r.IntN(16*pcie.ONICMSIXVectors)
				op.off = pcie.ONICMSIXTableOffset + uint64(r.IntN(16*pcie.ONICMSIXVectors-op.n+1))
			}
		}
		op.gap = r.IntN(8)
		prog = append(prog, op)
	}
	return mem, prog
}

// rcCounters are the BAR0 offsets of the counters both runs read at the
// end: the manager's host counters (COUNT_*) and the port pipelines'
// block at the head of the counter region — the ones the emulator's
// O-NIC serves as the card does.
func rcCounters() []uint64 {
	var offs []uint64
	for i := range pmgr.Reasons() {
		offs = append(offs, uint64(pmgr.RegCount0)+4*uint64(i))
	}
	for i := range pmgr.PortInCounters() {
		offs = append(offs, pcie.ONICCountersOffset+4*uint64(i))
	}
	return offs
}

// rcResult is what a run of rcTraffic gave: every read's bytes, by
// operation, each host's memory and each O-NIC's counters at the end.
type rcResult struct {
	reads  map[int][]byte
	status map[int]tlp.Status // of each rcDenied read
	mem    [2][]byte
	counts [2][]uint32
}

// TestCardsUnderRootComplexes: the two-party scenario's two generated
// cards, each behind the pcie/pg213 model of AMD's block and a root
// complex with memory written from the PCIe specification (pcie/rc, not
// the emulator's host), their port A lanes joined. Each host's CPU writes
// and reads the other host's memory through its O-NIC's window — 1 byte
// to 4 KiB at any alignment, many reads outstanding — under each MRRS
// from 128 to 4096 bytes, and reads its own O-NIC's registers (up to
// the whole MSI-X table, which the card answers in completions of at
// most MPS, split at MPS-aligned addresses). Every read
// crosses both cards and both root complexes, each of which routes
// completions by requester ID and checks each one against what its read
// still owes: every byte read is the one the other host's memory holds,
// every write lands, and neither root complex finds a TLP malformed, a
// completion unexpected or a read unanswered.
//
// Then the emulator runs the same program — the same scenario's O-NICs
// as its Go model, each host's CPU a host-interface client (onic emu
// serve's protocol, in lock-step) with the same MRRS — and must give the
// same bytes for every read, the same memories and the same counters.
// The counters count TLPs, so those runs have the root complexes split
// completions as the emulator's hosts do (rc.Config.Fill); one more run
// with the first completion ending at an RCB boundary compares bytes and
// memories only.
func TestCardsUnderRootComplexes(t *testing.T) {
	link := testLink(t)
	for _, tc := range []struct {
		mrrs int
		fill bool // the root complexes' completions as long as MPS allows
	}{{128, true}, {512, true}, {4096, true}, {512, false}} {
		name := fmt.Sprintf("mrrs-%d", tc.mrrs)
		if !tc.fill {
			name += "-rcb-first"
		}
		t.Run(name, func(t *testing.T) {
			mem, prog := rcTraffic(uint64(tc.mrrs), *rcOps)
			cards := runCardsUnderRC(t, link, tc.mrrs, tc.fill, mem, prog)
			emu := runEmulatorUnderClients(t, tc.mrrs, mem, prog)
			denied := 0
			for i, op := range prog {
				if op.kind == rcDenied {
					denied++
					if cards.status[i] != emu.status[i] {
						t.Errorf("operation %d (host %d reads %d bytes at +%#x, refused): the cards complete it %v, the emulator %v",
							i, op.host, op.n, op.off, cards.status[i], emu.status[i])
					}
					continue
				}
				if !bytes.Equal(cards.reads[i], emu.reads[i]) {
					t.Errorf("operation %d (host %d reads %d bytes at +%#x, kind %d): the cards and the emulator read different bytes:\n cards    % x\n emulator % x",
						i, op.host, op.n, op.off, op.kind, head(cards.reads[i]), head(emu.reads[i]))
				}
			}
			if denied == 0 {
				t.Fatal("the program has no refused read")
			}
			names := pmgr.Reasons()
			for k := range 2 {
				if !bytes.Equal(cards.mem[k], emu.mem[k]) {
					t.Errorf("host %d's memory differs between the cards' run and the emulator's", k)
				}
				if !tc.fill {
					// The root complexes answer reads in more completions
					// than the emulator's hosts (both legal): the TLP
					// counts differ by that much.
					continue
				}
				for i, off := range rcCounters() {
					if cards.counts[k][i] != emu.counts[k][i] {
						name := fmt.Sprintf("port counter %q", pmgr.PortInCounters()[max(i-len(names), 0)])
						if i < len(names) {
							name = "COUNT_" + names[i].String()
						}
						t.Errorf("O-NIC %d's %s (BAR0+%#x): the card says %d, the emulator %d", k, name, off, cards.counts[k][i], emu.counts[k][i])
					}
				}
			}
		})
	}
}

// head is the first 16 bytes of b, for messages.
func head(b []byte) []byte { return b[:min(len(b), 16)] }

// runCardsUnderRC runs prog on the two generated cards under pcie/rc
// root complexes.
func runCardsUnderRC(t *testing.T, link *ir.Module, mrrs int, fill bool, mem [2][]byte, prog []rcOp) rcResult {
	p := newPair(t, [2]*ir.Module{cardOf(t, "onic_card_a", rcConfig(t, 0), link),
		cardOf(t, "onic_card_b", rcConfig(t, 1), link)})
	p.setDelay(9)
	var hosts [2]*rc.RC
	for k := range hosts {
		h, err := rc.New(rc.Config{ID: tlp.NewID(0, 0, 0), Ports: []rc.Port{{Secondary: p.ids[k].Bus(), Subordinate: p.ids[k].Bus()}},
			MemBase: 1 << 32, MemSize: 1 << 30, MPS: 256, MRRS: mrrs, RCB: 64, Timeout: 20000, Fill: fill})
		if err != nil {
			t.Fatal(err)
		}
		hosts[k] = h
		h.Poke(1<<32, mem[k])
	}
	p.run("the link comes up", 5000, func() bool { return p.up(0) && p.up(1) })
	w := design(t, 0).Windows[0]
	winBase := bases[w.BAR] + w.Offset
	aperture := bits.Len64(onicFunction(t).BARs[w.BAR].Size) - 1
	send := func(k int, outs []rc.Out, bar, ap int) {
		for _, o := range outs {
			c, err := pg213.ToCQ(&o.TLP, bar, ap, 0)
			if err != nil {
				t.Fatal(err)
			}
			p.cq[k] = append(p.cq[k], beatsOf(append(c.Descriptor[:], c.Payload...), uint64(c.FirstBE)|uint64(c.LastBE)<<8)...)
		}
	}
	type pending struct {
		op   int
		want []byte // the memory read, when the read was made
	}
	res := rcResult{reads: map[int][]byte{}, status: map[int]tlp.Status{}}
	reads := map[[2]int]pending{} // by host and read ID
	writes, overMPS := 0, 0
	// drain runs the cards until every read has finished, checking each
	// window read against the memory it read as it was when the read was
	// made.
	most := 0 // read requests outstanding at once, at the most
	drain := func() {
		for cyc := 0; len(reads) > 0; cyc++ {
			if cyc == 200000 {
				t.Fatalf("%d reads never finished (%+v, %+v)", len(reads), hosts[0].Counts, hosts[1].Counts)
			}
			step(p, hosts)
			most = max(most, hosts[0].Outstanding()+hosts[1].Outstanding())
			for k, h := range hosts {
				for _, d := range h.Done() {
					rd, ok := reads[[2]int{k, d.ID}]
					if !ok {
						t.Fatalf("host %d: read %d finished twice", k, d.ID)
					}
					delete(reads, [2]int{k, d.ID})
					op := prog[rd.op]
					if op.kind == rcDenied {
						if d.Status == tlp.StatusSC {
							t.Fatalf("host %d: a read of %d bytes at +%#x, which an access check refuses, completed successfully", k, op.n, op.off)
						}
						res.status[rd.op] = d.Status
						continue
					}
					if d.Status != tlp.StatusSC {
						t.Fatalf("host %d: read of %d bytes at +%#x: %v %s", k, op.n, op.off, d.Status, d.Err)
					}
					res.reads[rd.op] = d.Data
					if op.kind == rcRegs {
						if op.off == 0 {
							if id := binary.LittleEndian.Uint32(d.Data); id != 0x4F4E4943 {
								t.Fatalf("host %d: its O-NIC's ID register reads %#x", k, id)
							}
						}
						continue
					}
					if !bytes.Equal(d.Data, rd.want) {
						t.Fatalf("host %d: read of %d bytes at +%#x: other bytes than host %d's memory holds", k, op.n, op.off, 1-k)
					}
				}
			}
		}
	}
	read := func(i, k int, addr uint64, n int, bar, ap int, want []byte) {
		id, outs, ok := hosts[k].Read(0, addr, n)
		if !ok {
			t.Fatal("no tags")
		}
		reads[[2]int{k, id}] = pending{op: i, want: want}
		send(k, outs, bar, ap)
	}
	for i, op := range prog {
		k := op.host
		switch op.kind {
		case rcWrite:
			drain() // (no read of the bytes it changes is outstanding)
			send(k, hosts[k].Write(0, winBase+op.off, op.data), w.BAR, aperture)
			writes++
			// Let it land before the next operation reads there.
			p.run("the write lands", 20000, func() bool { return len(p.cq[k]) == 0 })
			for range 600 {
				step(p, hosts)
			}
			if got := hosts[1-k].Peek(1<<32+op.off, op.n); !bytes.Equal(got, op.data) {
				t.Fatalf("host %d's write of %d bytes at +%#x: host %d's memory holds other bytes", k, op.n, op.off, 1-k)
			}
		case rcRead, rcDenied:
			read(i, k, winBase+op.off, op.n, w.BAR, aperture, hosts[1-k].Peek(1<<32+op.off, op.n))
		case rcRegs:
			if op.n > 256 {
				overMPS++
			}
			read(i, k, bases[0]+op.off, op.n, 0, 16, nil)
		}
		for range op.gap {
			step(p, hosts)
		}
	}
	drain()
	for k, h := range hosts {
		denied := 0
		for i := range prog {
			if _, ok := res.status[i]; ok && prog[i].host == k {
				denied++
			}
		}
		if h.Counts != (rc.Counts{ErrorCompleted: uint64(denied)}) || h.Outstanding() != 0 {
			t.Fatalf("host %d's root complex: %+v, %d outstanding", k, h.Counts, h.Outstanding())
		}
	}
	if overMPS == 0 {
		t.Fatal("no register read was longer than MPS")
	}
	if most < 8 {
		t.Fatalf("at most %d read requests were outstanding at once: the test does not load the cards", most)
	}
	// The counters, one read at a time, host A's then host B's.
	for k, h := range hosts {
		for _, off := range rcCounters() {
			id, outs, _ := h.Read(0, bases[0]+off, 4)
			send(k, outs, 0, 16)
			for cyc := 0; ; cyc++ {
				if cyc == 20000 {
					t.Fatalf("host %d: the counter read at BAR0+%#x never finished", k, off)
				}
				step(p, hosts)
				if d := h.Done(); len(d) > 0 {
					if d[0].ID != id || d[0].Status != tlp.StatusSC {
						t.Fatalf("host %d: the counter read at BAR0+%#x: %+v", k, off, d[0])
					}
					res.counts[k] = append(res.counts[k], binary.LittleEndian.Uint32(d[0].Data))
					break
				}
			}
		}
		res.mem[k] = h.Peek(1<<32, rcMem)
	}
	near, far := 0, 0
	for i := range res.status {
		if prog[i].off >= 2*rcMem {
			near++
		} else {
			far++
		}
	}
	t.Logf("MRRS %d: %d operations (%d writes; %d reads refused by the far O-NIC, %d by the near), up to %d read requests outstanding, every byte right",
		mrrs, len(prog), writes, far, near, most)
	return res
}

// runEmulatorUnderClients runs prog on the emulator: the two-party
// scenario with the cards' access rules, each host's MRRS mrrs, served
// over the host interface in lock-step to two clients that play the
// hosts' CPUs, each its own operations in order.
func runEmulatorUnderClients(t *testing.T, mrrs int, mem [2][]byte, prog []rcOp) rcResult {
	cfg := scenario.TwoParty()
	cfg.Flows = nil
	for k := range cfg.ONICs {
		cfg.ONICs[k].Manager = rcConfig(t, k).Manager
	}
	for k := range cfg.Hosts {
		cfg.Hosts[k].MPS, cfg.Hosts[k].MRRS, cfg.Hosts[k].RCB = 256, mrrs, 64
	}
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := hostif.New(cl, hostif.Options{})
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	res := rcResult{reads: map[int][]byte{}, status: map[int]tlp.Status{}}
	var mu sync.Mutex
	var opsDone, countsDone [2]atomic.Bool
	// idle lets simulated time pass until flag is set (in lock-step, a
	// client that waits on nothing holds time for everyone).
	idle := func(c *hostif.Client, flag *atomic.Bool) error {
		for !flag.Load() {
			if _, err := c.Advance(time.Microsecond); err != nil {
				return err
			}
		}
		return nil
	}
	cpu := func(k int) error {
		c, err := hostif.Dial(socket, hostif.ClientOptions{Host: cfg.Hosts[k].Name, MemBytes: rcMem, MemBase: 1 << 32})
		if err != nil {
			return err
		}
		defer c.Close()
		copy(c.Mem(), mem[k])
		ids, err := c.ONICs(0)
		if err != nil {
			return err
		}
		if len(ids) != 1 {
			return fmt.Errorf("host %d finds %d O-NICs", k, len(ids))
		}
		regs, err := c.BAR(0, ids[0], 0)
		if err != nil {
			return err
		}
		win, err := c.BAR(0, ids[0], 2)
		if err != nil {
			return err
		}
		for i, op := range prog {
			if op.host != k {
				continue
			}
			at := win + op.off
			if op.kind == rcRegs {
				at = regs + op.off
			}
			// A CPU access stays within a 4 KiB page: the program makes
			// one per page it touches, as the root complex cuts TLPs.
			var data []byte
			status := tlp.StatusSC
			for a, end := at, at+uint64(op.n); a < end && err == nil; {
				n := int(min(end, a&^0xFFF+0x1000) - a)
				if op.kind == rcWrite {
					err = c.Write(a, op.data[a-at:][:n])
				} else {
					var b []byte
					var st tlp.Status
					b, st, err = c.Read(a, n)
					if err == nil && st != tlp.StatusSC && status == tlp.StatusSC {
						status = st
					}
					data = append(data, b...)
				}
				a += uint64(n)
			}
			if err == nil && (status == tlp.StatusSC) == (op.kind == rcDenied) {
				err = fmt.Errorf("host %d: operation %d, a read of %d bytes at %#x (kind %d): %v", k, i, op.n, at, op.kind, status)
			}
			if err != nil {
				return err
			}
			mu.Lock()
			switch op.kind {
			case rcDenied:
				res.status[i] = status
			case rcRead, rcRegs:
				res.reads[i] = data
			}
			mu.Unlock()
		}
		// Let both CPUs' last writes land, then read the counters.
		opsDone[k].Store(true)
		if err := idle(c, &opsDone[1-k]); err != nil {
			return err
		}
		if _, err := c.Advance(20 * time.Microsecond); err != nil {
			return err
		}
		var counts []uint32
		for _, off := range rcCounters() {
			v, err := c.Read32(regs + off)
			if err != nil {
				return err
			}
			counts = append(counts, v)
		}
		mu.Lock()
		res.counts[k] = counts
		res.mem[k] = slices.Clone(c.Mem())
		mu.Unlock()
		countsDone[k].Store(true)
		return idle(c, &countsDone[1-k])
	}
	errs := make(chan error, 2)
	for k := range 2 {
		go func() { errs <- cpu(k) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// step runs the cards a cycle and lets each host's root complex take what
// its card sent it: requests into its memory (answered on the card's RC
// interface, completions routed by ID) and completions of its CPU's
// reads.
func step(p *pair, hosts [2]*rc.RC) {
	p.cycle()
	for k, h := range hosts {
		h.Tick()
		for _, x := range p.rq[k] {
			for _, o := range h.Receive(0, &x) {
				c := o.TLP
				p.complete(k, &c, x.Address+uint64(c.LowerAddress&3))
			}
		}
		p.rq[k] = p.rq[k][:0]
		for _, c := range p.cc[k] {
			h.Receive(0, &c)
		}
		p.cc[k] = p.cc[k][:0]
	}
}
