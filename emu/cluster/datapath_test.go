package cluster

import (
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/firmware/build"
	pmgr "onic/pcie/manager"
)

// runCluster builds and runs c, returning the cluster for a look inside,
// with its accounting balanced.
func runCluster(t *testing.T, c scenario.Config) (*Cluster, Report) {
	t.Helper()
	cl, r := buildRun(t, c)
	balanced(t, r.Accounting)
	return cl, r
}

// buildRun builds and runs c.
func buildRun(t *testing.T, c scenario.Config) (*Cluster, Report) {
	t.Helper()
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	return cl, r
}

// TestManagerDataPath: the manager takes one data-path-wide beat per cycle
// from each ingress. At the default 512 bits and 250 MHz (128 Gb/s) it
// does not limit a Gen3 x16 exchange (the optical link's whole words do,
// at about 100 Gb/s): the host's writes wait only for the PCIe block's CQ
// (five beats for a 256-byte write and its descriptor, 102.4 Gb/s and so
// nearly always busy, against the host link's 110), within what the host
// link's credits let in; with onicA at 256 bits both directions through
// onicA (its host ingress for A->B, its port ingress for B->A) are held
// to 64 Gb/s of 256-byte writes (8 beats of 32 bytes per 32 ns), and the
// manager's backlog holds A's host link back through its credits instead
// of queueing without bound. At 512 bits and 125 MHz the manager would
// take 64 Gb/s too, but the card's optical link runs on the same clock:
// a 256-byte write's five words take 40 ns, 51.2 Gb/s.
func TestManagerDataPath(t *testing.T) {
	base, br := runCluster(t, scenario.TwoParty())
	for _, f := range br.Flows {
		if f.Gbps < 95 {
			t.Fatalf("default manager: %s at %.1f Gb/s", f.Name, f.Gbps)
		}
	}
	for _, o := range br.ONICs {
		if !notBusy(o.Pipeline, 1) {
			t.Fatalf("default manager: %s reports TLPs held back: %+v", o.Name, *o.Pipeline)
		}
	}
	baseStalls := base.onics[0].link.Stats(0).CreditStalls
	for _, tc := range []struct {
		name    string
		mod     func(*scenario.ONICConfig)
		gbps    float64 // the bound
		manager bool    // the manager is the bottleneck
	}{
		{"256 bits at 250 MHz", func(o *scenario.ONICConfig) { o.DataWidth = 256 }, 64, true},
		{"512 bits at 125 MHz", func(o *scenario.ONICConfig) { o.ClockMHz = 125 }, 51.2, false},
	} {
		name := tc.name
		c := scenario.TwoParty()
		tc.mod(&c.ONICs[0])
		cl, r := runCluster(t, c)
		for _, f := range r.Flows {
			if f.Gbps > tc.gbps+0.01 || f.Gbps < 0.94*tc.gbps {
				t.Errorf("%s: %s at %.2f Gb/s, want just under %g", name, f.Name, f.Gbps, tc.gbps)
			}
		}
		t.Logf("%s: A->B %.2f Gb/s, B->A %.2f Gb/s, %d credit stalls on A's host link (%d by default)",
			name, r.Flows[0].Gbps, r.Flows[1].Gbps, cl.onics[0].link.Stats(0).CreditStalls, baseStalls)
		if st := cl.onics[0].link.Stats(0).CreditStalls; st < 1000 || 2*st < 3*baseStalls {
			t.Errorf("%s: A's host link stalled for credits %d times (%d with the default manager)", name, st, baseStalls)
		}
		if got := cl.onics[0].regs.block.Read(pmgr.RegCaps) >> 24; got != uint32(c.ONICs[0].DataWidth/32) && c.ONICs[0].DataWidth != 0 {
			t.Errorf("%s: CAPS says %d DWs of data path", name, got)
		}
		if !tc.manager {
			continue
		}
		// The report says the manager was the bottleneck, for both
		// directions, and names its data path.
		p := r.ONICs[0].Pipeline
		if p == nil || p.Waited == 0 || p.MaxWaitNs < p.MeanWaitNs || p.Busy[0] < 0.95 || p.Busy[1] < 0.95 || p.Busy[2] != 0 ||
			float64(p.DataWidth)*p.ClockMHz != 64000 || !notBusy(r.ONICs[1].Pipeline, 0.8) {
			t.Errorf("%s: pipeline report %+v (onicB: %+v)", name, p, r.ONICs[1].Pipeline)
		}
		var text strings.Builder
		r.WriteText(&text)
		if !strings.Contains(text.String(), "manager of onicA (") || !strings.Contains(text.String(), "TLPs back") {
			t.Errorf("%s: the text report does not show the manager holding TLPs back:\n%s", name, text.String())
		}
	}
}

// notBusy says whether a pipeline report is absent or names only short
// waits (under 1.5 µs, what a host link's credits let in) at ingresses
// busy at most maxBusy of the run.
func notBusy(p *PipelineReport, maxBusy float64) bool {
	return p == nil || p.MaxWaitNs <= 1500 && p.Busy[0] <= maxBusy && p.Busy[1] <= maxBusy && p.Busy[2] <= maxBusy
}

// TestDeployedDataPath: a full reflash with an image built for a 256-bit
// manager makes the O-NIC's pipeline and its CAPS register 256 bits wide
// (the width comes from the image's manifest), and its traffic slows to
// what that path carries.
func TestDeployedDataPath(t *testing.T) {
	ops, _, _, trust := deployKeys()
	spec := onicASpec(t, "")
	spec.Width = 256
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	im, err := build.Build(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if im.Manifest.DataWidth != 256 {
		t.Fatalf("manifest data width %d", im.Manifest.DataWidth)
	}
	c := scenario.TwoParty()
	c.ONICs[0].Board = fastBoard
	c.Duration = 400 * time.Microsecond
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := cl.onics[0].regs.block.Read(pmgr.RegCaps) >> 24; got != 16 {
		t.Fatalf("before the reflash CAPS says %d DWs of data path, want 16", got)
	}
	if err := cl.Deploy("onicA", 50*time.Microsecond, "file", imageFile(t, im, ops), trust); err != nil {
		t.Fatal(err)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	balanced(t, r.Accounting)
	o := cl.onics[0]
	if d := r.ONICs[0].Deploys; len(d) != 1 || d[0].Outcome != "loaded" {
		t.Fatalf("deploys %+v", d)
	}
	if o.pl.width != 256 || o.regs.block.Read(pmgr.RegCaps)>>24 != 8 {
		t.Errorf("after the reflash: %d-bit pipeline, CAPS %#x", o.pl.width, o.regs.block.Read(pmgr.RegCaps))
	}
	t.Logf("A->B %.1f Gb/s, B->A %.1f Gb/s", r.Flows[0].Gbps, r.Flows[1].Gbps)
	// 50 us at ~110 Gb/s, 23 us out, then ~327 us at 64: about 70 Gb/s.
	if f := r.Flows[0]; f.Gbps > 80 || f.Gbps < 60 {
		t.Errorf("A->B at %.1f Gb/s over a run that is mostly at 256 bits", f.Gbps)
	}
}
