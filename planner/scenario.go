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

// splitBytes is the piece a transfer split over parallel circuits is
// sent in.
const splitBytes = 256 << 10

// StepTime is one communication step of the plan's timeline: when it
// starts, how long the plan says it takes, and the flows that carry it.
type StepTime struct {
	Stage     string        `json:"stage"`
	Iteration int           `json:"iteration"`
	Start     time.Duration `json:"start_ns"`
	Predicted time.Duration `json:"predicted_ns"`
	Emulated  time.Duration `json:"emulated_ns,omitempty"`
	flows     []string
	// pieces are the flows that send their part of a transfer in pieces
	// one after another: their time is their pieces' added up.
	pieces map[string]bool
}

// Scenario writes the plan as a scenario the emulator runs: the hosts
// the tasks run on, each with one O-NIC whose port A and port B windows
// (BAR2 at 0 and 1 GiB) lead to whatever host their circuit reaches, at
// 4 GiB; the plan's circuits, changed at each reconfiguration (with the
// switch's dark and bring-up time before the next stage); and a flow per
// transfer, started when the plan's timeline starts its step (compute is
// not emulated: its time passes idle). It returns the scenario and the
// timeline of steps.
//
// A transfer the plan relays through O-NICs (FLEET's ring relay: in at
// one port, out at the other) is written to an address of its own: each
// destination host k has a relay region (relayBase + k*relaySpan), which
// the sender reaches through a relay window on the port toward the first
// hop, each O-NIC on the way relays from the port the transfer enters by
// (a manager relay range), and the destination takes into its memory.
// The access tables let the peers' writes be relayed within those
// regions and nothing else.
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
	relaying := slices.ContainsFunc(p.Phases, func(ph Phase) bool { return ph.Relays })
	if relaying && len(used) > relayHosts {
		return scenario.Config{}, nil, fmt.Errorf("plan relays among %d hosts; the scenario writer gives relay regions to %d at most (plan with --no-relay)", len(used), relayHosts)
	}
	c := scenario.Config{Name: "plan-" + p.Job, MEMS: scenario.MEMSConfig{Reconfig: cl.Reconfig, BringUp: cl.BringUp}}
	onic := map[int]string{}
	proxy := map[int]string{}
	index := map[int]int{} // host -> its O-NIC's (and its relay region's) index
	for k, h := range used {
		onic[h] = "onic" + cl.Hosts[h].Name
		proxy[h] = fmt.Sprintf("%02x:00.0", k+1)
		index[h] = k
	}
	c.Hosts, c.ONICs = onicsOf(cl, used, onic, proxy, relaying)
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
					// The circuits change a hop's latency after the last
					// step's predicted end: what is still on the fibre lands
					// first.
					at += cl.HopLatency
					c.Phases = append(c.Phases, scenario.PhaseConfig{At: at, Circuits: cs})
					at += dark
				}
				tt := t
				last = &tt
			}
			at += m.compute(s, p.place)
			r := newRouter(t, p.place)
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
					path, err := pathOf(r, ports, a, b)
					if err != nil {
						return scenario.Config{}, nil, fmt.Errorf("stage %s: %s to %s: %v", m.stages[s].Name, cl.Hosts[a].Name, cl.Hosts[b].Name, err)
					}
					// A direct transfer over parallel circuits is split
					// across them, as the model has it (stepComm).
					outs := []int{path[0].out}
					if pp := ports[circuit{min(a, b), max(a, b)}]; len(path) == 1 && len(pp) > 1 {
						end := 0 // a circuit's ports are the lower host's, then the higher's
						if a > b {
							end = 1
						}
						outs = outs[:0]
						for _, q := range pp {
							outs = append(outs, q[end])
						}
					}
					for k, out := range outs {
						bytes := tr.Bytes / int64(len(outs))
						if k == 0 {
							bytes += tr.Bytes % int64(len(outs))
						}
						path[0].out = out
						flowN = addFlow(&c, &st, path, bytes, len(outs) > 1, flowN, m.stages[s].Name, cl.Hosts[a].Name, at, index[b], index)
					}
				}
				steps = append(steps, st)
				at += st.Predicted
			}
		}
	}
	c.Duration = at + time.Millisecond
	return c, steps, nil
}

// addFlow adds to c the flows (of at most maxFlowBytes a transfer) that
// carry bytes along path into the host whose O-NIC's index is dst, from
// at, for step st, naming them from flowN on; it returns the next
// flow's number.
func addFlow(c *scenario.Config, st *StepTime, path []hop, bytes int64, split bool, flowN int, group, from string, at time.Duration, dst int, index map[int]int) int {
	offset, span := uint64(path[0].out)<<30, uint64(0) // direct: the port's window, its default span
	if len(path) > 1 {
		// Relayed: into the destination's relay region, relayed on by
		// each O-NIC on the way from the port it comes in by.
		offset, span = relayWindow(path[0].out)+uint64(dst)*relaySpan, relaySpan
		for _, hop := range path[1:] {
			rc := manager.RelayConfig{From: "port-" + "ab"[hop.in:hop.in+1], Base: relayBase + uint64(dst)*relaySpan, Size: relaySpan}
			o := &c.ONICs[index[hop.host]].Manager
			if !slices.Contains(o.Relay, rc) {
				o.Relay = append(o.Relay, rc)
			}
		}
	}
	n := (bytes + maxFlowBytes - 1) / maxFlowBytes
	depth := n
	if split {
		// Part of a transfer split over parallel circuits: in pieces,
		// a few at a time, so that the host interleaves the parts (one
		// part's whole transfer queued first would hold the others
		// behind its port's egress).
		n, depth = (bytes+splitBytes-1)/splitBytes, 1
	}
	size := (bytes + n - 1) / n
	name := fmt.Sprintf("f%d", flowN)
	c.Flows = append(c.Flows, scenario.FlowConfig{Name: name, Group: group, From: from, Op: "write",
		Size: int(size), Transfers: int(n), Depth: int(min(n, depth)), Offset: offset, Span: span, Start: at})
	if split {
		if st.pieces == nil {
			st.pieces = map[string]bool{}
		}
		st.pieces[name] = true
	}
	st.flows = append(st.flows, name)
	return flowN + 1
}

// onicsOf is the hosts used and an O-NIC for each: a window out of each
// port (and with relaying, a relay window out of each) into the peers'
// memory at 4 GiB, and access tables that let the host write out of both
// ports and its peers write into its memory (and relay within the relay
// regions).
func onicsOf(cl *Cluster, used []int, onic, proxy map[int]string, relaying bool) ([]scenario.HostConfig, []scenario.ONICConfig) {
	var hosts []scenario.HostConfig
	var onics []scenario.ONICConfig
	for _, h := range used {
		var peers []string
		for _, g := range used {
			if g != h {
				peers = append(peers, proxy[g][:2]+":00.0-"+proxy[g][:2]+":00.7")
			}
		}
		mem := []acl.RangeConfig{{Base: 1 << 32, Size: 1 << 30, Read: true, Write: true}}
		windows := []ntb.WindowConfig{
			{Name: "port-a", BAR: 2, Offset: 0, Size: 1 << 30, Egress: "port-a", Translated: 1 << 32},
			{Name: "port-b", BAR: 2, Offset: 1 << 30, Size: 1 << 30, Egress: "port-b", Translated: 1 << 32},
		}
		peerEgress := []string{"host"}
		if relaying {
			mem = append(mem, acl.RangeConfig{Base: relayBase, Size: relayHosts * relaySpan, Read: true, Write: true})
			for port, name := range []string{"port-a", "port-b"} {
				windows = append(windows, ntb.WindowConfig{Name: name + "-relay", BAR: 2, Offset: relayWindow(port), Size: relayHosts * relaySpan,
					Egress: name, Translated: relayBase})
			}
			peerEgress = append(peerEgress, "port-a", "port-b") // relayed on, within the relay regions
		}
		domains := []acl.DomainConfig{{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Egress: []string{"port-a", "port-b"}, Ranges: mem}}
		if len(peers) > 0 {
			domains = append(domains, acl.DomainConfig{Name: "peers", Requesters: peers, Ingress: []string{"port-a", "port-b"}, Egress: peerEgress, Ranges: mem})
		}
		hosts = append(hosts, scenario.HostConfig{Name: cl.Hosts[h].Name})
		onics = append(onics, scenario.ONICConfig{Name: onic[h], Host: cl.Hosts[h].Name, FibreM: [2]float64{10, 10},
			Manager: manager.Config{
				Translation: ntb.Config{
					Windows: windows,
					RID:     ntb.RIDConfig{ProxyBase: proxy[h], Map: []string{"00:00.0"}},
				},
				Access: acl.Config{Domains: domains},
			}})
	}
	return hosts, onics
}

// Relay regions: a relayed transfer to the k-th host the plan uses lands
// at relayBase + k*relaySpan (room for one transfer of maxFlowBytes,
// rounded up to a whole page, twice over), which the sender reaches
// through a relay window per port in BAR2 (relayWindow).
const (
	relayBase  = 8 << 30
	relaySpan  = 2 * maxFlowBytes
	relayHosts = 128
)

// relayWindow is where in BAR2 the relay window of port (0: A, 1: B)
// starts: after the two direct windows, each relayHosts regions long.
func relayWindow(port int) uint64 { return 4<<30 + uint64(port)*relayHosts*relaySpan }

// hop is a host on a transfer's path: the port it is entered by (the
// sender's: -1) and the port it sends on by (the receiver's: -1).
type hop struct{ host, in, out int }

// pathOf is the path of circuits from host a to host b in r's topology,
// with the ports each host on it uses (ports, as assignPorts gives them):
// one hop for a direct circuit, and through each relaying O-NIC in at one
// port and out at the other, as FLEET's ring relay goes. An O-NIC that
// would have to send a transfer back out of the port it came in by
// cannot relay it: that is an error.
func pathOf(r *router, ports map[circuit][][2]int, a, b int) ([]hop, error) {
	portOn := func(x, y int) int { // x's port on its circuit with y
		pp := ports[circuit{min(x, y), max(x, y)}][0]
		if x < y {
			return pp[0]
		}
		return pp[1]
	}
	if dist, _ := r.from(a); dist[b] < 1 {
		return nil, fmt.Errorf("no route")
	}
	path := []hop{{host: a, in: -1}}
	for x := a; x != b; {
		_, next := r.from(x)
		y := next[b]
		path[len(path)-1].out = portOn(x, y)
		path = append(path, hop{host: y, in: portOn(y, x), out: -1})
		x = y
	}
	for _, h := range path[1 : len(path)-1] {
		if h.in == h.out {
			return nil, fmt.Errorf("the relay at host %d would send back out of the port it came in by", h.host)
		}
	}
	return path[:len(path)-1], nil
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
			d := time.Duration(fr.MaxNs)
			if st.pieces[f] {
				// One piece at a time, each about the median's time.
				d = time.Duration(fr.P50Ns * float64(fr.Transfers))
			}
			st.Emulated = max(st.Emulated, d)
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
