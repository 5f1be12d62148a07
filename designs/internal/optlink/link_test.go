package optlink

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/pcie/lanes"
	"onic/testbenches/replay"
	"onic/testbenches/tools"
)

// tlpIn is a TLP as the manager's stream carries it.
type tlpIn struct {
	hdr     [2]uint64 // the 128-bit header bus, low word first
	payload []byte
}

func (x tlpIn) String() string {
	return fmt.Sprintf("hdr %016x%016x, %d bytes", x.hdr[1], x.hdr[0], len(x.payload))
}

// randomTLP makes a header whose Fmt and Length say how much payload
// follows (0 to 1024 DWs, or none), with every other bit random.
func randomTLP(r *rand.Rand) tlpIn {
	var x tlpIn
	x.hdr = [2]uint64{r.Uint64(), r.Uint64()}
	dw0 := uint32(x.hdr[1] >> 32)
	dw0 &^= 1 << 30
	n := 0
	if r.IntN(4) != 0 {
		dw0 |= 1 << 30
		n = 1 + r.IntN(80)
		switch r.IntN(30) {
		case 0:
			n = 1024
		case 1:
			n = 11 + 16*r.IntN(4) // the payload fills the last word: the LCRC needs a word of its own
		}
		dw0 = dw0&^0x3ff | uint32(n&0x3ff)
	}
	x.hdr[1] = x.hdr[1]&0xffffffff | uint64(dw0)<<32
	x.payload = make([]byte, 4*n)
	for j := range x.payload {
		x.payload[j] = byte(r.Uint32())
	}
	return x
}

// beatsOf splits x into 64-byte beats: data words, keep, sop, eop.
type beat struct {
	data     [8]uint64
	keep     uint64
	sop, eop bool
	hdr      [2]uint64
}

func beatsOf(x tlpIn) []beat {
	n := max(1, (len(x.payload)+63)/64)
	bs := make([]beat, n)
	for b := range bs {
		lo, hi := min(64*b, len(x.payload)), min(64*b+64, len(x.payload))
		var buf [64]byte
		copy(buf[:], x.payload[lo:hi])
		for j := range 8 {
			bs[b].data[j] = binary.LittleEndian.Uint64(buf[8*j:])
		}
		bs[b].keep = 1<<((hi-lo)/4) - 1
		bs[b].sop, bs[b].eop, bs[b].hdr = b == 0, b == n-1, x.hdr
	}
	return bs
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// card is one link layer in the simulator with what it sends and gets.
type card struct {
	t     testing.TB
	s     *sim.Sim
	name  string
	send  []beat
	sent  int // beats taken
	got   []tlpIn
	cur   tlpIn
	phyUp bool
	m     *ir.Module
	probe func() // called each cycle once the inputs have settled
	rec   *replay.Recorder
}

func newCard(t testing.TB, name string, m *ir.Module) *card {
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	rec := replay.New(m, s)
	s.SetReset(true)
	rec.Reset(true)
	if err := rec.Cycle(); err != nil {
		t.Fatal(err)
	}
	s.Step()
	s.SetReset(false)
	rec.Reset(false)
	return &card{t: t, s: s, name: name, m: m, rec: rec}
}

// queue adds n random TLPs to what c sends and returns them.
func (c *card) queue(r *rand.Rand, n int) []tlpIn {
	var xs []tlpIn
	for range n {
		x := randomTLP(r)
		xs = append(xs, x)
		c.send = append(c.send, beatsOf(x)...)
	}
	return xs
}

func (c *card) drive(name string, v ...uint64) {
	if err := c.s.Drive(name, v); err != nil {
		c.t.Fatal(err)
	}
}

// get reads an output, or any named signal inside the link.
func (c *card) get(name string) []uint64 {
	v, err := c.s.GetWords(name)
	if err != nil {
		for i := range c.m.Len() {
			if c.m.Node(i).Name == name {
				return c.s.ValueWords(i)
			}
		}
		c.t.Fatal(err)
	}
	return v
}

func (c *card) bit(name string) bool { return c.get(name)[0]&1 == 1 }

// wire is what crosses a fibre in a cycle.
type wire struct {
	data  [8]uint64
	ctl   bool
	valid bool
}

// fibre delays words by a fixed number of cycles and flips bits.
type fibre struct {
	line  []wire
	at    int
	ber   float64 // chance a word has one bit flipped
	flips int
}

func newFibre(delay int, ber float64) *fibre { return &fibre{line: make([]wire, delay), ber: ber} }

// pass puts w in and returns the word that entered delay cycles ago.
func (f *fibre) pass(r *rand.Rand, w wire) wire {
	out := f.line[f.at]
	if w.valid && r.Float64() < f.ber {
		f.flips++
		if r.IntN(20) == 0 {
			w.ctl = !w.ctl
		} else {
			b := r.IntN(512)
			w.data[b/64] ^= 1 << (b % 64)
		}
	}
	f.line[f.at] = w
	f.at = (f.at + 1) % len(f.line)
	return out
}

// cycle drives c's inputs for one cycle (rx is what its fibre delivers)
// and returns what it transmits; step clocks it after.
func (c *card) cycle(r *rand.Rand, rx wire, offer, ready, txReady bool) wire {
	c.drive("phy_up", b2u(c.phyUp))
	c.drive("tx_ready", b2u(txReady))
	c.drive("rx_data", rx.data[:]...)
	c.drive("rx_ctl", b2u(rx.ctl))
	c.drive("rx_valid", b2u(rx.valid))
	offer = offer && c.sent < len(c.send)
	if offer {
		b := c.send[c.sent]
		c.drive("s_tlp_hdr", b.hdr[:]...)
		c.drive("s_tlp_data", b.data[:]...)
		c.drive("s_tlp_keep", b.keep)
		c.drive("s_tlp_sop", b2u(b.sop))
		c.drive("s_tlp_eop", b2u(b.eop))
	}
	c.drive("s_tlp_valid", b2u(offer))
	c.drive("m_tlp_ready", b2u(ready))
	c.s.Settle()
	if offer && c.bit("s_tlp_ready") {
		c.sent++
	}
	if ready && c.bit("m_tlp_valid") {
		sop, eop := c.bit("m_tlp_sop"), c.bit("m_tlp_eop")
		if sop != (c.cur.payload == nil) {
			c.t.Fatalf("%s: sop %v after %d payload bytes", c.name, sop, len(c.cur.payload))
		}
		if sop {
			h := c.get("m_tlp_hdr")
			c.cur = tlpIn{hdr: [2]uint64{h[0], h[1]}, payload: []byte{}}
		}
		keep := c.get("m_tlp_keep")[0]
		d := c.get("m_tlp_data")
		for k := range 16 {
			if keep>>k&1 == 1 {
				c.cur.payload = binary.LittleEndian.AppendUint32(c.cur.payload, uint32(d[k/2]>>(32*(k%2))))
			}
		}
		if eop {
			c.got = append(c.got, c.cur)
			c.cur = tlpIn{}
		}
	}
	if c.probe != nil {
		c.probe()
	}
	if err := c.rec.Cycle(); err != nil {
		c.t.Fatal(err)
	}
	var w wire
	w.valid = txReady && c.bit("tx_valid")
	w.ctl = c.bit("tx_ctl")
	copy(w.data[:], c.get("tx_data"))
	c.s.Step()
	return w
}

func (c *card) state() uint64 { return c.get("state")[0] }

func (c *card) count(name string) uint64 { return c.get(name)[0] }

// pair is two cards joined by two fibres.
type pair struct {
	a, b    *card
	ab, ba  *fibre
	r       *rand.Rand
	offer   float64 // chance a beat is offered in a cycle
	ready   float64 // chance the manager takes a received beat
	txReady float64 // chance the wrapper takes a word
	// pace, when set, is each end's wrapper taking words at its lane
	// plan's rate instead of at the txReady odds.
	pace   *[2]*lanes.Pacer
	cycles int
	upAt   int // first cycle both were up
	aLast  wire
	bLast  wire
	// lie, if set, rewrites what B sends before it enters the fibre: a
	// partner that lies on the wire; lieAB does the same to what A sends.
	lie, lieAB func(*wire)
}

func (p *pair) step() {
	r := p.r
	if p.lie != nil && p.bLast.valid {
		p.lie(&p.bLast)
	}
	fromB := p.ba.pass(r, p.bLast)
	if p.lieAB != nil && p.aLast.valid {
		p.lieAB(&p.aLast)
	}
	fromA := p.ab.pass(r, p.aLast)
	tx := func(end int) bool {
		if p.pace != nil {
			return p.pace[end].Ready()
		}
		return r.Float64() < p.txReady
	}
	p.aLast = p.a.cycle(r, fromB, r.Float64() < p.offer, r.Float64() < p.ready, tx(0))
	p.bLast = p.b.cycle(r, fromA, r.Float64() < p.offer, r.Float64() < p.ready, tx(1))
	p.cycles++
	if p.upAt < 0 && p.a.state() == StateUp && p.b.state() == StateUp {
		p.upAt = p.cycles
	}
}

// testConfig trains in tens of cycles and replays soon.
var testConfig = Config{TrainCycles: 32, ReplayCycles: 400, LostCycles: 2000}

func newPair(t testing.TB, cfg Config, delay int, ber float64, seed uint64) *pair {
	m, err := Module(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &pair{a: newCard(t, "A", m), b: newCard(t, "B", m), ab: newFibre(delay, ber), ba: newFibre(delay, ber),
		r: rand.New(rand.NewPCG(seed, 7)), offer: 0.8, ready: 0.8, txReady: 0.97, upAt: -1}
}

// sameTLPs reports the first difference between what was sent and got.
func sameTLPs(sent, got []tlpIn) error {
	for i := range min(len(sent), len(got)) {
		if sent[i].hdr != got[i].hdr || !bytes.Equal(sent[i].payload, got[i].payload) {
			return fmt.Errorf("TLP %d: got %v, want %v", i, got[i], sent[i])
		}
	}
	if len(got) != len(sent) {
		return fmt.Errorf("%d TLPs arrived, %d sent", len(got), len(sent))
	}
	return nil
}

// Two link layers joined back to back over a fibre that flips bits:
// every TLP crosses exactly once, in order and unchanged, both ways at
// once, under backpressure on both sides, with the damage repaired by
// Naks and replays.
func TestBackToBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay int
		ber   float64
		tlps  int
	}{
		{"clean", 3, 0, 120},
		{"errors", 25, 1.0 / 150, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, testConfig, tc.delay, tc.ber, 1)
			sentA, sentB := p.a.queue(p.r, tc.tlps), p.b.queue(p.r, tc.tlps)
			p.a.phyUp, p.b.phyUp = true, true
			for p.cycles < 60000 && (len(p.a.got) < len(sentB) || len(p.b.got) < len(sentA)) {
				p.step()
			}
			if p.upAt < 0 || p.upAt > 200 {
				t.Fatalf("both up at cycle %d, want within 200 (train_cycles 32, fibre %d)", p.upAt, tc.delay)
			}
			if err := sameTLPs(sentA, p.b.got); err != nil {
				t.Errorf("A to B: %v", err)
			}
			if err := sameTLPs(sentB, p.a.got); err != nil {
				t.Errorf("B to A: %v", err)
			}
			for _, c := range []*card{p.a, p.b} {
				if c.state() != StateUp || c.count("lost") != 0 {
					t.Errorf("%s: state %d, %d lost", c.name, c.state(), c.count("lost"))
				}
				t.Logf("%s: %d replays, %d Naks, %d CRC errors", c.name, c.count("replays"), c.count("naks"), c.count("crc_errors"))
			}
			t.Logf("%d cycles, %d bits flipped", p.cycles, p.ab.flips+p.ba.flips)
			if tc.ber > 0 && (p.a.count("replays")+p.b.count("replays") == 0 || p.a.count("crc_errors")+p.b.count("crc_errors") == 0) {
				t.Error("bits flipped but nothing replayed")
			}
			if tc.ber == 0 && p.a.count("replays")+p.b.count("replays")+p.a.count("crc_errors")+p.b.count("crc_errors") != 0 {
				t.Error("a clean fibre needed replays")
			}
		})
	}
}

// inOrderSubset checks that got is sent with some TLPs missing, none
// repeated, reordered or changed; it returns how many are missing.
func inOrderSubset(sent, got []tlpIn) (int, error) {
	i := 0
	for j, g := range got {
		for i < len(sent) && (sent[i].hdr != g.hdr || !bytes.Equal(sent[i].payload, g.payload)) {
			i++
		}
		if i == len(sent) {
			return 0, fmt.Errorf("TLP %d received (%v) was not sent, or not in this order", j, g)
		}
		i++
	}
	return len(sent) - len(got), nil
}

// A PHY that drops takes both ends down; frames not acknowledged by then
// are counted lost (some may have arrived: lost means unconfirmed, as
// the emulator's link-down), both ends train again and traffic resumes
// with fresh sequence numbers. A TLP never arrives twice or damaged.
func TestLinkDownAndUp(t *testing.T) {
	p := newPair(t, testConfig, 10, 1.0/400, 3)
	sentA := p.a.queue(p.r, 200)
	p.a.phyUp, p.b.phyUp = true, true
	downs := 0
	for p.cycles < 80000 && len(p.b.got) < len(sentA)-int(p.a.count("lost")) {
		if p.cycles == 600 || p.cycles == 1500 {
			p.a.phyUp = false // A's lanes lose lock for 50 cycles
			downs++
		}
		if p.cycles == 650 || p.cycles == 1550 {
			p.a.phyUp = true
		}
		if p.cycles > 600 && p.cycles < 650 && p.a.state() != StateDown {
			t.Fatalf("cycle %d: A is %d with its PHY down", p.cycles, p.a.state())
		}
		p.step()
	}
	missing, err := inOrderSubset(sentA, p.b.got)
	if err != nil {
		t.Fatal(err)
	}
	lost := p.a.count("lost")
	t.Logf("%d cycles: %d of %d arrived, %d counted lost, %d replays", p.cycles, len(p.b.got), len(sentA), lost, p.a.count("replays"))
	if missing > int(lost) || lost == 0 || p.a.state() != StateUp || p.b.state() != StateUp {
		t.Fatalf("%d missing, %d counted lost; states %d %d", missing, lost, p.a.state(), p.b.state())
	}
	if p.a.sent != len(p.a.send) {
		t.Fatalf("A took %d of %d beats", p.a.sent, len(p.a.send))
	}
}

// A port whose far end never answers trains for ever and sends no data;
// after its input register slice (two beats) it holds the manager's TLPs
// back (s_tlp_ready low).
func TestNeverConnected(t *testing.T) {
	m, err := Module(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	c := newCard(t, "A", m)
	c.phyUp = true
	c.queue(rand.New(rand.NewPCG(1, 1)), 4)
	r := rand.New(rand.NewPCG(5, 5))
	sentWords := 0
	for range 3000 {
		w := c.cycle(r, wire{}, true, true, true)
		if w.valid {
			sentWords++
			if !w.ctl {
				t.Fatal("a data word left a port that never trained")
			}
		}
	}
	if c.state() != StateTraining || c.sent > 2 || sentWords != 3000 {
		t.Fatalf("state %d, %d beats taken, %d training words", c.state(), c.sent, sentWords)
	}
}

// A small receive buffer drained slowly: the credits hold the sender
// back and nothing overflows or is lost.
func TestCredits(t *testing.T) {
	cfg := testConfig
	cfg.RxWords = 128
	p := newPair(t, cfg, 20, 0, 4)
	p.ready = 0.15
	sentA := p.a.queue(p.r, 100)
	p.a.phyUp, p.b.phyUp = true, true
	held := 0
	for p.cycles < 60000 && len(p.b.got) < len(sentA) {
		p.step()
		if p.a.state() == StateUp && p.a.sent < len(p.a.send) && !p.a.bit("s_tlp_ready") {
			held++
		}
	}
	if err := sameTLPs(sentA, p.b.got); err != nil {
		t.Fatal(err)
	}
	if held == 0 || p.b.count("crc_errors")+p.a.count("replays") != 0 {
		t.Fatalf("held back %d cycles, %d CRC errors, %d replays", held, p.b.count("crc_errors"), p.a.count("replays"))
	}
	t.Logf("%d cycles, held back %d", p.cycles, held)
}

// fixedTLP is a memory write of n payload DWs (a read's header when n
// is 0).
func fixedTLP(r *rand.Rand, n int) tlpIn {
	x := randomTLP(r)
	dw0 := uint32(x.hdr[1]>>32) &^ (1<<30 | 0x3ff)
	if n > 0 {
		dw0 |= 1<<30 | uint32(n&0x3ff)
	}
	x.hdr[1] = x.hdr[1]&0xffffffff | uint64(dw0)<<32
	x.payload = make([]byte, 4*n)
	return x
}

// Saturated one way with no errors, the link sends frames back to back:
// a frame of n payload DWs every Words(n) cycles, less the control words
// that carry Acks and credits (at most one every AckCycles).
func TestLineRate(t *testing.T) {
	cfg := testConfig
	for _, n := range []int{0, 16, 64, 128, 1024} {
		p := newPair(t, cfg, 10, 0, 6)
		p.offer, p.ready, p.txReady = 1, 1, 1
		const count = 60
		for range count {
			p.a.send = append(p.a.send, beatsOf(fixedTLP(p.r, n))...)
		}
		p.a.phyUp, p.b.phyUp = true, true
		first, last := -1, -1
		data := 0
		for p.cycles < 100000 && len(p.b.got) < count {
			p.step()
			if p.aLast.valid && !p.aLast.ctl {
				if first < 0 {
					first = p.cycles
				}
				last = p.cycles
				data++
			}
		}
		if len(p.b.got) != count {
			t.Fatalf("%d DWs: %d of %d arrived", n, len(p.b.got), count)
		}
		span := last - first + 1
		if data != count*Words(n) || float64(span) > float64(data)*(1+2.0/float64(cfg.withDefaultsMust().AckCycles)) {
			t.Errorf("%d DWs: %d data words over %d cycles, want %d words back to back", n, data, span, count*Words(n))
		}
		t.Logf("%4d payload DWs: %d words a frame, %d cycles for %d frames (%.1f%% control)", n, Words(n), span, count, 100*float64(span-data)/float64(span))
	}
}

// TestLineRatePlans: behind each preset lane plan's gearbox (tx_ready
// from the plan's pacer) the link layer carries 256-byte writes back to
// back at the plan's rate: five words each at the plan's word time,
// within 1% of what the emulator's optical link gives the same writes
// on the same plan (emu/link.TestOpticalPlans). The difference is the
// RTL's keepalive control words (one every quarter of LostCycles, 500
// cycles here: 0.5%), which the emulator's link does not send.
func TestLineRatePlans(t *testing.T) {
	for _, plan := range lanes.Presets {
		p := newPair(t, testConfig, 10, 0, 6)
		p.offer, p.ready = 1, 1
		p.pace = &[2]*lanes.Pacer{plan.NewPacer(250), plan.NewPacer(250)}
		const count = 200
		for range count {
			p.a.send = append(p.a.send, beatsOf(fixedTLP(p.r, 64))...)
		}
		p.a.phyUp, p.b.phyUp = true, true
		first, last := -1, -1
		for p.cycles < 100000 && len(p.b.got) < count {
			p.step()
			if p.aLast.valid && !p.aLast.ctl {
				if first < 0 {
					first = p.cycles
				}
				last = p.cycles
			}
		}
		if len(p.b.got) != count {
			t.Fatalf("%v: %d of %d arrived", plan, len(p.b.got), count)
		}
		gbps := float64(256*8*(count-1)) / (float64(last-first) * 4) // bits per ns
		want := min(plan.DataGbps(), 128) * 256 / float64(64*Words(64))
		if gbps > want || gbps < want*0.99 {
			t.Errorf("%v: 256-byte writes at %.2f Gb/s on the RTL, the plan's %.2f", plan, gbps, want)
		}
		t.Logf("%-16v 256-byte writes at %6.2f Gb/s (the plan's words give %.2f)", plan, gbps, want)
	}
}

func (c Config) withDefaultsMust() Config {
	c, err := c.withDefaults()
	if err != nil {
		panic(err)
	}
	return c
}

// The emitted Verilog does what the IR simulation does, cycle for cycle,
// in Icarus and in Verilator: one end of an errored back-to-back run
// replayed with every input it saw.
func TestHDLReplay(t *testing.T) {
	tools.Long(t)
	p := newPair(t, testConfig, 7, 1.0/100, 9)
	p.a.queue(p.r, 40)
	p.b.queue(p.r, 40)
	p.a.phyUp, p.b.phyUp = true, true
	for p.cycles < 1500 {
		if p.cycles == 1200 {
			p.a.phyUp = false
		}
		p.step()
	}
	if p.a.count("replays") == 0 || len(p.a.got) == 0 {
		t.Fatalf("the run to replay has %d replays and %d TLPs received", p.a.count("replays"), len(p.a.got))
	}
	replay.Verify(t, p.a.rec)
}

// TestCountersSaturate: the link's counters stop at all ones instead of
// wrapping back to small numbers a hostile partner could hide behind.
func TestCountersSaturate(t *testing.T) {
	m := ir.NewModule("sat")
	l := &builder{m: m}
	add := m.Input("add", CounterBits)
	m.Output("total", l.saturating("count", add))
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	for i, c := range []struct{ add, want uint64 }{{0xFFFF_FFF0, 0xFFFF_FFF0}, {0x0F, 0xFFFF_FFFF}, {0x10, 0xFFFF_FFFF}, {0, 0xFFFF_FFFF}} {
		if err := s.Drive("add", []uint64{c.add}); err != nil {
			t.Fatal(err)
		}
		s.Step()
		if got, _ := s.Get("total"); got != c.want {
			t.Errorf("step %d: count %#x, want %#x", i, got, c.want)
		}
	}
}

// wordOf and wireOf convert between the harness's wire and the wire
// format's Word.
func wordOf(w wire) Word {
	x := Word{Ctl: w.ctl}
	for j, d := range w.data {
		binary.LittleEndian.PutUint64(x.Bytes[8*j:], d)
	}
	return x
}

func wireOf(x Word, valid bool) wire {
	w := wire{ctl: x.Ctl, valid: valid}
	for j := range w.data {
		w.data[j] = binary.LittleEndian.Uint64(x.Bytes[8*j:])
	}
	return w
}

// frozenAck is a partner that acknowledges nothing after the first
// data-link word it sends (*ack keeps that word's AckSeq), and with nak
// Naks every time.
func frozenAck(nak bool) func(ack *int) func(*wire) {
	return func(ack *int) func(*wire) {
		return func(w *wire) {
			if c, err := DecodeControl(wordOf(*w)); err == nil && c.Kind == KindDL {
				if *ack < 0 {
					*ack = int(c.AckSeq)
				}
				c.AckSeq, c.Nak = uint16(*ack), nak
				*w = wireOf(c.Word(), true)
			}
		}
	}
}

// TestPartnerStopsProgress: a partner that stops making progress takes
// the link down in bounded time — one that never acknowledges or Naks
// for ever by REPLAY_NUM rolling over (ReplayRollover replays without
// Ack progress), one that never returns credits after CreditCycles —
// each counted in stalls, what was unconfirmed in lost. While down the
// link takes and drops what reaches it, so nothing waits at its input.
// When the partner behaves again the link trains and traffic flows.
func TestPartnerStopsProgress(t *testing.T) {
	cfg := testConfig
	cfg.CreditCycles = 600
	for _, tc := range []struct {
		name string
		lie  func(ack *int) func(*wire)
		// drain: B's manager takes what arrives (else it takes nothing,
		// so B's buffer fills and no credits come back)
		drain bool
	}{
		{"never acknowledges", frozenAck(false), true},
		{"Naks for ever", frozenAck(true), true},
		{"never returns credits", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, cfg, 5, 0, 3)
			sentA := p.a.queue(p.r, 200)
			p.a.phyUp, p.b.phyUp = true, true
			for p.upAt < 0 && p.cycles < 1000 {
				p.step()
			}
			if p.upAt < 0 {
				t.Fatal("the link never came up")
			}
			ack := -1
			if tc.lie != nil {
				p.lie = tc.lie(&ack)
			}
			if !tc.drain {
				p.ready = 0
			}
			// Bounded: down within a few replay periods or the credit
			// timeout.
			bound := p.cycles + ReplayRollover*(cfg.ReplayCycles+200) + cfg.CreditCycles + 2000
			for p.a.count("stalls") == 0 && p.cycles < bound {
				p.step()
			}
			if p.a.count("stalls") == 0 {
				t.Fatalf("A still %d after %d cycles of a partner that %s", p.a.state(), p.cycles-p.upAt, tc.name)
			}
			t.Logf("A went down %d cycles after up; %d replays, %d lost", p.cycles-p.upAt, p.a.count("replays"), p.a.count("lost"))
			// The partner behaves: the link trains again and the rest of
			// A's TLPs arrive.
			p.lie, p.ready = nil, 0.8
			lost := p.a.count("lost")
			for p.cycles < bound+60000 && (p.a.sent < len(p.a.send) || len(p.b.got)+int(p.a.count("lost")) < len(sentA)) {
				p.step()
			}
			if p.a.state() != StateUp || p.a.sent < len(p.a.send) {
				t.Fatalf("after the partner behaves: A in state %d, %d of %d beats taken", p.a.state(), p.a.sent, len(p.a.send))
			}
			if got, want := len(p.b.got), len(sentA)-int(p.a.count("lost")); got < want {
				t.Errorf("B got %d TLPs, want at least %d (%d sent, %d lost)", got, want, len(sentA), p.a.count("lost"))
			}
			if p.a.count("lost") < lost {
				t.Errorf("lost went down")
			}
		})
	}
}

// TestLengthLies: a frame whose LCRC is good but whose length is not the
// one its TLP header says — a header of 1 DW with 64 DWs of payload, of 64
// with 1, an MRd carrying data — is taken and acknowledged (a Nak would
// only bring it back) but nothing of it is handed on; it is counted in
// malformed, and the link stays up and carries traffic.
func TestLengthLies(t *testing.T) {
	hdr := func(dw0 uint32) (h [16]byte) {
		binary.LittleEndian.PutUint32(h[12:], dw0)
		return h
	}
	mwr := func(n int) uint32 { return 0b010<<29 | uint32(n&0x3ff) }
	for _, tc := range []struct {
		name string
		dw0  uint32
		n    int // payload DWs in the frame
	}{
		{"header 1 DW, 64 DWs of payload", mwr(1), 64},
		{"header 64 DWs, 1 DW of payload", mwr(64), 1},
		{"an MRd carrying data", 0b000<<29 | 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, testConfig, 5, 0, 4)
			p.a.phyUp, p.b.phyUp = true, true
			for p.upAt < 0 && p.cycles < 1000 {
				p.step()
			}
			for range 200 { // until A has heard B's data-link words
				p.step()
			}
			f := Frame{Seq: uint16(p.a.get("rx_next")[0]), Header: hdr(tc.dw0), Payload: make([]byte, 4*tc.n)}
			ws, err := f.Encode()
			if err != nil {
				t.Fatal(err)
			}
			// B has nothing to send: the lie replaces control words.
			p.lie = func(w *wire) {
				if len(ws) > 0 {
					*w, ws = wireOf(ws[0], true), ws[1:]
				}
			}
			for range 300 {
				p.step()
			}
			if len(p.a.got) != 0 || p.a.count("malformed") != 1 || p.a.state() != StateUp {
				t.Errorf("A handed on %d TLPs, counted %d malformed, state %d", len(p.a.got), p.a.count("malformed"), p.a.state())
			}
			if n := p.a.count("naks"); n != 0 {
				t.Errorf("A sent %d Naks for a good frame", n)
			}
			sent := p.a.queue(p.r, 20)
			for p.cycles < 20000 && len(p.b.got) < len(sent) {
				p.step()
			}
			if err := sameTLPs(sent, p.b.got); err != nil {
				t.Errorf("A to B after the lie: %v", err)
			}
		})
	}
}

// inOrder checks, as TLPs arrive, that they are sent ones in the order
// sent, each at most once (inOrderSubset, a batch at a time).
type inOrder struct{ i, n int }

func (o *inOrder) check(sent, got []tlpIn) error {
	for ; o.n < len(got); o.n++ {
		g := got[o.n]
		for o.i < len(sent) && (sent[o.i].hdr != g.hdr || !bytes.Equal(sent[o.i].payload, g.payload)) {
			o.i++
		}
		if o.i == len(sent) {
			return fmt.Errorf("TLP %d received (%v) was not sent, or not in this order", o.n, g)
		}
		o.i++
	}
	return nil
}

var dbgFlag = flag.Bool("hostile-debug", false, "say more when TestHostilePartner fails")

var hostileSeqs = flag.Int("hostile-sequences", 1000, "fault sequences TestHostilePartner runs (make soak raises it)")

// hostileFaults are what a link partner or its fibre may do, each for a
// while: name, and how to start it on p (undone by calm).
var hostileFaults = []struct {
	name  string
	start func(p *pair, r *rand.Rand)
}{
	{"bit errors", func(p *pair, r *rand.Rand) { p.ab.ber, p.ba.ber = 1.0/30, 1.0/30 }},
	{"dropped words", func(p *pair, r *rand.Rand) {
		drop := func(w *wire) {
			if r.IntN(3) == 0 {
				w.valid = false
			}
		}
		p.lie, p.lieAB = drop, drop
	}},
	{"duplicated words", func(p *pair, r *rand.Rand) {
		var last wire
		p.lie = func(w *wire) {
			if r.IntN(5) == 0 && last.valid {
				*w = last
			}
			last = *w
		}
	}},
	{"reordered words", func(p *pair, r *rand.Rand) {
		var held *wire
		p.lie = func(w *wire) {
			switch {
			case held != nil:
				*w, *held = *held, *w
				held = nil
			case r.IntN(5) == 0:
				h := *w
				held = &h
				w.valid = false
			}
		}
	}},
	{"credit starvation", func(p *pair, r *rand.Rand) { p.ready = 0 }},
	{"missing Acks", func(p *pair, r *rand.Rand) { ack := -1; p.lie = frozenAck(false)(&ack) }},
	{"Nak storm", func(p *pair, r *rand.Rand) { ack := -1; p.lie = frozenAck(true)(&ack) }},
	{"credit overflow", func(p *pair, r *rand.Rand) {
		p.lie = func(w *wire) {
			if c, err := DecodeControl(wordOf(*w)); err == nil && c.Kind == KindDL {
				c.Limit += 20000 // credits the partner does not have
				*w = wireOf(c.Word(), true)
			}
		}
	}},
	{"silence", func(p *pair, r *rand.Rand) { p.lie = func(w *wire) { w.valid = false } }},
	{"PHY down", func(p *pair, r *rand.Rand) { p.b.phyUp = false }},
	{"A's PHY down", func(p *pair, r *rand.Rand) { p.a.phyUp = false }},
}

// calm ends every fault.
func (p *pair) calm() {
	p.ab.ber, p.ba.ber = 0, 0
	p.lie, p.lieAB = nil, nil
	p.ready = 0.8
	p.a.phyUp, p.b.phyUp = true, true
}

// TestHostilePartner: random sequences of faults and lies from the link
// partner and its fibre — bit errors, dropped, duplicated and reordered
// words, credit starvation, missing Acks, Nak storms, credits it does not
// have, silence, either PHY down — each for 30 to 600 cycles, while both
// ends send. After each, a liveness check: within a bound the link is up
// again and a TLP sent after the fault crosses each way. At the end
// every TLP arrived at most once, undamaged and in order, and none is
// missing that the sender did not count lost. -hostile-sequences sets
// how many (make soak runs more).
func TestHostilePartner(t *testing.T) {
	cfg := Config{TrainCycles: 32, ReplayCycles: 300, LostCycles: 800, CreditCycles: 400}
	const seeds = 4
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			p := newPair(t, cfg, 4, 0, uint64(100+seed))
			r := rand.New(rand.NewPCG(uint64(seed), 99))
			sentA, sentB := p.a.queue(p.r, 8), p.b.queue(p.r, 8)
			p.calm()
			seen := map[string]int{}
			var ab, ba inOrder
			var events []string
			watchHdr := map[[2]uint64]int{}
			prevCtl := true
			watch := func(w *wire) {
				if !*dbgFlag || !w.valid {
					return
				}
				if !w.ctl && prevCtl {
					x := wordOf(*w)
					var h [2]uint64
					h[0] = binary.LittleEndian.Uint64(x.Bytes[4:])
					h[1] = binary.LittleEndian.Uint64(x.Bytes[12:])
					tok := binary.LittleEndian.Uint32(x.Bytes[0:])
					if k, ok := watchHdr[h]; ok {
						events = append(events, fmt.Sprintf("c%d tx sent[%d] seq %d ep %d (A st %d)", p.cycles, k, tok&0xfff, tok>>23&1, p.a.state()))
					}
				}
				prevCtl = w.ctl
			}
			bound := ReplayRollover*(cfg.ReplayCycles+100) + cfg.CreditCycles + cfg.LostCycles + 600
			n := *hostileSeqs
			if testing.Short() {
				n = min(n, 100) // make check's quick loop
			}
			for i := range (n + seeds - 1) / seeds {
				f := hostileFaults[r.IntN(len(hostileFaults))]
				seen[f.name]++
				if *dbgFlag {
					for k := max(0, len(sentA)-300); k < len(sentA); k++ {
						watchHdr[sentA[k].hdr] = k
					}
					events = append(events, fmt.Sprintf("c%d %s", p.cycles, f.name))
				}
				f.start(p, r)
				if lab := p.lieAB; *dbgFlag {
					p.lieAB = func(w *wire) {
						watch(w)
						if lab != nil {
							lab(w)
						}
					}
				}
				for range 30 + r.IntN(570) {
					p.step()
				}
				_ = f
				p.calm()
				if *dbgFlag {
					p.lieAB = watch
					events = append(events, fmt.Sprintf("c%d calm", p.cycles))
				}
				// Liveness: with TLPs to send both ways, a new one must
				// arrive each way.
				topUp := func() {
					for p.a.sent >= len(p.a.send)-64 {
						sentA = append(sentA, p.a.queue(p.r, 4)...)
					}
					for p.b.sent >= len(p.b.send)-64 {
						sentB = append(sentB, p.b.queue(p.r, 4)...)
					}
				}
				gotA, gotB, start := len(p.a.got), len(p.b.got), p.cycles
				for p.cycles-start < bound && (len(p.b.got) == gotB || len(p.a.got) == gotA || p.a.state() != StateUp) {
					topUp()
					p.step()
				}
				if len(p.b.got) == gotB || len(p.a.got) == gotA || p.a.state() != StateUp {
					if *dbgFlag {
						for _, c := range []*card{p.a, p.b} {
							t.Logf("%s: state %d heard %d handshake %d quiet %d peer_up %d phy %v", c.name, c.state(), c.get("heard")[0], c.get("handshake")[0],
								c.get("quiet_cycles")[0], c.get("peer_up")[0], c.phyUp)
						}
						for k := 0; k < 40; k++ {
							p.step()
							fa, fb := wordOf(p.aLast), wordOf(p.bLast)
							ca, ea := DecodeControl(fa)
							cb, eb := DecodeControl(fb)
							t.Logf("A tx %v %+v %v | B tx %v %+v %v | A st %d B st %d", p.aLast.valid, ca, ea, p.bLast.valid, cb, eb, p.a.state(), p.b.state())
						}
					}
					t.Fatalf("sequence %d, after %s: nothing crossed within %d cycles (A state %d, %d and %d received)",
						i, f.name, bound, p.a.state(), len(p.b.got)-gotB, len(p.a.got)-gotA)
				}
				if err := ab.check(sentA, p.b.got); err != nil {
					if *dbgFlag {
						idx := func(x tlpIn) []int {
							var ks []int
							for k, y := range sentA {
								if y.hdr == x.hdr && bytes.Equal(y.payload, x.payload) {
									ks = append(ks, k)
								}
							}
							return ks
						}
						for j := max(0, ab.n-6); j <= ab.n && j < len(p.b.got); j++ {
							t.Logf("got %d = sent %v", j, idx(p.b.got[j]))
						}
						for _, e := range events[max(0, len(events)-60):] {
							t.Log(e)
						}
					}
					t.Fatalf("sequence %d, after %s: A to B: %v", i, f.name, err)
				}
				if err := ba.check(sentB, p.a.got); err != nil {
					t.Fatalf("sequence %d, after %s: B to A: %v", i, f.name, err)
				}
			}
			// Drain what is queued, then account for every TLP.
			for start := p.cycles; p.cycles-start < 200000 && (p.a.sent < len(p.a.send) || p.b.sent < len(p.b.send)); {
				p.step()
			}
			for range 4000 {
				p.step()
			}
			for _, d := range []struct {
				name      string
				sent, got []tlpIn
				lost      uint64
				from      *card
			}{{"A to B", sentA, p.b.got, p.a.count("lost"), p.a}, {"B to A", sentB, p.a.got, p.b.count("lost"), p.b}} {
				missing, err := inOrderSubset(d.sent, d.got)
				if err != nil {
					t.Fatalf("%s: %v", d.name, err)
				}
				if uint64(missing) > d.lost {
					t.Errorf("%s: %d TLPs missing, %d counted lost", d.name, missing, d.lost)
				}
			}
			t.Logf("%d cycles; faults %v; A: %d replays, %d Naks, %d CRC errors, %d lost, %d stalls",
				p.cycles, seen, p.a.count("replays"), p.a.count("naks"), p.a.count("crc_errors"), p.a.count("lost"), p.a.count("stalls"))
		})
	}
}
