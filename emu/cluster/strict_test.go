package cluster

import (
	"bytes"
	"io"
	"slices"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/tlp"
	"onic/tlp/pcap"
)

// TestEveryTLPIsLegal: every TLP the emulator emits passes onic's own
// strict decoder. Every tap of every built-in scenario is captured for
// the first 40 µs of simulated time (and 20 µs past each MEMS phase's
// reconfiguration and bring-up), and
// every record is decoded and checked against the specification's rules
// (tlp.Validate). One more run moves the two-party scenario's window to
// 0x80000000 on the far side: a write there must leave in the 3-DW form
// (PCIe §2.2.4.1 forbids a 4-DW header for an address below 4 GiB).
func TestEveryTLPIsLegal(t *testing.T) {
	type run struct {
		name string
		c    scenario.Config
	}
	var runs []run
	for _, s := range scenario.Scenarios() {
		runs = append(runs, run{s.Name, s.Config()})
	}
	low := scenario.TwoParty()
	for i := range low.ONICs {
		for j := range low.ONICs[i].Manager.Translation.Windows {
			low.ONICs[i].Manager.Translation.Windows[j].Translated = 0x8000_0000
		}
		// Each domain's range (the host's on the translated address, the
		// peer's on the address it writes) moves with it.
		for j := range low.ONICs[i].Manager.Access.Domains {
			d := &low.ONICs[i].Manager.Access.Domains[j]
			d.Ranges = slices.Clone(d.Ranges)
			for k := range d.Ranges {
				d.Ranges[k].Base = 0x8000_0000
			}
		}
	}
	runs = append(runs, run{"two-party, windows translated to 0x80000000", low})
	for _, rn := range runs {
		c := rn.c
		d := 40 * time.Microsecond
		for _, ph := range c.Phases {
			// Past the phase's reconfiguration and bring-up, and a while
			// of its traffic.
			d = max(d, ph.At+c.MEMS.Reconfig+c.MEMS.BringUp+20*time.Microsecond)
		}
		c.Duration = min(c.Duration, d)
		pc, _ := captured(t, c)
		rd, err := pcap.NewReader(bytes.NewReader(pc))
		if err != nil {
			t.Fatal(err)
		}
		n, below4G := 0, 0
		for {
			var p tlp.TLP
			rec, err := rd.Next(&p)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", rn.name, err)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("%s: record %d at tap %d (%v): %s: %v", rn.name, rd.Count(), rec.Tap.Tap, rec.At, p.String(), err)
			}
			if p.Kind() == tlp.MWr && p.Address < 1<<32 && p.Address >= 0x8000_0000 {
				below4G++
			}
			n++
		}
		if n == 0 && len(c.Flows) > 0 {
			t.Fatalf("%s: nothing captured", rn.name)
		}
		if rn.c.Name == low.Name && rn.name != low.Name && below4G == 0 {
			t.Fatalf("%s: no write below 4 GiB was captured", rn.name)
		}
		t.Logf("%s: %d TLPs, all legal", rn.name, n)
	}
}
