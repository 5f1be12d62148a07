package card

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"testing"

	"onic/designs/internal/optlink"
	"onic/hdlgen/ir"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// hostileCardSeqs is how many fault sequences TestHostileCards runs.
var hostileCardSeqs = flag.Int("hostile-card-sequences", 1000, "fault sequences TestHostileCards runs (make soak raises it)")

// Words on the card harness's fibres as optlink's wire format has them.
func optWord(w word) optlink.Word {
	x := optlink.Word{Ctl: w.ctl}
	for j, d := range w.data {
		binary.LittleEndian.PutUint64(x.Bytes[8*j:], d)
	}
	return x
}

func fibreWord(x optlink.Word) word {
	w := word{data: make([]uint64, 8), ctl: x.Ctl, valid: true}
	for j := range w.data {
		w.data[j] = binary.LittleEndian.Uint64(x.Bytes[8*j:])
	}
	return w
}

// rewriteDL applies f to each good data-link control word on its way.
func rewriteDL(f func(c *optlink.Control)) func(w *word) {
	return func(w *word) {
		if !w.valid || !w.ctl {
			return
		}
		if c, err := optlink.DecodeControl(optWord(*w)); err == nil && c.Kind == optlink.KindDL {
			f(&c)
			*w = fibreWord(c.Word())
		}
	}
}

// frozenAcks is a partner that acknowledges nothing after its first
// data-link word on the way, and with nak Naks every time.
func frozenAcks(nak bool) func(w *word) {
	ack := -1
	return rewriteDL(func(c *optlink.Control) {
		if ack < 0 {
			ack = int(c.AckSeq)
		}
		c.AckSeq, c.Nak = uint16(ack), nak
	})
}

// cardFaults are what card B's link, its firmware or the fibre may do to
// card A, each for a while (undone by setting p.lie to nil, p.ber to 0
// and p.phy to true).
var cardFaults = []struct {
	name  string
	start func(p *pair, r *rand.Rand)
}{
	{"bit errors", func(p *pair, r *rand.Rand) { p.ber = 1.0 / 30 }},
	{"dropped words", func(p *pair, r *rand.Rand) {
		p.lie = func(w *word) {
			if r.IntN(3) == 0 {
				w.valid = false
			}
		}
	}},
	{"duplicated words", func(p *pair, r *rand.Rand) {
		var last word
		p.lie = func(w *word) {
			if r.IntN(5) == 0 && last.valid {
				*w = word{data: append([]uint64(nil), last.data...), ctl: last.ctl, valid: true}
			}
			last = word{data: append([]uint64(nil), w.data...), ctl: w.ctl, valid: w.valid}
		}
	}},
	{"reordered words", func(p *pair, r *rand.Rand) {
		var held *word
		p.lie = func(w *word) {
			switch {
			case held != nil:
				*w, *held = *held, *w
				held = nil
			case r.IntN(5) == 0:
				h := word{data: append([]uint64(nil), w.data...), ctl: w.ctl, valid: w.valid}
				held = &h
				w.valid = false
			}
		}
	}},
	{"credit starvation", func(p *pair, r *rand.Rand) {
		limit := -1
		p.lie = rewriteDL(func(c *optlink.Control) {
			if limit < 0 {
				limit = int(c.Limit)
			}
			c.Limit = uint16(limit)
		})
	}},
	{"missing Acks", func(p *pair, r *rand.Rand) { p.lie = frozenAcks(false) }},
	{"Nak storm", func(p *pair, r *rand.Rand) { p.lie = frozenAcks(true) }},
	{"credit overflow", func(p *pair, r *rand.Rand) {
		p.lie = rewriteDL(func(c *optlink.Control) { c.Limit += 20000 })
	}},
	{"silence", func(p *pair, r *rand.Rand) { p.lie = func(w *word) { w.valid = false } }},
	{"fibre cut", func(p *pair, r *rand.Rand) { p.phy = false }},
}

// TestHostileCards: the two-party scenario's generated cards, port A to
// port A, while card B's link and the fibre misbehave toward card A at
// the lane level — bit errors, dropped, duplicated and reordered words,
// frozen credits, missing Acks, Nak storms, credits it does not have,
// silence, a cut fibre — each for 30 to 600 cycles, while both hosts
// write to each other through their windows. After each, a liveness
// check on the whole card: within a bound both links are up, host A's
// read of its O-NIC's ID register is answered with "ONIC", and a write
// from each host sent after the fault reaches the other host's memory
// (card A's RQ and card B's). At the end, every write arrived at most
// once, with its own bytes and in the order sent, and the writes that
// never arrived are no more than the links counted lost and the cards
// dropped at a dark port. -hostile-card-sequences sets how many (make
// soak runs more); TestHostilePartner (optlink) runs a thousand against
// the link alone.
func TestHostileCards(t *testing.T) {
	link, err := optlink.Module(optlink.Config{TrainCycles: 32, ReplayCycles: 300, LostCycles: 800, CreditCycles: 400})
	if err != nil {
		t.Fatal(err)
	}
	p := newPair(t, [2]*ir.Module{cardOf(t, "onic_card_a", withRegisters(config(t, 0)), link),
		cardOf(t, "onic_card_b", withRegisters(config(t, 1)), link)})
	p.setDelay(4)
	p.run("the link comes up", 5000, func() bool { return p.up(0) && p.up(1) })
	r := rand.New(rand.NewPCG(41, 42))
	w := design(t, 0).Windows[0]
	winBase := bases[w.BAR] + w.Offset

	// Writes: 16 bytes each, the first 8 its sequence number (per host).
	var sent [2]int
	var sentData [2][][]byte
	var writeN func(k, n int)
	write := func(k int) { writeN(k, 16) }
	writeN = func(k, n int) {
		data := make([]byte, n)
		binary.LittleEndian.PutUint64(data, uint64(sent[k]))
		for i := 8; i < n; i++ {
			data[i] = byte(r.Uint32())
		}
		x := tlp.TLP{Length: uint16(n / 4), FirstBE: 0xF, LastBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Address: winBase + 1024*uint64(sent[k]%64), Data: data}
		x.Fmt, x.Type, _ = tlp.FmtType(tlp.MWr, true, 0)
		p.request(k, &x, w.BAR)
		sentData[k] = append(sentData[k], data)
		sent[k]++
	}
	// What reached each host: the sequence numbers, in order; checked as
	// they come.
	var got [2][]uint64
	seenRQ := [2]int{}
	collect := func() {
		for k := range 2 {
			for ; seenRQ[k] < len(p.rq[k]); seenRQ[k]++ {
				x := p.rq[k][seenRQ[k]]
				if x.Kind() != tlp.MWr || len(x.Data) < 16 {
					t.Fatalf("card %d's RQ: %s", k, x.String())
				}
				seq := binary.LittleEndian.Uint64(x.Data)
				if n := len(got[k]); n > 0 && seq <= got[k][n-1] {
					t.Fatalf("host %d got write %d after write %d: repeated or out of order", k, seq, got[k][n-1])
				}
				if seq >= uint64(sent[1-k]) || !bytes.Equal(x.Data, sentData[1-k][seq]) {
					t.Fatalf("host %d got write %d (of %d sent) with other bytes: % x", k, seq, sent[1-k], x.Data)
				}
				got[k] = append(got[k], seq)
			}
		}
	}
	idReads := 0
	readID := func() {
		x := tlp.TLP{Length: 1, FirstBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Tag: uint16(idReads % 256), Address: bases[pcie.ONICRegBAR]}
		x.Fmt, x.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
		p.request(0, &x, pcie.ONICRegBAR)
		idReads++
	}
	const bound = optlink.ReplayRollover*(300+100) + 400 + 800 + 4000
	seqs := *hostileCardSeqs
	if testing.Short() {
		seqs = min(seqs, 20) // make check's quick loop
	}
	seen := map[string]int{}
	// A register read host A makes as each fault starts, behind writes
	// toward the faulty port: how long until it is answered.
	worst, worstAfter := 0, ""
	for i := range seqs {
		f := cardFaults[r.IntN(len(cardFaults))]
		seen[f.name]++
		f.start(p, r)
		// Half the time host A floods the faulty port first: 16 writes
		// of 1 KiB, more than its link takes before it must wait.
		for range 16 * (i % 2) {
			writeN(0, 1024)
		}
		write(0)
		readAt, cc := p.cycles, len(p.cc[0])
		readID()
		answered := false
		note := func() {
			if !answered && len(p.cc[0]) > cc {
				answered = true
				if l := p.cycles - readAt; l > worst {
					worst, worstAfter = l, f.name
				}
			}
		}
		for c := range 30 + r.IntN(570) {
			if c%40 == 0 {
				write(r.IntN(2))
			}
			p.cycle()
			collect()
			note()
		}
		p.lie, p.ber, p.phy = nil, 0, true
		// Liveness.
		cc0, got0, got1 := max(len(p.cc[0]), cc+1), len(got[0]), len(got[1])
		start, ok := p.cycles, false
		for p.cycles-start < bound {
			up := p.up(0) && p.up(1)
			if up && len(p.cq[0]) == 0 && len(p.cc[0]) == cc0 && (p.cycles-start)%200 == 0 {
				readID() // until one is answered
			}
			if up && len(p.cq[1]) == 0 && len(got[0]) == got0 {
				write(1)
			}
			if up && len(p.cq[0]) == 0 && len(got[1]) == got1 {
				write(0)
			}
			p.cycle()
			collect()
			note()
			if ok = up && len(p.cc[0]) > cc0 && len(got[0]) > got0 && len(got[1]) > got1; ok {
				break
			}
		}
		if !ok {
			t.Fatalf("sequence %d, after %s: within %d cycles links up %v/%v, %d register reads answered, %d and %d writes arrived",
				i, f.name, bound, p.up(0), p.up(1), len(p.cc[0])-cc0, len(got[0])-got0, len(got[1])-got1)
		}
		for _, c := range p.cc[0][cc0:] {
			if c.Status != tlp.StatusSC || !bytes.Equal(c.Data, []byte("CINO")) {
				t.Fatalf("sequence %d, after %s: host A's ID read got %s % x", i, f.name, c.String(), c.Data)
			}
		}
	}
	// A link that stops making progress goes down within the link's
	// bounds, and then what is for it fails or waits in front of it: the
	// host's register read waits no longer than that.
	if worst > bound {
		t.Errorf("a register read made as a fault began waited %d cycles (after %s), more than %d", worst, worstAfter, bound)
	}
	// Drain, then account for every write.
	p.run("the hosts' writes drain", 200000, func() bool { return len(p.cq[0]) == 0 && len(p.cq[1]) == 0 })
	for range 4000 {
		p.cycle()
		collect()
	}
	for k := range 2 {
		// What the sending card counted: TLPs its link lost, and writes
		// its manager failed or its port dropped while the port was down
		// (COUNT_PORT_DOWN, read over its register BAR).
		from := p.cards[1-k]
		x := tlp.TLP{Length: 1, FirstBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Tag: 9, Address: bases[pcie.ONICRegBAR] + pmgr.RegCount0 + 4*uint64(pmgr.PortDown)}
		x.Fmt, x.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
		cc := len(p.cc[1-k])
		p.request(1-k, &x, pcie.ONICRegBAR)
		p.run("COUNT_PORT_DOWN is read", 5000, func() bool { return len(p.cc[1-k]) > cc })
		portDown := uint64(binary.LittleEndian.Uint32(p.cc[1-k][cc].Data))
		lost := from.get("port_a_lost")[0] + from.get("port_a_down_drops")[0] + portDown
		if _, err := from.GetWords("port_a_hold_drops"); err == nil {
			lost += from.get("port_a_hold_drops")[0]
		}
		if missing := uint64(sent[1-k] - len(got[k])); missing > lost {
			t.Errorf("host %d: %d of host %d's %d writes missing, %d counted lost, failed or dropped for a down port", k, missing, 1-k, sent[1-k], lost)
		}
	}
	t.Logf("%d sequences, %d cycles; faults %v; register reads answered within %d cycles of a fault's start (%s the longest); writes %d/%d and %d/%d arrived; card A: %d replays, %d Naks, %d CRC errors, %d lost, %d stalls",
		seqs, p.cycles, seen, worst, worstAfter, len(got[1]), sent[0], len(got[0]), sent[1], p.cards[0].get("port_a_replays")[0],
		p.cards[0].get("port_a_naks")[0], p.cards[0].get("port_a_crc_errors")[0], p.cards[0].get("port_a_lost")[0], p.cards[0].get("port_a_stalls")[0])
}
