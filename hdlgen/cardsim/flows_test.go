package cardsim

import (
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
)

// TestFlowsOnCards: the two-party scenario's write flows and its read
// variant run for 40 µs with both O-NICs as their generated cards (onic
// emu run --rtl): every transfer that ends is delivered whole — nothing
// refused, dropped or failed, the reads under 8-bit tags the cluster
// maps the hosts' onto (PG213's CQ carries 8) — and each flow's
// throughput is within what the cards' links can carry of the model's:
// the optical link layer's framing costs the cards about a tenth of the
// model's rate for writes and a fifth for reads (docs/hostif.md).
func TestFlowsOnCards(t *testing.T) {
	for _, name := range []string{"two-party", "two-party-read"} {
		t.Run(name, func(t *testing.T) {
			run := func(rtl bool) cluster.Report {
				cfg, err := scenario.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Duration = 40 * time.Microsecond
				cl, err := cluster.Build(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if rtl {
					set, err := NewSet(cfg, nil)
					if err != nil {
						t.Fatal(err)
					}
					if err := cl.UseHardware(set); err != nil {
						t.Fatal(err)
					}
				}
				rep, err := cl.Run()
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			model, rtl := run(false), run(true)
			a := rtl.Accounting
			if a.Delivered == 0 || a.Dropped+a.Denied+a.Unsupported+a.ErrorStatus != 0 || rtl.RTL == nil || rtl.RTL.Error != "" || rtl.RTL.Refused != "" {
				t.Fatalf("on the cards: %+v, %+v", a, rtl.RTL)
			}
			for k, o := range rtl.ONICs {
				// Each TLP a card's port sent once, however often its link
				// sent it again: no fewer than its peer's host received.
				if !o.Card || o.PortTLPs[0] == 0 || o.PortTLPs[1] != 0 || o.PortTLPs[0] > model.ONICs[k].PortTLPs[0] {
					t.Errorf("%s on the cards: %+v; on the model it sent %v", o.Name, o, model.ONICs[k].PortTLPs)
				}
			}
			for i, f := range rtl.Flows {
				m := model.Flows[i]
				if f.Failed != 0 || f.Transfers == 0 || f.Gbps < 0.7*m.Gbps || f.Gbps > 1.05*m.Gbps {
					t.Errorf("flow %s: %d transfers (%d failed) at %.2f Gb/s on the cards, %.2f on the model", f.Name, f.Transfers, f.Failed, f.Gbps, m.Gbps)
				}
				t.Logf("flow %s: %.2f Gb/s on the cards, %.2f on the model; p50 %.0f ns and %.0f ns", f.Name, f.Gbps, m.Gbps, f.P50Ns, m.P50Ns)
			}
		})
	}
}
