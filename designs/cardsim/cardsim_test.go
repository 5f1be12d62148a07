package cardsim

import (
	"bytes"
	"testing"

	"onic/emu/scenario"
	"onic/tlp"
)

// twoCards is the two-party scenario's O-NICs as cards, port A joined
// to port A, trained.
func twoCards(t *testing.T) ([2]*Card, *Fibre) {
	t.Helper()
	cards := twoPartyCards(t)
	f := NewFibre(cards[0], 0, cards[1], 0, 5)
	run(t, cards, f, "the link comes up", 20000, func() bool { return cards[0].PortState(0) == 2 && cards[1].PortState(0) == 2 })
	return cards, f
}

// twoPartyCards are the two-party scenario's O-NICs as cards, unjoined.
func twoPartyCards(t *testing.T) [2]*Card {
	t.Helper()
	cfg := scenario.TwoParty()
	var cards [2]*Card
	for k := range cards {
		c, err := New(Config{ONIC: cfg.ONICs[k], ID: tlp.NewID(1, 0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		cards[k] = c
	}
	return cards
}

// run cycles both cards until done, failing after limit cycles.
func run(t *testing.T, cards [2]*Card, f *Fibre, what string, limit int, done func() bool) {
	t.Helper()
	for i := 0; !done(); i++ {
		if i == limit {
			t.Fatalf("%s: not after %d cycles", what, limit)
		}
		for _, c := range cards {
			if err := c.Cycle(); err != nil {
				t.Fatal(err)
			}
		}
		f.Carry()
	}
}

// TestWriteAndReadAcross: host A writes 64 bytes through its O-NIC's
// window (BAR 2, translated to B's memory at 4 GiB); card B sends the
// write to its host as the two O-NICs' tables say, under its own ID (the
// block's endpoint mode). Then host A reads it back: card B reads host B's memory
// (an RQ read with the card's own tag), host B's completion goes in on
// B's RC, and card A completes host A's read on CC with host A's tag and
// the bytes.
func TestWriteAndReadAcross(t *testing.T) {
	cards, f := twoCards(t)
	data := bytes.Repeat([]byte{0xA5, 0x5A, 1, 2}, 16)
	w := tlp.TLP{Fmt: tlp.Fmt4DWData, RequesterID: tlp.NewID(0, 0, 0), Tag: 3, Length: 16,
		FirstBE: 0xF, LastBE: 0xF, Address: 0x20_0000_1000, Data: data}
	if err := cards[0].Request(&w, 2); err != nil {
		t.Fatal(err)
	}
	var got []tlp.TLP
	run(t, cards, f, "the write reaches host B", 5000, func() bool { got = append(got, cards[1].Out()...); return len(got) > 0 })
	g := got[0]
	if g.Kind() != tlp.MWr || g.Address != 0x1_0000_1000 || !bytes.Equal(g.Data, data) || g.RequesterID != tlp.NewID(1, 0, 0) {
		t.Fatalf("card B sent its host %v (address %#x, requester %v), not the write translated", g.Kind(), g.Address, g.RequesterID)
	}
	r := tlp.TLP{Fmt: tlp.Fmt4DW, RequesterID: tlp.NewID(0, 0, 0), Tag: 7, Length: 16,
		FirstBE: 0xF, LastBE: 0xF, Address: 0x20_0000_1000}
	if err := cards[0].Request(&r, 2); err != nil {
		t.Fatal(err)
	}
	got = nil
	run(t, cards, f, "the read reaches host B", 5000, func() bool { got = append(got, cards[1].Out()...); return len(got) > 0 })
	rd := got[0]
	if rd.Kind() != tlp.MRd || rd.Address != 0x1_0000_1000 || rd.RequesterID != tlp.NewID(1, 0, 0) {
		t.Fatalf("card B sent %v at %#x from %v, not a read of host B's memory under its own ID", rd.Kind(), rd.Address, rd.RequesterID)
	}
	cpl := tlp.TLP{Fmt: tlp.Fmt3DWData, Type: 0b01010, CompleterID: tlp.NewID(0, 0, 0), RequesterID: rd.RequesterID, Tag: rd.Tag,
		ByteCount: 64, Length: 16, Data: data}
	if err := cards[1].Complete(&cpl); err != nil {
		t.Fatal(err)
	}
	if err := cards[1].Complete(&cpl); err == nil {
		t.Fatal("a second completion for a finished read was taken")
	}
	got = nil
	run(t, cards, f, "the completion reaches host A", 5000, func() bool { got = append(got, cards[0].Out()...); return len(got) > 0 })
	c := got[0]
	if c.Kind() != tlp.CplD || c.Tag != 7 || c.RequesterID != tlp.NewID(0, 0, 0) || !bytes.Equal(c.Data, data) {
		t.Fatalf("host A received %v tag %d for %v with % x", c.Kind(), c.Tag, c.RequesterID, c.Data)
	}
	if err := cards[0].Request(&r, 5); err == nil {
		t.Fatal("a request for BAR 5, which the card does not have, was taken")
	}
}

// BenchmarkTwoCardsCycle: the two-party scenario's two cards, trained and
// idle but for their links' control words; an op is one clock cycle of
// both (docs/hostif.md quotes it).
func BenchmarkTwoCardsCycle(b *testing.B) {
	set, err := NewSet(scenario.TwoParty(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := set.Light(0, 0, 1, 0, 25); err != nil {
		b.Fatal(err)
	}
	for range 4000 {
		if err := set.Cycle(0); err != nil {
			b.Fatal(err)
		}
	}
	if set.PortState(0, 0) != 2 {
		b.Fatal("the link did not come up")
	}
	b.ResetTimer()
	for range b.N {
		if err := set.Cycle(0); err != nil {
			b.Fatal(err)
		}
	}
}
