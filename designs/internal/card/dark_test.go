package card

import (
	"testing"

	"onic/hdlgen/ir"
	"onic/pcie"
	"onic/tlp"
)

// TestDarkPortDropsNotWedges: host A reads host B's memory across the
// link; the link goes dark while host B's completions are on their way,
// so card B's manager routes them to a port that is down. Under the fail
// policy the card drops them and counts them (port_a_down_drops, the
// emulator's port-down) instead of holding them at the link, where they
// would stall card B's manager and every host request behind them until
// the port came back: a request host B makes afterwards is still
// answered.
func TestDarkPortDropsNotWedges(t *testing.T) {
	link := testLink(t)
	p := newPair(t, [2]*ir.Module{fullCard(t, "onic_card_a", 0, link), fullCard(t, "onic_card_b", 1, link)})
	w := design(t, 0).Windows[0]
	p.run("the link comes up", 5000, func() bool { return p.up(0) && p.up(1) })

	// Host A reads 8 DWs of host B's memory through its window, more reads
	// than the link's input slice can hold.
	const reads = 6
	fm, typ, _ := tlp.FmtType(tlp.MRd, true, 0)
	for i := range reads {
		rd := tlp.TLP{Fmt: fm, Type: typ, Length: 8, Tag: uint16(i), RequesterID: tlp.NewID(0, 0, 0), FirstBE: 0xF, LastBE: 0xF,
			Address: bases[w.BAR] + w.Offset + 0x1000*uint64(i)}
		p.request(0, &rd, w.BAR)
	}
	p.run("the reads reach host B", 5000, func() bool { return len(p.rq[1]) == reads })

	// The link goes dark; then host B answers them all.
	p.phy = false
	p.run("card B's port goes down", 5000, func() bool { return !p.up(1) })
	for _, x := range p.rq[1] {
		c := pcie.Completion(&x, tlp.NewID(0, 0, 0), tlp.StatusSC, make([]byte, 32))
		p.complete(1, &c, x.Address)
	}
	p.run("card B drops the completions for the dark port", 5000, func() bool { return p.cards[1].get("port_a_down_drops")[0] == reads })

	// Card B still answers its host: a read that misses every window
	// gets its UR completion.
	miss := tlp.TLP{Fmt: fm, Type: typ, Length: 1, Tag: 9, RequesterID: tlp.NewID(0, 0, 0), FirstBE: 0xF,
		Address: bases[w.BAR] + w.Offset + w.Size + 0x1000}
	p.request(1, &miss, w.BAR)
	p.run("host B's next request is answered", 5000, func() bool { return len(p.cc[1]) == 1 })
	if c := p.cc[1][0]; c.Tag != 9 || c.Status != tlp.StatusUR {
		t.Errorf("host B got %s, want the UR completion of tag 9", c.String())
	}
}
