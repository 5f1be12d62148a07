package cluster

import (
	"cmp"
	"fmt"
	"strings"

	"onic/emu/scenario"
	"onic/emu/sim"
)

// mems is one of the cluster's MEMS optical circuit switches.
type mems struct {
	name              string
	ports             int
	reconfig, bringUp sim.Time
}

// trunk is a bundle of inter-cluster fibres between two switches.
type trunk struct {
	fibres int
	metres float64
}

// switchPlan is where a scenario's O-NICs are fibred: each O-NIC's switch,
// the switches and the trunks between them, checked. Build wires it, and
// RunParallel checks the whole scenario's before splitting it into parts
// that each see only their own O-NICs on the switches and trunks.
type switchPlan struct {
	switches []mems
	onic     map[string]int // O-NIC name -> its switch
	trunks   map[[2]int]trunk
}

// planSwitches checks c's switches, trunks and the ports they take, and
// the circuits of c (at the start and in every phase) against the trunks.
func planSwitches(c scenario.Config) (*switchPlan, error) {
	m := c.MEMS
	m.Ports = cmp.Or(m.Ports, scenario.DefaultMEMSPorts)
	m.Reconfig = cmp.Or(m.Reconfig, scenario.DefaultReconfig)
	m.BringUp = cmp.Or(m.BringUp, scenario.DefaultBringUp)
	pl := &switchPlan{onic: map[string]int{}, trunks: map[[2]int]trunk{}}
	sws := m.Switches
	if len(sws) == 0 {
		if len(m.Trunks) > 0 {
			return nil, fmt.Errorf("mems.trunks: trunks join switches, and mems.switches names none")
		}
		sws = []scenario.SwitchConfig{{}}
	}
	if len(sws) > scenario.MaxONICs {
		return nil, fmt.Errorf("mems.switches: %d of them, more than the %d allowed", len(sws), scenario.MaxONICs)
	}
	names := map[string]int{}
	for i, sc := range sws {
		p := fmt.Sprintf("mems.switches[%d]", i)
		if len(m.Switches) == 0 {
			p = "mems"
		} else if sc.Name == "" || names[sc.Name] != 0 {
			return nil, fmt.Errorf("%s.name: %q must be a unique non-empty name", p, sc.Name)
		}
		names[sc.Name] = i + 1
		sw := mems{name: sc.Name, ports: cmp.Or(sc.Ports, m.Ports)}
		rc, bu := cmp.Or(sc.Reconfig, m.Reconfig), cmp.Or(sc.BringUp, m.BringUp)
		if sw.ports < 0 || sw.ports > scenario.MaxMEMSPorts {
			return nil, fmt.Errorf("%s.ports: %d must be 1 to %d", p, sw.ports, scenario.MaxMEMSPorts)
		}
		if rc < 0 || rc > scenario.MaxMEMSTime || bu < 0 || bu > scenario.MaxMEMSTime {
			return nil, fmt.Errorf("%s: reconfig %v and bring_up %v must be 0 to %v", p, rc, bu, scenario.MaxMEMSTime)
		}
		sw.reconfig, sw.bringUp = ps(rc), ps(bu)
		pl.switches = append(pl.switches, sw)
	}
	used := make([]int, len(pl.switches))
	for i, o := range c.ONICs {
		s := names[o.Switch] - 1
		if s < 0 {
			if len(m.Switches) == 0 {
				return nil, fmt.Errorf("onics[%d].switch: %q, but mems.switches names no switches (there is one)", i, o.Switch)
			}
			return nil, fmt.Errorf("onics[%d].switch: %q is not one of mems.switches (%s)", i, o.Switch, switchNames(m.Switches))
		}
		pl.onic[o.Name] = s
		used[s] += 2
	}
	for i, t := range m.Trunks {
		p := fmt.Sprintf("mems.trunks[%d]", i)
		a, b := names[t.A]-1, names[t.B]-1
		switch {
		case a < 0 || b < 0:
			return nil, fmt.Errorf("%s: %q and %q must both be mems.switches (%s)", p, t.A, t.B, switchNames(m.Switches))
		case a == b:
			return nil, fmt.Errorf("%s: a trunk joins two different switches, not %q to itself", p, t.A)
		case t.Fibres < 1 || t.Fibres > scenario.MaxMEMSPorts:
			return nil, fmt.Errorf("%s.fibres: %d must be 1 to %d", p, t.Fibres, scenario.MaxMEMSPorts)
		case !(t.FibreM >= 0 && t.FibreM <= scenario.MaxTrunkM):
			return nil, fmt.Errorf("%s.fibre_m: %v must be 0 to %d metres", p, t.FibreM, scenario.MaxTrunkM)
		}
		k := trunkKey(a, b)
		if _, dup := pl.trunks[k]; dup {
			return nil, fmt.Errorf("%s: switches %q and %q have a trunk already (give it more fibres)", p, t.A, t.B)
		}
		pl.trunks[k] = trunk{fibres: t.Fibres, metres: t.FibreM}
		used[a] += t.Fibres
		used[b] += t.Fibres
	}
	for s, sw := range pl.switches {
		if used[s] <= sw.ports {
			continue
		}
		if len(m.Switches) == 0 {
			return nil, fmt.Errorf("mems.ports: %d O-NIC ports need more than the switch's %d", used[s], sw.ports)
		}
		return nil, fmt.Errorf("mems.switches[%d].ports: its O-NICs' ports and trunk fibres need %d, more than its %d", s, used[s], sw.ports)
	}
	if err := pl.checkCircuits(c.Circuits, "circuits"); err != nil {
		return nil, err
	}
	for i, ph := range c.Phases {
		if err := pl.checkCircuits(ph.Circuits, fmt.Sprintf("phases[%d].circuits", i)); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

func switchNames(sws []scenario.SwitchConfig) string {
	var ns []string
	for _, s := range sws {
		ns = append(ns, s.Name)
	}
	return strings.Join(ns, ", ")
}

func trunkKey(a, b int) [2]int { return [2]int{min(a, b), max(a, b)} }

// checkCircuits checks that every circuit of a set joining O-NICs on two
// switches has a trunk between them, and that the set needs no more of a
// trunk's fibres than it has. (Circuits naming no O-NIC are Build's to
// refuse.)
func (pl *switchPlan) checkCircuits(cs []scenario.CircuitConfig, path string) error {
	need := map[[2]int]int{}
	var keys [][2]int
	for i, cc := range cs {
		a, okA := pl.switchOf(cc.A)
		b, okB := pl.switchOf(cc.B)
		if !okA || !okB || a == b {
			continue
		}
		k := trunkKey(a, b)
		if _, ok := pl.trunks[k]; !ok {
			return fmt.Errorf("%s[%d]: %s and %s are on switches %q and %q, which no trunk joins (mems.trunks)",
				path, i, cc.A, cc.B, pl.switches[a].name, pl.switches[b].name)
		}
		if need[k] == 0 {
			keys = append(keys, k)
		}
		need[k]++
	}
	for _, k := range keys {
		if t := pl.trunks[k]; need[k] > t.fibres {
			return fmt.Errorf("%s: %d circuits between switches %q and %q, more than the %d fibres of their trunk",
				path, need[k], pl.switches[k[0]].name, pl.switches[k[1]].name, t.fibres)
		}
	}
	return nil
}

// switchOf is the switch of port ("onic.a").
func (pl *switchPlan) switchOf(port string) (int, bool) {
	on, _, _ := strings.Cut(port, ".")
	s, ok := pl.onic[on]
	return s, ok
}

// circuitTimes is how long a circuit between ports a and b stays dark
// when it changes, and how long of that its ends train: the later of its
// two switches (they move in parallel).
func (c *Cluster) circuitTimes(a, b *port) (reconfig, bringUp sim.Time) {
	s, t := c.switches[a.o.sw], c.switches[b.o.sw]
	return max(s.reconfig, t.reconfig), max(s.bringUp, t.bringUp)
}

// trunkM is the inter-cluster fibre a circuit between a and b crosses, in
// metres (0 on one switch).
func (c *Cluster) trunkM(a, b *port) float64 {
	if a.o.sw == b.o.sw {
		return 0
	}
	return c.trunks[trunkKey(a.o.sw, b.o.sw)].metres
}
