package cluster

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"onic/emu/scenario"
	"onic/emu/sim"
)

// Parts splits c into the parts of the cluster that never exchange a
// TLP: hosts, with their O-NICs, joined by a circuit at any time of the
// run (the initial circuits and every phase's) are in one part. Each
// part is a scenario of its own — its hosts, O-NICs and flows, the
// circuits among them, every phase with its circuits among them — that
// runs exactly as it would inside c, event for event. It returns nil
// when c is one part, or when a flow group spans parts (its latency
// percentiles need every member's transfers).
func Parts(c scenario.Config) []scenario.Config {
	host := map[string]int{}
	for i, h := range c.Hosts {
		host[h.Name] = i
	}
	parent := make([]int, len(c.Hosts))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	onicHost := map[string]int{}
	for _, o := range c.ONICs {
		h, ok := host[o.Host]
		if !ok {
			return nil // (Build names the error)
		}
		onicHost[o.Name] = h
	}
	hostOf := func(port string) (int, bool) {
		on, _, _ := strings.Cut(port, ".")
		h, ok := onicHost[on]
		return h, ok
	}
	join := func(cs []scenario.CircuitConfig) bool {
		for _, cc := range cs {
			a, okA := hostOf(cc.A)
			b, okB := hostOf(cc.B)
			if !okA || !okB {
				return false
			}
			parent[find(a)] = find(b)
		}
		return true
	}
	if !join(c.Circuits) {
		return nil
	}
	for _, ph := range c.Phases {
		if !join(ph.Circuits) {
			return nil
		}
	}
	part := map[int]int{} // root -> part index, in the order of the hosts
	for i := range c.Hosts {
		if _, ok := part[find(i)]; !ok {
			part[find(i)] = len(part)
		}
	}
	if len(part) < 2 {
		return nil
	}
	group := map[string]int{}
	for _, f := range c.Flows {
		h, ok := host[f.From]
		if !ok {
			return nil
		}
		if f.Group == "" {
			continue
		}
		if p, seen := group[f.Group]; seen && p != part[find(h)] {
			return nil
		}
		group[f.Group] = part[find(h)]
	}
	parts := make([]scenario.Config, len(part))
	for i := range parts {
		parts[i] = scenario.Config{Name: c.Name, Duration: c.Duration, MEMS: c.MEMS, Fidelity: c.Fidelity}
		for _, ph := range c.Phases {
			parts[i].Phases = append(parts[i].Phases, scenario.PhaseConfig{At: ph.At})
		}
	}
	pOf := func(h int) int { return part[find(h)] }
	for i, h := range c.Hosts {
		parts[pOf(i)].Hosts = append(parts[pOf(i)].Hosts, h)
	}
	for _, o := range c.ONICs {
		p := pOf(onicHost[o.Name])
		parts[p].ONICs = append(parts[p].ONICs, o)
	}
	for _, cc := range c.Circuits {
		h, _ := hostOf(cc.A)
		parts[pOf(h)].Circuits = append(parts[pOf(h)].Circuits, cc)
	}
	for k, ph := range c.Phases {
		for _, cc := range ph.Circuits {
			h, _ := hostOf(cc.A)
			parts[pOf(h)].Phases[k].Circuits = append(parts[pOf(h)].Phases[k].Circuits, cc)
		}
	}
	for _, f := range c.Flows {
		p := pOf(host[f.From])
		parts[p].Flows = append(parts[p].Flows, f)
	}
	for _, fc := range c.Faults {
		on, _, _ := strings.Cut(fc.Port, ".")
		h, ok := onicHost[on]
		if !ok {
			return nil
		}
		parts[pOf(h)].Faults = append(parts[pOf(h)].Faults, fc)
	}
	return parts
}

// RunParallel runs c as Run does, on up to threads goroutines: split into
// the parts that never exchange a TLP (Parts), each built and run on its
// own event queue, their reports merged into c's. The report is Run's,
// byte for byte, for any threads, but for the wall-clock speed (the
// events and TLPs it counts are the same). A cluster of one part runs as
// Run runs it.
//
// While it runs, the garbage collector's target is raised to
// parallelGCPercent unless the GOGC environment variable sets one: the
// parts' clusters grow their pools as they start, and with every core
// simulating, the collections that growth set off (their write barriers
// and marking) took a third of the time and held two threads to 1.64
// times one's speed (BenchmarkPairs384).
func RunParallel(c scenario.Config, threads int) (Report, error) {
	parts := Parts(c)
	if parts == nil || threads < 1 {
		return Run(c)
	}
	// Each part sees only its own O-NICs on the switches and trunks:
	// the ports and fibres they take together are the whole's to check.
	if _, err := planSwitches(c); err != nil {
		return Report{}, err
	}
	defer raiseGC()()
	start := time.Now()
	reps := make([]Report, len(parts))
	stalls := make([][]sim.Time, len(parts))
	errs := make([]error, len(parts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(threads, len(parts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cl, err := Build(parts[i])
				if err == nil {
					reps[i], err = cl.Run()
				}
				errs[i] = err
				if err == nil {
					for _, ph := range cl.phases {
						stalls[i] = append(stalls[i], ph.stall)
					}
				}
			}
		}()
	}
	for i := range parts {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			// Say it as the whole would, naming the whole's fields
			// (flows[12], not a part's flows[0]).
			whole, werr := Build(c)
			if werr == nil {
				werr = whole.afterEnd()
			}
			if werr != nil {
				return Report{}, werr
			}
			return Report{}, fmt.Errorf("part %d of %s: %v", i, c.Name, err)
		}
	}
	return merge(c, reps, stalls, time.Since(start).Seconds())
}

// merge is c's report from its parts' reports, in c's order.
func merge(c scenario.Config, reps []Report, stalls [][]sim.Time, wall float64) (Report, error) {
	rep := Report{Scenario: c.Name, SimulatedS: reps[0].SimulatedS}
	flows := map[string]FlowReport{}
	groups := map[string]FlowReport{}
	hosts := map[string]HostReport{}
	onics := map[string]ONICReport{}
	a := &rep.Accounting
	for _, r := range reps {
		for _, f := range r.Flows {
			flows[f.Name] = f
		}
		for _, g := range r.Groups {
			groups[g.Name] = g
		}
		for _, h := range r.Hosts {
			hosts[h.Name] = h
		}
		for _, o := range r.ONICs {
			onics[o.Name] = o
		}
		b := r.Accounting
		a.Injected += b.Injected
		a.Delivered += b.Delivered
		a.ErrorStatus += b.ErrorStatus
		a.Denied += b.Denied
		a.Unsupported += b.Unsupported
		a.Dropped += b.Dropped
		a.InFlight += b.InFlight
		for k, n := range b.Reasons {
			if a.Reasons == nil {
				a.Reasons = map[string]uint64{}
			}
			a.Reasons[k] += n
		}
		rep.Speed.Events += r.Speed.Events
		rep.Speed.TLPs += r.Speed.TLPs
		rep.Fidelity, rep.TransferHeld = r.Fidelity, r.TransferHeld
		rep.TransferWindows += r.TransferWindows
		rep.TransferShare += r.TransferShare * float64(len(r.ONICs)) / float64(len(c.ONICs)) // weighed by O-NICs
	}
	for _, f := range c.Flows {
		rep.Flows = append(rep.Flows, flows[f.Name])
		if g := f.Group; g != "" && !slices.ContainsFunc(rep.Groups, func(x FlowReport) bool { return x.Name == g }) {
			rep.Groups = append(rep.Groups, groups[g])
		}
	}
	for _, h := range c.Hosts {
		rep.Hosts = append(rep.Hosts, hosts[h.Name])
	}
	for _, o := range c.ONICs {
		rep.ONICs = append(rep.ONICs, onics[o.Name])
	}
	// A phase is one reconfiguration however many parts it lit circuits
	// in; it stalls for as long as its longest dark circuit, in whichever
	// part (as reconfigure adds it up).
	var stall sim.Time
	for k := range c.Phases {
		var longest sim.Time
		for _, st := range stalls {
			if k < len(st) {
				longest = max(longest, st[k])
			}
		}
		if longest > 0 {
			rep.Reconfigurations++
			stall += longest
		}
	}
	rep.StallS = float64(stall) / float64(sim.Second)
	rep.Speed.WallSeconds = wall
	if wall > 0 {
		rep.Speed.TLPsPerSecond = float64(rep.Speed.TLPs) / wall
		rep.Speed.SimulatedRatio = rep.SimulatedS / wall
	}
	return rep, nil
}

// parallelGCPercent is the collector's target (GOGC) while RunParallel
// runs: the heap may grow to five times what is live (the clusters' pools
// and records, bounded by the cluster: docs/emu.md).
const parallelGCPercent = 400

// gcRaised counts the RunParallel calls running, so that the first sets
// the collector's target and the last puts the one before it back.
var gcRaised struct {
	sync.Mutex
	runs, prev int
}

// raiseGC raises the collector's target for a run unless GOGC is set,
// and returns what puts it back.
func raiseGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	gcRaised.Lock()
	defer gcRaised.Unlock()
	if gcRaised.runs == 0 {
		gcRaised.prev = debug.SetGCPercent(parallelGCPercent)
	}
	gcRaised.runs++
	return func() {
		gcRaised.Lock()
		defer gcRaised.Unlock()
		if gcRaised.runs--; gcRaised.runs == 0 {
			debug.SetGCPercent(gcRaised.prev)
		}
	}
}
