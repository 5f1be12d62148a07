// Package planner is FLEET's planner for onic (`onic plan`): it maps a
// job (package job) onto a cluster of hosts with O-NICs behind a MEMS
// circuit switch — which host runs each task, which circuits each stage
// has, where to reconfigure the switch between stages and where instead
// to keep a topology and relay through O-NICs' second ports — minimising
// the job's time, and writes the plan as a scenario the emulator runs
// (docs/plan.md).
//
// The cost model is fluid: in each communication step every transfer
// takes its bytes over its route, and the step lasts as long as its
// busiest resource needs — a host's links to its O-NICs (each way, at
// RateGbps each) or a circuit (each way, at PortGbps) — plus the route's
// hops at HopLatency. A
// transfer goes over a direct circuit when there is one, else over the
// shortest path of circuits, relayed port to port by the O-NICs between
// (FLEET's ring relay). A stage lasts its longest compute, then its
// steps one after another. Changing any circuit between two stages costs
// the switch's reconfiguration and bring-up time.
package planner

import (
	"fmt"
	"math"
	"slices"
	"time"

	"onic/desc"
	"onic/emu/scenario"
	"onic/job"
	"onic/pcie/lanes"
)

// Defaults of the cost model, measured on the emulator: an O-NIC's host
// side carries 102.4 Gb/s of 64 KiB DMA writes at MPS 256 each way — the
// PCIe block's 512-bit CQ and RQ interfaces at 250 MHz, straddling off,
// take a write's 16-byte descriptor and 256 bytes in five beats (PG213),
// below the 110.4 Gb/s the Gen3 x16 link itself carries (linkbench's
// model) — and a circuit on FLEET's lane plan 100.16 Gb/s each way with
// both ways busy (`onic emu run --duration 2ms`, two-party; the cards
// under --rtl carry the same): the optical link layer sends whole
// 512-bit words, five for a 256-byte write, and a control word for each
// Ack with its credits.
const (
	DefaultRateGbps = 102.4
	DefaultPortGbps = 100.16
	DefaultHop      = 2 * time.Microsecond
)

// PortGbpsOf is what a circuit carries on lane plan p between O-NICs
// whose user clock runs at clockMHz: DefaultPortGbps scaled by the
// plan's word rate against FLEET's (a word every 4 ns).
func PortGbpsOf(p lanes.Plan, clockMHz float64) float64 {
	return DefaultPortGbps * float64(lanes.Default.WordPS64(250)) / float64(p.WordPS64(clockMHz))
}

// Host is a place for tasks: a server or a GPU chassis slot with its
// O-NICs' ports.
type Host struct {
	Name  string
	Kind  string // gpu or cpu (a server)
	ONICs []string
	Ports int // optical ports, two an O-NIC
	// Tasks is how many tasks the host runs at once (a server's CPUs, a
	// GPU host's one; 0 counts as 1). Tasks on one host share its links
	// and its O-NICs' slots; what they send each other stays in memory.
	Tasks int
}

// capacity is how many tasks host h runs.
func (c *Cluster) capacity(h int) int { return max(1, c.Hosts[h].Tasks) }

// Cluster is what the planner plans onto.
type Cluster struct {
	Name       string
	Hosts      []Host
	RateGbps   float64       // an O-NIC's host link's rate, each way (a host's are its O-NICs')
	PortGbps   float64       // a circuit's rate, each way (0: DefaultPortGbps, FLEET's lane plan)
	HopLatency time.Duration // per circuit a transfer crosses
	Reconfig   time.Duration // the switch's dark time for a changed circuit
	BringUp    time.Duration // then the optics' and link's training
	KernelGbps float64       // an O-NIC kernel's rate (0: DefaultKernelGbps)
	KernelLoad time.Duration // loading a kernel into a slot (0: DefaultKernelLoad)
	Slots      int           // kernel slots an O-NIC (0: DefaultSlots)
}

// FromScenario takes the hosts and switch of a scenario (its flows,
// circuits and phases are what the planner chooses): every host with at
// least one O-NIC, a server counting as a cpu host running a task per
// CPU (its O-NICs over onics_per_cpu), a gpu host as gpu running one.
func FromScenario(c scenario.Config) (*Cluster, error) {
	cl := &Cluster{Name: c.Name, RateGbps: DefaultRateGbps, HopLatency: DefaultHop,
		Reconfig: c.MEMS.Reconfig, BringUp: c.MEMS.BringUp}
	if cl.Reconfig == 0 {
		cl.Reconfig = scenario.DefaultReconfig
	}
	if cl.BringUp == 0 {
		cl.BringUp = scenario.DefaultBringUp
	}
	onics := map[string][]string{}
	cl.PortGbps = DefaultPortGbps
	for i, o := range c.ONICs {
		onics[o.Host] = append(onics[o.Host], o.Name)
		// What the entry means is decided in desc, as for the emulator.
		d, err := desc.FromScenario(o, fmt.Sprintf("cluster %s: onics[%d]", c.Name, i))
		if err != nil {
			return nil, err
		}
		cl.PortGbps = min(cl.PortGbps, PortGbpsOf(d.Lanes, d.ClockMHz))
	}
	for _, h := range c.Hosts {
		kind := "cpu"
		switch h.Kind {
		case "gpu":
			kind = "gpu"
		case "", "server":
		default:
			continue // sensors and drives run no tasks
		}
		if len(onics[h.Name]) == 0 {
			continue
		}
		tasks := 1
		if kind == "cpu" { // a CPU a root complex of onics_per_cpu O-NICs
			per := h.ONICsPerCPU
			if per == 0 {
				per = 3
			}
			tasks = (len(onics[h.Name]) + per - 1) / per
		}
		cl.Hosts = append(cl.Hosts, Host{Name: h.Name, Kind: kind, ONICs: onics[h.Name], Ports: 2 * len(onics[h.Name]), Tasks: tasks})
	}
	if len(cl.Hosts) == 0 {
		return nil, fmt.Errorf("cluster %s: no host with an O-NIC to run tasks", c.Name)
	}
	return cl, nil
}

// Topology is a set of circuits between hosts: Count[a][b] circuits join
// host a and host b (a != b), at most each host's ports in all.
type Topology struct {
	Count [][]int8
}

func newTopology(n int) Topology {
	t := Topology{Count: make([][]int8, n)}
	for i := range t.Count {
		t.Count[i] = make([]int8, n)
	}
	return t
}

func (t Topology) clone() Topology {
	u := Topology{Count: make([][]int8, len(t.Count))}
	for i := range t.Count {
		u.Count[i] = slices.Clone(t.Count[i])
	}
	return u
}

func (t Topology) degree(a int) int {
	d := 0
	for _, c := range t.Count[a] {
		d += int(c)
	}
	return d
}

func (t Topology) equal(u Topology) bool {
	for i := range t.Count {
		if !slices.Equal(t.Count[i], u.Count[i]) {
			return false
		}
	}
	return true
}

// Circuits lists the topology's circuits as host index pairs, a < b, one
// entry a circuit.
func (t Topology) Circuits() [][2]int {
	var out [][2]int
	for a := range t.Count {
		for b := a + 1; b < len(t.Count); b++ {
			for range t.Count[a][b] {
				out = append(out, [2]int{a, b})
			}
		}
	}
	return out
}

// model is a job on a cluster with the tasks placed: the costs the
// search asks for.
type model struct {
	cl      *Cluster
	j       *job.Job
	stages  []job.Stage
	bps     float64   // a host link's bytes per second
	port    float64   // a circuit's
	noRelay bool      // a transfer needs a direct circuit
	res     residency // the kernels resident for the placement being costed
	setup   int       // the leading stages that run once, before the iterations
	// deadlines: minimise the transfers' weighted lateness (CadentFlow),
	// then time.
	deadlines bool
}

func newModel(cl *Cluster, j *job.Job) *model {
	port := cl.PortGbps
	if port == 0 {
		port = DefaultPortGbps
	}
	m := &model{cl: cl, j: j, stages: j.Expand(), bps: cl.RateGbps * 1e9 / 8, port: port * 1e9 / 8}
	for m.setup < len(j.Stages) && j.Stages[m.setup].Once {
		m.setup++
	}
	return m
}

// compute is stage s's longest compute with task i on host place[i].
func (m *model) compute(s int, place []int) time.Duration {
	var worst time.Duration
	for i, c := range m.stages[s].Compute {
		if c == nil {
			continue
		}
		d := m.hostTime(s, i, place[i])
		if k := m.stages[s].Kernels[i]; k.Name != "" && m.res.on != nil && m.res.on[i][k.Name] {
			d = min(d, m.kernelTime(k.Bytes))
		}
		worst = max(worst, d)
	}
	return worst
}

// router finds routes in a topology: breadth first from each source it
// is asked about, once (a host has few circuits, so a source costs about
// the number of hosts). Among equally short routes it takes the one
// whose hosts come first by the tasks they run (a host's lowest task;
// hosts that run none after, by number), so that renumbering hosts that
// are alike, with the placement and the topology renumbered with them,
// routes alike and costs the same: what the exact search's canonical
// placements rely on.
type router struct {
	adj        [][]int
	dist, next map[int][]int
}

func newRouter(t Topology, place []int) *router {
	n := len(t.Count)
	key := make([]int, n)
	for h := range key {
		key[h] = len(place) + h
	}
	for i, h := range place {
		key[h] = min(key[h], i)
	}
	r := &router{adj: make([][]int, n), dist: map[int][]int{}, next: map[int][]int{}}
	for a, row := range t.Count {
		for b, c := range row {
			if c > 0 {
				r.adj[a] = append(r.adj[a], b)
			}
		}
		slices.SortFunc(r.adj[a], func(x, y int) int { return key[x] - key[y] })
	}
	return r
}

// from returns hop counts and first hops from host a (-1: unreachable).
func (r *router) from(a int) (dist, next []int) {
	if d, ok := r.dist[a]; ok {
		return d, r.next[a]
	}
	n := len(r.adj)
	dist, next = make([]int, n), make([]int, n)
	for i := range n {
		dist[i], next[i] = -1, -1
	}
	dist[a] = 0
	q := []int{a}
	for len(q) > 0 {
		x := q[0]
		q = q[1:]
		for _, y := range r.adj[x] {
			if dist[y] < 0 {
				dist[y] = dist[x] + 1
				if x == a {
					next[y] = y
				} else {
					next[y] = next[x]
				}
				q = append(q, y)
			}
		}
	}
	r.dist[a], r.next[a] = dist, next
	return dist, next
}

// comm is stage s's communication time in topology t with the tasks
// placed, and whether any transfer needed a relay; +Inf when a transfer
// has no route.
func (m *model) comm(s int, place []int, t Topology) (d float64, relays bool) {
	d, relays, _ = m.commLate(s, place, t, 0)
	return d, relays
}

// commLate is comm, and the weighted lateness of the stage's transfers
// that have deadlines when its communication starts at start seconds
// into the stage: a transfer arrives when the busiest resource it uses
// has carried its step's load (no transfer is favoured over another on a
// resource), and is late by how far that is past its deadline.
func (m *model) commLate(s int, place []int, t Topology, start float64) (d float64, relays bool, late float64) {
	r := newRouter(t, place)
	n := len(t.Count)
	for _, step := range m.stages[s].Steps {
		out, in := make([]float64, n), make([]float64, n)
		link := map[[2]int]float64{}
		hops := 0
		for _, tr := range step {
			a, b := place[tr.From], place[tr.To]
			if a == b {
				continue // the same host: its memory
			}
			dist, _ := r.from(a)
			if dist[b] < 0 || m.noRelay && dist[b] > 1 {
				return math.Inf(1), relays, math.Inf(1)
			}
			if dist[b] > 1 {
				relays = true
			}
			by := float64(tr.Bytes)
			out[a] += by
			in[b] += by
			for x := a; x != b; {
				_, next := r.from(x)
				y := next[b]
				link[[2]int{x, y}] += by / float64(t.Count[x][y])
				if y != b {
					// An O-NIC relays as its relay ranges do, FLEET's ring
					// multicast: it keeps a copy for its own host too, so
					// its host link carries the transfer as well.
					in[y] += by
				}
				x = y
			}
			hops = max(hops, dist[b])
		}
		links := func(i int) float64 { return float64(len(m.cl.Hosts[i].ONICs)) * m.bps }
		worst := 0.0 // seconds
		for i := range n {
			worst = max(worst, out[i]/links(i), in[i]/links(i))
		}
		for _, v := range link {
			worst = max(worst, v/m.port)
		}
		for _, tr := range step {
			if tr.Deadline <= 0 {
				continue
			}
			a, b := place[tr.From], place[tr.To]
			at := start + d // (a transfer within a host arrives at once)
			if a != b {
				dist, _ := r.from(a)
				own := max(out[a]/links(a), in[b]/links(b))
				for x := a; x != b; {
					_, next := r.from(x)
					y := next[b]
					own = max(own, link[[2]int{x, y}]/m.port, in[y]/links(y))
					x = y
				}
				at += own + float64(dist[b])*m.cl.HopLatency.Seconds()
			}
			late += tr.Weight * max(0, at-tr.Deadline.Seconds())
		}
		if worst > 0 {
			d += worst + float64(hops)*m.cl.HopLatency.Seconds()
		}
	}
	return d, relays, late
}

// stageCost is what the search minimises for stage s: its time, and
// under the deadlines objective first its weighted lateness (counted a
// million times a second of time, so time only breaks ties).
func (m *model) stageCost(s int, place []int, t Topology) float64 {
	if !m.deadlines {
		return m.stageTime(s, place, t)
	}
	c := m.compute(s, place).Seconds()
	d, _, late := m.commLate(s, place, t, c)
	return c + d + 1e6*late
}

// stageTime is stage s's time in seconds.
func (m *model) stageTime(s int, place []int, t Topology) float64 {
	c, _ := m.comm(s, place, t)
	return m.compute(s, place).Seconds() + c
}

// switchTime is what changing the circuits costs, in seconds.
func (m *model) switchTime() float64 { return (m.cl.Reconfig + m.cl.BringUp).Seconds() }

// Uniform is a cluster of n hosts of kind with one O-NIC each (two
// ports), behind FLEET's MEMS switch: FLEET's GPUs, each with its own
// O-NIC in a device chassis, or single-O-NIC servers.
func Uniform(n int, kind string) *Cluster {
	c := &Cluster{Name: fmt.Sprintf("%d %s hosts", n, kind), RateGbps: DefaultRateGbps, PortGbps: DefaultPortGbps, HopLatency: DefaultHop,
		Reconfig: scenario.DefaultReconfig, BringUp: scenario.DefaultBringUp}
	for i := range n {
		name := fmt.Sprintf("%s%d", kind, i)
		c.Hosts = append(c.Hosts, Host{Name: name, Kind: kind, ONICs: []string{"onic-" + name}, Ports: 2})
	}
	return c
}
