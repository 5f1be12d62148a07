package cardsim

import (
	"bytes"
	"testing"

	"onic/designs/internal/gty"
	"onic/tlp"
)

// TestCardsOverLanes (issue 48 point 3): the two-party scenario's cards,
// port A to port A through the GTY wrappers a board top gives each port
// and the transceiver and fibre model — four lanes a way, skewed, each
// with its block boundary to find, bits flipped on the line — bond the
// lanes, train their links, and carry 300 of host A's 256-byte writes to
// host B, every one once, in order and unchanged, the damaged frames
// replayed by the link layers above the wrappers.
func TestCardsOverLanes(t *testing.T) {
	cards := twoPartyCards(t)
	f, err := NewLaneFibre(cards[0], 0, cards[1], 0, gty.Config{Lanes: 4, MarkerWords: 32},
		gty.FibreConfig{Lanes: 4, Skew: []int{2, 0, 4, 1}, BitErrorRate: 2e-5, Seed: 1},
		gty.FibreConfig{Lanes: 4, Skew: []int{0, 3, 1, 2}, BitErrorRate: 2e-5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	cycle := func() {
		for _, c := range cards {
			if err := c.Cycle(); err != nil {
				t.Fatal(err)
			}
		}
		f.Carry()
	}
	up := 0
	for ; cards[0].PortState(0) != 2 || cards[1].PortState(0) != 2; up++ {
		if up == 40000 {
			t.Fatalf("links not up after %d cycles (lanes bonded: %d, %d)", up, f.Path(true).Get("phy_up"), f.Path(false).Get("phy_up"))
		}
		cycle()
	}
	const n = 300
	var want [][]byte
	for i := range n {
		data := bytes.Repeat([]byte{byte(i), byte(i >> 8), 0xA5, 0x5A}, 64)
		want = append(want, data)
		w := tlp.TLP{Fmt: tlp.Fmt4DWData, RequesterID: tlp.NewID(0, 0, 0), Tag: uint16(i % 256), Length: 64,
			FirstBE: 0xF, LastBE: 0xF, Address: 0x20_0000_0000 + uint64(i)*256, Data: data}
		if err := cards[0].Request(&w, 2); err != nil {
			t.Fatal(err)
		}
	}
	var got []tlp.TLP
	for i := 0; len(got) < n; i++ {
		if i == 200000 {
			t.Fatalf("%d of %d writes reached host B", len(got), n)
		}
		cycle()
		got = append(got, cards[1].Out()...)
	}
	for i, g := range got {
		if g.Kind() != tlp.MWr || g.Address != 0x1_0000_0000+uint64(i)*256 || !bytes.Equal(g.Data, want[i]) {
			t.Fatalf("write %d reached host B as %v at %#x", i, g.Kind(), g.Address)
		}
	}
	var replays, crc uint64
	for _, c := range cards {
		r, _ := c.Counter("port_a_replays")
		e, _ := c.Counter("port_a_crc_errors")
		replays, crc = replays+r, crc+e
	}
	if replays == 0 || crc == 0 {
		t.Errorf("bits flipped on the lanes, but %d CRC errors and %d replays", crc, replays)
	}
	t.Logf("up after %d cycles; %d writes across; %d CRC errors, %d replays; %d realigns", up, n, crc, replays,
		f.Path(true).Get("realigns")+f.Path(false).Get("realigns"))
}
