package card

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/emu/scenario"
	"onic/hdlgen/ir"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// TestCountersInRegisterBAR: every counter of the card is 32 bits, in the
// list Counters gives (no output that counts is left out of it), and a
// read of the register BAR's counter region returns each one's value,
// 4 bytes each in that order; the rest of the region reads 0 and ignores
// writes. The counts are made by a fibre that damages words both ways.
func TestCountersInRegisterBAR(t *testing.T) {
	link := testLink(t)
	var tops [2]*ir.Module
	for i := range 2 {
		// The host's domain may also reach its own O-NIC's registers.
		cfg := config(t, i)
		host := &cfg.Manager.Access.Domains[0]
		host.Egress = append(slices.Clone(host.Egress), "local")
		host.Ranges = append(slices.Clone(host.Ranges), acl.RangeConfig{Base: 0, Size: 0x10000, Read: true, Write: true})
		tops[i] = cardOf(t, []string{"onic_card_a", "onic_card_b"}[i], cfg, link)
	}
	names := Counters(tops[0])
	counting := []string{"count", "deny", "drop", "error", "nak", "replay", "lost", "stall", "malformed"}
	for _, pt := range tops[0].Ports() {
		if !pt.Output {
			continue
		}
		v, _ := tops[0].OutputValue(pt.Name)
		looks := slices.ContainsFunc(counting, func(w string) bool { return strings.Contains(pt.Name, w) })
		switch in := slices.Contains(names, pt.Name); {
		case in && v.Width() != 32:
			t.Errorf("counter %s is %d bits", pt.Name, v.Width())
		case looks && !in:
			t.Errorf("output %s looks like a counter and is not in the register BAR", pt.Name)
		}
	}
	for _, pt := range Ports {
		for _, c := range optlink.Counters {
			if !slices.Contains(names, pt.Prefix+"_"+c) {
				t.Errorf("the link counter %s_%s is missing", pt.Prefix, c)
			}
		}
	}
	if len(names) < 30 {
		t.Fatalf("%d counters: %v", len(names), names)
	}
	// The port pipelines' block comes first, as the emulator's O-NIC
	// serves it.
	if first := pmgr.PortInCounters(); !slices.Equal(names[:len(first)], first) {
		t.Fatalf("the card's counters start\n %v\nthe emulator's\n %v", names[:len(first)], first)
	}

	p := newPair(t, tops)
	p.setDelay(24)
	p.run("the link comes up", 5000, func() bool { return p.up(0) && p.up(1) })
	// Writes through the window to the far host while the fibres damage
	// words.
	for i := range 40 {
		x := tlp.TLP{Length: 16, FirstBE: 0xF, LastBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Address: bases[pcie.ONICWindowBAR] + 64*uint64(i),
			Data: make([]byte, 64)}
		x.Fmt, x.Type, _ = tlp.FmtType(tlp.MWr, true, 0)
		p.request(0, &x, pcie.ONICWindowBAR)
	}
	p.ber = 1.0 / 40
	for range 3000 {
		p.cycle()
	}
	p.ber = 0
	p.run("the link comes up again", 20000, func() bool { return p.up(0) && p.up(1) })
	for range 500 {
		p.cycle()
	}
	// On each card, a write into the region, then a read of it all and
	// one more DW.
	nonzero := 0
	for k := range 2 {
		base := bases[pcie.ONICRegBAR] + manager.RegBARCounters
		w := tlp.TLP{Length: 1, FirstBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Address: base, Data: []byte{1, 2, 3, 4}}
		w.Fmt, w.Type, _ = tlp.FmtType(tlp.MWr, true, 0)
		p.request(k, &w, pcie.ONICRegBAR)
		r := tlp.TLP{Length: uint16(len(names) + 1), FirstBE: 0xF, LastBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Tag: 5, Address: base}
		r.Fmt, r.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
		p.request(k, &r, pcie.ONICRegBAR)
		var data []byte
		p.run("the counters are read", 5000, func() bool {
			data = nil
			for _, c := range p.cc[k] {
				data = append(data, c.Data...)
			}
			return len(data) >= 4*int(r.Length)
		})
		for i, n := range names {
			got, want := binary.LittleEndian.Uint32(data[4*i:]), uint32(p.cards[k].get(n)[0])
			if got != want {
				t.Errorf("card %d: counter %d (%s) reads %d; the output says %d", k, i, n, got, want)
			}
			if got != 0 {
				nonzero++
			}
		}
		if past := binary.LittleEndian.Uint32(data[4*len(names):]); past != 0 {
			t.Errorf("card %d: the DW after the last counter reads %#x, want 0", k, past)
		}
	}
	for _, c := range []struct {
		card int
		name string
	}{{0, "port_a_crc_errors"}, {0, "port_a_replays"}, {1, "port_a_naks"}, {1, "port_in_count_ok_total"}} {
		if p.cards[c.card].get(c.name)[0] == 0 {
			t.Errorf("card %d: %s is 0: the test makes too few events", c.card, c.name)
		}
	}
	t.Logf("%d counters, %d of them not 0", len(names), nonzero)
}

// TestCardCountersContract: the card's counters are, name for name and
// in order, pcie/manager.CardCounters for its slots and down policy —
// the list the emulator's O-NIC serves its counter registers from — for
// cards with empty slots, a one-input kernel, a two-input kernel, and
// either down policy.
func TestCardCountersContract(t *testing.T) {
	for _, tc := range []struct{ scenario, policy string }{
		{"two-party", "hold"}, {"two-party", "fail"}, {"offload", "hold"}, {"allreduce", "hold"},
	} {
		c, err := scenario.Lookup(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range c.ONICs {
			o.DownPolicy = tc.policy
			d, err := manager.Build(manager.Config{Manager: o.Manager, BARs: onicFunction(t).MemorySizes(), Hold: tc.policy == "hold"})
			if err != nil {
				t.Fatal(err)
			}
			slots, err := SlotsOf(d, kernelsOf(t, o))
			if err != nil {
				t.Fatal(err)
			}
			pair := make([]bool, len(slots))
			for i, s := range slots {
				pair[i] = s.Config.Inputs == 2
			}
			got, want := Counters(slotCard(t, o, testLink(t))), pmgr.CardCounters(pair, tc.policy == "hold")
			if !slices.Equal(got, want) {
				t.Errorf("%s %s (%s): the card's counters\n %v\npcie/manager.CardCounters\n %v", tc.scenario, o.Name, tc.policy, got, want)
			}
		}
	}
}
