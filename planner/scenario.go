package planner

import (
	"fmt"
	"math"
	"slices"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/job"
	"onic/pcie/acl"
	"onic/pcie/manager"
	"onic/pcie/ntb"
)

// maxFlowBytes is the most a scenario flow's transfer carries; a bigger
// transfer is that many transfers at once.
const maxFlowBytes = 16 << 20

// StepTime is one communication step of the plan's timeline: when it
// starts, how long the plan says it takes, and the flows that carry it.
type StepTime struct {
	Stage     string        `json:"stage"`
	Iteration int           `json:"iteration"`
	Start     time.Duration `json:"start_ns"`
	Predicted time.Duration `json:"predicted_ns"`
	Emulated  time.Duration `json:"emulated_ns,omitempty"`
	flows     []string
}

// Scenario writes the plan as a scenario the emulator runs: the hosts
// the tasks run on, each with one O-NIC whose port A and port B windows
// (BAR2 at 0 and 1 GiB) lead to whatever host their circuit reaches, at
// 4 GiB; the plan's circuits, changed at each reconfiguration (with the
// switch's dark and bring-up time before the next stage); and a flow per
// transfer, started when the plan's timeline starts its step (compute is
// not emulated: its time passes idle). It returns the scenario and the
// timeline of steps. A plan whose transfers are relayed through O-NICs is
// refused: the writer does not configure relay windows.
func (p *Plan) Scenario() (scenario.Config, []StepTime, error) {
	m := p.m
	cl := m.cl
	// The hosts used, in cluster order.
	var used []int
	for h := range cl.Hosts {
		if slices.Contains(p.place, h) {
			used = append(used, h)
		}
	}
	if len(used) > 250 {
		return scenario.Config{}, nil, fmt.Errorf("plan uses %d hosts; the scenario writer numbers proxy IDs by bus, 250 at most", len(used))
	}
	c := scenario.Config{Name: "plan-" + p.Job, MEMS: scenario.MEMSConfig{Reconfig: cl.Reconfig, BringUp: cl.BringUp}}
	onic := map[int]string{}
	proxy := map[int]string{}
	for k, h := range used {
		onic[h] = "onic" + cl.Hosts[h].Name
		proxy[h] = fmt.Sprintf("%02x:00.0", k+1)
	}
	for _, h := range used {
		var peers []string
		for _, g := range used {
			if g != h {
				peers = append(peers, proxy[g][:2]+":00.0-"+proxy[g][:2]+":00.7")
			}
		}
		mem := []acl.RangeConfig{{Base: 1 << 32, Size: 1 << 30, Read: true, Write: true}}
		domains := []acl.DomainConfig{{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Egress: []string{"port-a", "port-b"}, Ranges: mem}}
		if len(peers) > 0 {
			domains = append(domains, acl.DomainConfig{Name: "peers", Requesters: peers, Ingress: []string{"port-a", "port-b"}, Egress: []string{"host"}, Ranges: mem})
		}
		c.Hosts = append(c.Hosts, scenario.HostConfig{Name: cl.Hosts[h].Name})
		c.ONICs = append(c.ONICs, scenario.ONICConfig{Name: onic[h], Host: cl.Hosts[h].Name, FibreM: [2]float64{10, 10},
			Manager: manager.Config{
				Translation: ntb.Config{
					Windows: []ntb.WindowConfig{
						{Name: "port-a", BAR: 2, Offset: 0, Size: 1 << 30, Egress: "port-a", Translated: 1 << 32},
						{Name: "port-b", BAR: 2, Offset: 1 << 30, Size: 1 << 30, Egress: "port-b", Translated: 1 << 32},
					},
					RID: ntb.RIDConfig{ProxyBase: proxy[h], Map: []string{"00:00.0"}},
				},
				Access: acl.Config{Domains: domains},
			}})
	}
	// The timeline: every iteration's stages in order.
	var steps []StepTime
	var ports map[circuit][][2]int
	portsOf := func(t Topology, prev map[circuit][][2]int) (map[circuit][][2]int, []scenario.CircuitConfig) {
		return assignPorts(t, prev, used, onic)
	}
	at := time.Duration(0)
	dark := cl.Reconfig + cl.BringUp
	var last *Topology
	flowN := 0
	for it := range p.Iterations {
		for s, t := range p.topos {
			if s < m.setup && it > 0 {
				continue // set-up: once
			}
			if last == nil || !last.equal(t) {
				var cs []scenario.CircuitConfig
				ports, cs = portsOf(t, ports)
				if last == nil {
					c.Circuits = cs
				} else {
					c.Phases = append(c.Phases, scenario.PhaseConfig{At: at, Circuits: cs})
					at += dark
				}
				tt := t
				last = &tt
			}
			at += m.compute(s, p.place)
			r := newRouter(t)
			for _, step := range m.stages[s].Steps {
				st := StepTime{Stage: m.stages[s].Name, Iteration: it, Start: at}
				d, _ := m.stepComm(step, p.place, t)
				if math.IsInf(d, 1) {
					return scenario.Config{}, nil, fmt.Errorf("stage %s: a transfer has no route", m.stages[s].Name)
				}
				st.Predicted = time.Duration(d * 1e9)
				for _, tr := range step {
					a, b := p.place[tr.From], p.place[tr.To]
					if a == b {
						continue
					}
					if dist, _ := r.from(a); dist[b] != 1 {
						return scenario.Config{}, nil, fmt.Errorf("stage %s: %s sends to %s through an O-NIC relay; the scenario writer does not configure relays (plan with --no-relay)",
							m.stages[s].Name, cl.Hosts[a].Name, cl.Hosts[b].Name)
					}
					pp := ports[circuit{min(a, b), max(a, b)}][0]
					port := pp[0]
					if a > b {
						port = pp[1]
					}
					n := (tr.Bytes + maxFlowBytes - 1) / maxFlowBytes
					size := (tr.Bytes + n - 1) / n
					name := fmt.Sprintf("f%d", flowN)
					flowN++
					c.Flows = append(c.Flows, scenario.FlowConfig{Name: name, Group: m.stages[s].Name, From: cl.Hosts[a].Name, Op: "write",
						Size: int(size), Transfers: int(n), Depth: int(n), Offset: uint64(port) << 30, Start: at})
					st.flows = append(st.flows, name)
				}
				steps = append(steps, st)
				at += st.Predicted
			}
		}
	}
	c.Duration = at + time.Millisecond
	return c, steps, nil
}

// circuit is a pair of hosts (a < b) a circuit joins.
type circuit struct{ a, b int }

// assignPorts puts topology t's circuits on the hosts' ports (0 for A, 1
// for B): a circuit that stays from prev keeps its ports (so it stays
// lit), new ones take the free ports; it returns the assignment and the
// circuits as the scenario names them.
func assignPorts(t Topology, prev map[circuit][][2]int, used []int, onic map[int]string) (map[circuit][][2]int, []scenario.CircuitConfig) {
	free := map[int][]int{}
	for _, h := range used {
		free[h] = []int{0, 1}
	}
	take := func(h, port int) { free[h] = slices.DeleteFunc(free[h], func(x int) bool { return x == port }) }
	now := map[circuit][][2]int{}
	need := map[circuit]int{}
	for _, e := range t.Circuits() {
		need[circuit{e[0], e[1]}]++
	}
	keys := make([]circuit, 0, len(need))
	for k := range need {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y circuit) int { return x.a*1000 + x.b - y.a*1000 - y.b })
	for _, k := range keys {
		for _, pp := range prev[k] {
			if len(now[k]) < need[k] {
				now[k] = append(now[k], pp)
				take(k.a, pp[0])
				take(k.b, pp[1])
			}
		}
	}
	for _, k := range keys {
		for len(now[k]) < need[k] {
			pa, pb := free[k.a][0], free[k.b][0]
			take(k.a, pa)
			take(k.b, pb)
			now[k] = append(now[k], [2]int{pa, pb})
		}
	}
	var out []scenario.CircuitConfig
	for _, k := range keys {
		for _, pp := range now[k] {
			out = append(out, scenario.CircuitConfig{A: onic[k.a] + "." + "ab"[pp[0]:pp[0]+1], B: onic[k.b] + "." + "ab"[pp[1]:pp[1]+1]})
		}
	}
	return now, out
}

// stepComm is one step's communication time in topology t.
func (m *model) stepComm(step job.Step, place []int, t Topology) (float64, bool) {
	one := *m
	one.stages = []job.Stage{{Steps: []job.Step{step}}}
	return one.comm(0, place, t)
}

// Validation compares the plan's step times with the emulator's.
type Validation struct {
	Steps      []StepTime         `json:"steps"`
	WorstError float64            `json:"worst_error"` // |emulated - predicted| / predicted, the worst step
	Accounting cluster.Accounting `json:"accounting"`
}

// Validate runs the plan's scenario in the emulator: each step's
// emulated time is its flows' longest transfer (all its transfers start
// together), against the plan's prediction; the accounting must show
// every TLP delivered — none held or dropped by a circuit the plan
// forgot.
func (p *Plan) Validate() (*Validation, error) {
	c, steps, err := p.Scenario()
	if err != nil {
		return nil, err
	}
	rep, err := cluster.Run(c)
	if err != nil {
		return nil, fmt.Errorf("validate: %v", err)
	}
	byName := map[string]cluster.FlowReport{}
	for _, f := range rep.Flows {
		byName[f.Name] = f
	}
	v := &Validation{Accounting: rep.Accounting}
	for i := range steps {
		st := &steps[i]
		for _, f := range st.flows {
			fr := byName[f]
			st.Emulated = max(st.Emulated, time.Duration(fr.MaxNs))
		}
		if st.Predicted > 0 {
			e := math.Abs(float64(st.Emulated-st.Predicted)) / float64(st.Predicted)
			v.WorstError = max(v.WorstError, e)
		}
	}
	v.Steps = steps
	a := rep.Accounting
	if a.Delivered != a.Injected || a.InFlight != 0 {
		return v, fmt.Errorf("validate: the emulator did not deliver everything: %d of %d TLPs delivered, %d dropped (%v), %d in flight",
			a.Delivered, a.Injected, a.Dropped, a.Reasons, a.InFlight)
	}
	return v, nil
}
