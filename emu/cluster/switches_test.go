package cluster

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
)

// twoSwitches is the two-party scenario with A's and B's O-NICs on
// switches of their own, joined by a trunk of fibres metres.
func twoSwitches(metres float64) scenario.Config {
	c := scenario.TwoParty()
	c.MEMS.Switches = []scenario.SwitchConfig{{Name: "east"}, {Name: "west", Reconfig: 20 * time.Millisecond}}
	c.MEMS.Trunks = []scenario.TrunkConfig{{A: "east", B: "west", Fibres: 1, FibreM: metres}}
	c.ONICs[0].Switch, c.ONICs[1].Switch = "east", "west"
	return c
}

// TestTrunkFibre: a circuit across a 100 m trunk is the circuit within one
// switch with the trunk's fibre added to an end's: the two runs report the
// same flows, hosts, O-NICs and accounting byte for byte.
func TestTrunkFibre(t *testing.T) {
	long := scenario.TwoParty()
	long.ONICs[0].FibreM[0] += 100
	want := run(t, long)
	got := run(t, twoSwitches(100))
	want.Speed, got.Speed = Speed{}, Speed{}
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(w) != string(g) {
		t.Fatalf("across the trunk:\n%s\nwithin a switch, the fibre 100 m longer:\n%s", g, w)
	}
	if one := run(t, scenario.TwoParty()); got.Flows[0].P50Ns < one.Flows[0].P50Ns+100*FibreNsPerMetre {
		t.Fatalf("median transfer %.0f ns across 100 m of trunk, %.0f ns without", got.Flows[0].P50Ns, one.Flows[0].P50Ns)
	}
}

// TestSwitchStall: a phase that moves a circuit across two switches keeps
// it dark for the slower switch's reconfiguration (west's 20 ms) and the
// bring-up, and the report's stall says so, whole or in parts.
func TestSwitchStall(t *testing.T) {
	c := twoSwitches(10)
	c.Hosts = append(c.Hosts, scenario.HostConfig{Name: "C"})
	onicC := c.ONICs[1]
	onicC.Name, onicC.Host, onicC.Switch = "onicC", "C", "west"
	c.ONICs = append(c.ONICs, onicC)
	c.Flows = c.Flows[:1]
	c.Flows[0].Stop = 50 * time.Microsecond
	c.Phases = []scenario.PhaseConfig{{At: 100 * time.Microsecond, Circuits: []scenario.CircuitConfig{{A: "onicA.a", B: "onicC.a"}}}}
	c.Duration = 22 * time.Millisecond
	for _, threads := range []int{0, 2} {
		r, err := RunParallel(c, threads)
		if err != nil {
			t.Fatal(err)
		}
		if want := 21 * time.Millisecond; r.Reconfigurations != 1 || time.Duration(r.StallS*1e9) != want {
			t.Fatalf("threads %d: %d reconfigurations stalling %v; want 1 of %v", threads, r.Reconfigurations, time.Duration(r.StallS*1e9), want)
		}
	}
}

// TestSwitchErrors: each mistake in switches and trunks is refused,
// naming its field.
func TestSwitchErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *scenario.Config)
		want string
	}{
		{"unknown switch", func(c *scenario.Config) { c.ONICs[1].Switch = "north" }, `onics[1].switch: "north" is not one of mems.switches (east, west)`},
		{"switch without switches", func(c *scenario.Config) { c.MEMS = scenario.MEMSConfig{}; c.ONICs[1].Switch = "east" }, `onics[0].switch: "east", but mems.switches names no switches`},
		{"no trunk", func(c *scenario.Config) { c.MEMS.Trunks = nil }, `circuits[0]: onicA.a and onicB.a are on switches "east" and "west", which no trunk joins`},
		{"trunk to itself", func(c *scenario.Config) { c.MEMS.Trunks[0].B = "east" }, "mems.trunks[0]: a trunk joins two different switches"},
		{"no fibres", func(c *scenario.Config) { c.MEMS.Trunks[0].Fibres = 0 }, "mems.trunks[0].fibres: 0 must be 1 to 4096"},
		{"too long", func(c *scenario.Config) { c.MEMS.Trunks[0].FibreM = 1e9 }, "mems.trunks[0].fibre_m: 1e+09 must be 0 to 100000 metres"},
		{"full switch", func(c *scenario.Config) { c.MEMS.Switches[1].Ports = 2 }, "mems.switches[1].ports: its O-NICs' ports and trunk fibres need 3, more than its 2"},
		{"trunk too thin", func(c *scenario.Config) {
			c.Circuits = append(c.Circuits, scenario.CircuitConfig{A: "onicA.b", B: "onicB.b"})
		}, `circuits: 2 circuits between switches "east" and "west", more than the 1 fibres of their trunk`},
		{"duplicate", func(c *scenario.Config) { c.MEMS.Switches[1].Name = "east" }, `mems.switches[1].name: "east" must be a unique non-empty name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := twoSwitches(10)
			tc.edit(&c)
			_, err := Build(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestFLEETClusters: two FLEET clusters on their own switches, their
// servers exchanging across the 24 inter-cluster fibres after the phase:
// every write delivered, the cross-cluster groups moving as much as the
// ones within a cluster, and the switches' ports as FLEET counts them
// (288 for O-NICs and 24 of the 96 spare for the trunk, each).
func TestFLEETClusters(t *testing.T) {
	c := scenario.FLEETClusters(2)
	if len(c.ONICs) != 288 || len(c.MEMS.Trunks) != 1 || c.MEMS.Trunks[0].Fibres != 24 {
		t.Fatalf("%d O-NICs, trunks %+v", len(c.ONICs), c.MEMS.Trunks)
	}
	r, err := RunParallel(c, 2)
	if err != nil {
		t.Fatal(err)
	}
	balanced(t, r.Accounting)
	a := r.Accounting
	if a.Dropped+a.Denied+a.Unsupported+a.ErrorStatus != 0 {
		t.Fatalf("losses: %+v", a)
	}
	gbps := map[string]float64{}
	for _, g := range r.Groups {
		gbps[g.Name] = g.Gbps
	}
	// Each circuit across the trunk carries what a two-party pair does
	// over the same 120 m of fibre (10 m, the trunk's 100, 10 m): less
	// than within a cluster, the link's 16 KiB replay buffer and posted
	// credits covering less than the round trip.
	// (The pair's flows run as long as the trunk's and stop as they do,
	// so that both rates are a number of whole transfers over the time
	// from their start to the last one's end.)
	pair := scenario.TwoParty()
	pair.ONICs[0].FibreM[0] += 100
	for _, f := range c.Flows {
		if f.Group == "c0-S0<->c1-S0" {
			pair.Duration = c.Duration - f.Start
			for i := range pair.Flows {
				pair.Flows[i].Stop = f.Stop - f.Start
			}
			break
		}
	}
	p := run(t, pair)
	want := 12 * (p.Flows[0].Gbps + p.Flows[1].Gbps)
	for _, g := range []string{"c0-S0<->c1-S0", "c0-S2<->c1-S2"} {
		if got := gbps[g]; got < 0.99*want || got > 1.01*want {
			t.Errorf("%s: %.1f Gb/s across the trunk, want twelve 120 m pairs' %.1f (groups %v)", g, got, want, gbps)
		}
	}
	if within := gbps["c1-S1<->S3"]; within < 1.1*want {
		t.Errorf("within a cluster %.1f Gb/s, across the trunk %.1f: the trunk's fibre should cost throughput", within, want)
	}
	t.Logf("within a cluster %.1f Gb/s, across the trunk %.1f and %.1f; a 120 m pair %.1f Gb/s a direction",
		gbps["c1-S1<->S3"], gbps["c0-S0<->c1-S0"], gbps["c0-S2<->c1-S2"], p.Flows[0].Gbps)
	if r.Reconfigurations != 1 {
		t.Fatalf("%d reconfigurations", r.Reconfigurations)
	}
}

// TestCheckHardware: with traffic generators, a card may hold only
// library kernels (an opaque one's output bytes are unknown, and a write
// is matched to its landing by them); every built-in scenario with flows
// may run on cards.
func TestCheckHardware(t *testing.T) {
	c := scenario.Allreduce()
	c.ONICs[2].Kernels[0].Name, c.ONICs[2].Kernels[0].Opaque = "my-kernel", true
	if err := CheckHardware(c, nil); err == nil || !strings.Contains(err.Error(), "--rtl onicC: slot 0 holds kernel my-kernel") {
		t.Fatalf("an opaque kernel: %v", err)
	}
	if err := CheckHardware(c, []string{"onicA"}); err != nil {
		t.Fatalf("the opaque kernel's O-NIC not a card: %v", err)
	}
	for _, s := range scenario.Scenarios() {
		if err := CheckHardware(s.Config(), nil); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}
