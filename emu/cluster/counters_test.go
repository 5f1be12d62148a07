package cluster

import (
	"slices"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/pcie"
	pmgr "onic/pcie/manager"
)

// TestRegisterBARCounters: after the two-party run, each O-NIC's register
// BAR reads as the generated card's would: COUNT_* the host's TLPs only
// (the card's manager counts its host pipeline), and the counter region
// from pcie.ONICCountersOffset the port pipelines' counts and denials in
// pmgr.PortInCounters' order, then the card's other counters (here all
// 0: nothing was dropped or damaged), then 0 past the list.
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
		all := pmgr.CardCounters(make([]bool, o.mgr.Tables().KernelSlots()), true)
		for i := len(names); i <= len(all); i++ {
			if got := o.barWord(pcie.ONICCountersOffset + 4*uint64(i)); got != 0 {
				t.Errorf("%s: counter word %d reads %d", o.cfg.Name, i, got)
			}
		}
	}
}

// TestRegisterBARPortCounters: the card's port counters, read from the
// emulator's O-NIC's register BAR, say what its report says: a partner
// that stops returning credits past the credit timeout stalls onicA's
// port A (egress_stalls), retrains its link (stalls) and loses what was
// queued on it (lost: the accounting's link-down drops); under hold the
// hold buffer drops the rest (hold_drops: hold-buffer-full); and bit
// errors into onicB's port A show as crc_errors and naks there and
// replays at onicA's port A. Under fail the drops past the manager are
// down_drops, and the link never waits out its credit timeout.
func TestRegisterBARPortCounters(t *testing.T) {
	for _, policy := range []string{"hold", "fail"} {
		c := twoPorts(policy, scenario.FaultConfig{Port: "onicB.a", Kind: "stall", From: 20 * time.Microsecond, To: 150 * time.Microsecond})
		c.Faults = append(c.Faults, scenario.FaultConfig{Port: "onicB.a", Kind: "errors", From: 160 * time.Microsecond, To: 290 * time.Microsecond, BER: 3e-6})
		cl, r := runCluster(t, c)
		read := func(o *onicNode, name string) uint64 {
			i := slices.Index(pmgr.CardCounters(make([]bool, o.mgr.Tables().KernelSlots()), policy == "hold"), name)
			if i < 0 {
				t.Fatalf("no counter %s", name)
			}
			return uint64(o.barWord(pcie.ONICCountersOffset + 4*uint64(i)))
		}
		a, b := cl.onics[0], cl.onics[1]
		st, le, ble := r.ONICs[0].Stalls, r.ONICs[0].LinkErrors, r.ONICs[1].LinkErrors
		if st == nil || le == nil || ble == nil {
			t.Fatalf("%s: the run stalled nothing or damaged nothing: %+v %+v %+v", policy, st, le, ble)
		}
		// Under hold the hold buffer drops what does not fit; under fail
		// the manager fails what comes for a stalled port (its COUNT_
		// registers count those) and the port drops what had passed it.
		drops, dropped := "hold_drops", r.Accounting.Reasons["hold-buffer-full"]
		if policy == "fail" {
			drops, dropped = "down_drops", r.Accounting.Reasons["port-down"]-a.mgr.Count(pmgr.PortDown)
		}
		for _, x := range []struct {
			name      string
			got, want uint64
		}{
			{"port_a_egress_stalls", read(a, "port_a_egress_stalls"), st.EgressStalls[0]},
			{"port_a_stalls", read(a, "port_a_stalls"), st.Retrains[0]},
			{"port_a_lost", read(a, "port_a_lost"), r.Accounting.Reasons["link-down"]},
			{"port_a_" + drops, read(a, "port_a_"+drops) + read(a, "port_b_"+drops), dropped},
			{"port_a_replays", read(a, "port_a_replays"), le[0].Replays},
			{"onicB's port_a_crc_errors", read(b, "port_a_crc_errors"), ble[0].CRCErrors},
			{"onicB's port_a_naks", read(b, "port_a_naks"), ble[0].Naks},
		} {
			// (Under fail the port's queue is emptied as it stalls: its
			// link never waits out the credit timeout.)
			mustCount := policy == "hold" || x.name != "port_a_stalls" && x.name != "port_a_lost"
			if x.got != x.want || x.want == 0 && mustCount {
				t.Errorf("%s: %s reads %d, the report says %d", policy, x.name, x.got, x.want)
			}
		}
	}
}
