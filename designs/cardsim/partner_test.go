package cardsim

import (
	"bytes"
	"testing"

	"onic/emu/scenario"
	"onic/tlp"
)

// TestPartnerAgainstCard: the two-party scenario's onicA as its card,
// port A joined to a Partner (the link layer written in Go from the wire
// format) over 25 cycles of fibre. They train; 200 writes from the peer's
// requester (20:00.0, which onicA's access check admits from port A) go
// through the Partner and leave card A's RQ in order with their bytes;
// 200 writes host A makes through its window leave card A's port A and
// reach the Partner translated, in order — while the fibre flips a bit
// in one frame word in about a hundred both ways, so both ends replay.
func TestPartnerAgainstCard(t *testing.T) {
	set, err := NewSet(scenario.TwoParty(), []string{"onicA"})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Light(0, 0, 0, 0, 0); err == nil {
		t.Fatal("a card's port joined to itself")
	}
	if err := set.LightPartner(0, 0, 25); err != nil {
		t.Fatal(err)
	}
	card, p := set.Card(0), set.Partner(0, 0)
	cycle := func() {
		t.Helper()
		if err := set.Cycle(0); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; card.PortState(0) != 2 || !p.Up(); i++ {
		if i == 20000 {
			t.Fatalf("the link did not come up: card %d, partner up %v", card.PortState(0), p.Up())
		}
		cycle()
	}
	const n = 200
	data := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8), 0xA5, 0x5A}, 16) }
	for i := range n {
		p.Send(tlp.TLP{Fmt: tlp.Fmt4DWData, RequesterID: tlp.NewID(0x20, 0, 0), Length: 16, FirstBE: 0xF, LastBE: 0xF,
			Address: 0x1_0000_0000 + uint64(i)*64, Data: data(i)})
		w := tlp.TLP{Fmt: tlp.Fmt4DWData, RequesterID: tlp.NewID(0, 0, 0), Length: 16, FirstBE: 0xF, LastBE: 0xF,
			Address: 0x20_0000_0000 + uint64(i)*64, Data: data(i)}
		if err := card.Request(&w, 2); err != nil {
			t.Fatal(err)
		}
	}
	var toHost, toPartner []tlp.TLP
	flips := 0
	for i := 0; len(toHost) < n || len(toPartner) < n; i++ {
		if i == 200000 {
			t.Fatalf("after %d cycles: %d of %d writes reached host A, %d of %d the partner", i, len(toHost), n, len(toPartner), n)
		}
		l := set.partners[[2]int{0, 0}]
		if i%97 == 50 && l.toCard[l.at].Valid && !l.toCard[l.at].Ctl {
			l.toCard[l.at].Data[i%8] ^= 1 << (i % 64)
			flips++
		}
		if i%89 == 0 && l.toPartner[l.at].Valid && !l.toPartner[l.at].Ctl {
			l.toPartner[l.at].Data[i%8] ^= 1 << (i % 61)
			flips++
		}
		cycle()
		toHost = append(toHost, card.Out()...)
		toPartner = append(toPartner, p.Got()...)
	}
	for i := range n {
		if h := toHost[i]; h.Kind() != tlp.MWr || h.Address != 0x1_0000_0000+uint64(i)*64 || !bytes.Equal(h.Data, data(i)) {
			t.Fatalf("write %d from the partner left the card as %v at %#x", i, h.Kind(), h.Address)
		}
		if g := toPartner[i]; g.Kind() != tlp.MWr || g.Address != 0x1_0000_0000+uint64(i)*64 || !bytes.Equal(g.Data, data(i)) || g.RequesterID.Bus() != 0x10 {
			t.Fatalf("host A's write %d reached the partner as %v at %#x from %v", i, g.Kind(), g.Address, g.RequesterID)
		}
	}
	replays, _ := card.Counter("port_a_replays")
	if flips == 0 || replays == 0 || p.resent == 0 || p.malformed != 0 || p.lost != 0 {
		t.Fatalf("%d bits flipped, the card replayed %d times; the partner: %d replays, %d malformed, %d lost", flips, replays, p.resent, p.malformed, p.lost)
	}
	t.Logf("%d writes each way in order; %d bits flipped, the card replayed %d times, the partner %d", n, flips, replays, p.resent)
}
