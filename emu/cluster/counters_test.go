package cluster

import (
	"testing"

	"onic/emu/scenario"
	"onic/pcie"
	pmgr "onic/pcie/manager"
)

// TestRegisterBARCounters: after the two-party run, each O-NIC's register
// BAR reads as the generated card's would: COUNT_* the host's TLPs only
// (the card's manager counts its host pipeline), and the counter region
// from pcie.ONICCountersOffset the port pipelines' counts and denials in
// pmgr.PortInCounters' order, then 0.
func TestRegisterBARCounters(t *testing.T) {
	cl, err := Build(scenario.TwoParty())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Run(); err != nil {
		t.Fatal(err)
	}
	names := pmgr.PortInCounters()
	for _, o := range cl.onics {
		host := o.mgr.CountFrom(pmgr.FromHost, pmgr.OK)
		ports := o.mgr.CountFrom(pmgr.FromPortA, pmgr.OK) + o.mgr.CountFrom(pmgr.FromPortB, pmgr.OK)
		if host == 0 || ports == 0 {
			t.Fatalf("%s: %d TLPs from the host and %d from the ports passed: the run tests neither", o.cfg.Name, host, ports)
		}
		if got := o.barWord(pmgr.RegCount0 + 4*uint64(pmgr.OK)); uint64(got) != host {
			t.Errorf("%s: COUNT_OK reads %d, the host's TLPs are %d (all ingresses: %d)", o.cfg.Name, got, host, o.mgr.Count(pmgr.OK))
		}
		for i, n := range names {
			if got, want := o.barWord(pcie.ONICCountersOffset+4*uint64(i)), o.mgr.PortInCounter(i); got != want {
				t.Errorf("%s: %s reads %d, want %d", o.cfg.Name, n, got, want)
			}
		}
		if got := o.barWord(pcie.ONICCountersOffset + 4*uint64(pmgr.OK)); uint64(got) != ports {
			t.Errorf("%s: port_in_count_ok_total reads %d, the ports' TLPs are %d", o.cfg.Name, got, ports)
		}
		if got := o.barWord(pcie.ONICCountersOffset + 4*uint64(len(names))); got != 0 {
			t.Errorf("%s: the word after the port pipelines' counters reads %d", o.cfg.Name, got)
		}
	}
}
