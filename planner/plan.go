package planner

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"onic/job"
)

// Options steer a plan.
type Options struct {
	// Static keeps one topology for the whole job (no reconfiguration).
	Static bool
	// TimeLimit bounds the heuristic's improvement (default 10 s).
	TimeLimit time.Duration
	// Seed seeds the heuristic's moves (the same seed, the same plan).
	Seed uint64
	// ExactHosts is the most hosts the exact method searches every
	// placement (up to renumbering alike hosts) and every topology of
	// (default 4; eight hosts of one O-NIC plan in about 2 s); above, or
	// past MaxExactTopologies, the heuristic.
	ExactHosts int
	// NoRelay forbids relaying through O-NICs: every transfer needs a
	// direct circuit (O-NICs without relay windows).
	NoRelay bool
	// Objective is "time" (default: the job's time) or "deadlines": the
	// sum over the transfers that have deadlines of weight × how late
	// they arrive, as CadentFlow proposes, then the job's time.
	Objective string
}

// Phase is consecutive stages that share one topology.
type Phase struct {
	Stages   []int       `json:"stages"`         // stage indices
	Names    []string    `json:"names"`          // their names
	Circuits [][2]string `json:"circuits"`       // host pairs, a circuit each
	Seconds  float64     `json:"seconds"`        // its stages' time, one iteration
	Relays   bool        `json:"relays"`         // a transfer crosses an O-NIC relay
	Once     bool        `json:"once,omitempty"` // set-up stages, before the first iteration
	topo     Topology
}

// Plan is where each task runs and which circuits each stage has.
type Plan struct {
	Job       string            `json:"job"`
	Cluster   string            `json:"cluster"`
	Method    string            `json:"method"` // exact or heuristic
	Objective string            `json:"objective"`
	Placement map[string]string `json:"placement"` // task -> host
	Phases    []Phase           `json:"phases"`
	// Reconfigurations per iteration, counting the one back to the first
	// phase's circuits between iterations.
	Reconfigurations int `json:"reconfigurations_per_iteration"`
	// Kernels are the O-NIC kernels the job may use: those kept in
	// slots (loaded before it starts, LoadSeconds on the busiest O-NIC)
	// and those left to the hosts.
	Kernels          []KernelPlan `json:"kernels,omitempty"`
	LoadSeconds      float64      `json:"kernel_load_seconds,omitempty"`
	IterationSeconds float64      `json:"iteration_seconds"` // an iteration, its reconfigurations included
	TotalSeconds     float64      `json:"total_seconds"`     // every iteration; the first topology is set up before
	// LateSeconds is the weighted lateness of the transfers that have
	// deadlines, over the whole job (the deadlines objective's value).
	LateSeconds float64 `json:"late_seconds"`
	Iterations  int     `json:"iterations"`
	place       []int
	topos       []Topology // per stage
	m           *model
}

// Make plans job j on cluster cl.
func Make(cl *Cluster, j *job.Job, o Options) (*Plan, error) {
	if o.TimeLimit == 0 {
		o.TimeLimit = 10 * time.Second
	}
	if o.ExactHosts == 0 {
		o.ExactHosts = 4
	}
	room := 0
	for h := range cl.Hosts {
		room += cl.capacity(h)
	}
	if len(j.Tasks) > room {
		return nil, fmt.Errorf("job %s has %d tasks and cluster %s room for %d on its %d hosts with O-NICs", j.Name, len(j.Tasks), cl.Name, room, len(cl.Hosts))
	}
	for i, t := range j.Tasks {
		if t.Kind == "" {
			continue
		}
		n := 0
		for h, host := range cl.Hosts {
			if host.Kind == t.Kind {
				n += cl.capacity(h)
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("tasks[%d] (%s) needs a %s host; cluster %s has none with an O-NIC", i, t.Name, t.Kind, cl.Name)
		}
	}
	m := newModel(cl, j)
	m.noRelay = o.NoRelay
	switch o.Objective {
	case "", "time":
	case "deadlines":
		m.deadlines = true
	default:
		return nil, fmt.Errorf("objective %q: time or deadlines", o.Objective)
	}
	if err := checkKernels(m); err != nil {
		return nil, err
	}
	var best *candidate
	method := "heuristic"
	if len(cl.Hosts) <= o.ExactHosts && m.topologiesWithin(MaxExactTopologies) {
		method = "exact"
		best = m.exact(o.Static)
	} else {
		best = m.heuristic(o)
	}
	if best == nil || math.IsInf(best.total, 1) {
		return nil, fmt.Errorf("job %s: no placement and topology on cluster %s carries every transfer (too few ports, or tasks needing kinds of host it lacks)", j.Name, cl.Name)
	}
	return m.plan(best, method), nil
}

// move moves task i to host h in a copy of place: into room h has, or
// swapping with h's first task that may run where i is.
func (m *model) move(place []int, i, h int) ([]int, bool) {
	p := append([]int(nil), place...)
	on := 0
	for _, x := range p {
		if x == h {
			on++
		}
	}
	if on < m.cl.capacity(h) {
		p[i] = h
		return p, true
	}
	for k := range p {
		if p[k] == h && m.fits(k, p[i]) {
			p[k], p[i] = p[i], h
			return p, true
		}
	}
	return nil, false
}

// candidate is a placement with a topology per stage and its cost.
type candidate struct {
	place []int
	topos []Topology
	total float64 // seconds, all iterations
}

// fits reports whether task i may run on host h.
func (m *model) fits(i, h int) bool {
	k := m.j.Tasks[i].Kind
	return k == "" || k == m.cl.Hosts[h].Kind
}

// sequence chooses, for a placement, a topology per stage from topos
// (dynamic programming over stages, exact for that set): the stages'
// times plus a reconfiguration wherever consecutive stages differ —
// the set-up stages once, then every iteration's stages, and between
// iterations from the last stage's circuits back to the first's. static
// allows one topology only.
//
// A reconfiguration costs the same whatever the circuits, so a stage's
// best way onto a topology comes from the same topology or from the
// cheapest other one: a stage costs O(T). The iteration closes on itself
// (its last stage's circuits, then its first's), and that is solved
// without trying every first topology: the cheapest open sequence is
// optimal if it ends where it starts, and otherwise costs at most one
// reconfiguration an iteration too many; what could beat it ends where
// it starts — on one topology throughout (every topology, O(S·T)), or
// with changes between (a programme per first topology, tried in order of
// a lower bound only while that bound is under the best so far). Equal
// topologies in topos are one choice (the first).
//
// Long: one dynamic programme, its stages' and back-tracking closures
// sharing its tables.
func (m *model) sequence(place []int, topos []Topology, static bool) ([]Topology, float64) {
	S, P := len(m.stages), m.setup
	topos = distinct(topos)
	T := len(topos)
	inf := math.Inf(1)
	if T == 0 {
		return nil, inf
	}
	cost := make([][]float64, S)
	for s := range S {
		cost[s] = make([]float64, T)
		for t := range T {
			cost[s][t] = m.stageCost(s, place, topos[t])
		}
	}
	sw := m.switchTime()
	iters := float64(m.j.Iterations)
	result := func(seq []int, total float64) ([]Topology, float64) {
		if seq == nil || math.IsInf(total, 1) {
			return nil, inf
		}
		out := make([]Topology, S)
		for s, t := range seq {
			out[s] = topos[t]
		}
		return out, total
	}
	if static {
		best, bt := inf, -1
		for t := range T {
			pre, loop := 0.0, 0.0
			for s := range P {
				pre += cost[s][t]
			}
			for s := P; s < S; s++ {
				loop += cost[s][t]
			}
			total := pre + iters*loop
			if total < best {
				best, bt = total, t
			}
		}
		if bt < 0 {
			return nil, inf
		}
		return result(slices.Repeat([]int{bt}, S), best)
	}
	// linear is the cheapest way through stages lo..hi-1, stage lo on t
	// costing init[t] and each later stage scale times its cost, a
	// change of topology scale times the switch's: f[s-lo][t] with stage
	// s on t, from its choices.
	linear := func(lo, hi int, init []float64, scale float64) (f [][]float64, from [][]int) {
		f, from = make([][]float64, hi-lo), make([][]int, hi-lo)
		f[0], from[0] = slices.Clone(init), make([]int, T)
		for k := 1; k < hi-lo; k++ {
			f[k], from[k] = make([]float64, T), make([]int, T)
			prev := f[k-1]
			b1, b2 := twoBest(prev)
			for t := range T {
				v, p := prev[t], t // the same topology
				if o := otherThan(b1, b2, t); o >= 0 {
					if w := prev[o] + scale*sw; w < v || w == v && o < p {
						v, p = w, o
					}
				}
				if math.IsInf(v, 1) {
					p = -1
				}
				f[k][t], from[k][t] = v+scale*cost[lo+k][t], p
			}
		}
		return f, from
	}
	back := func(f [][]float64, from [][]int, last int) []int {
		seq := make([]int, len(f))
		seq[len(f)-1] = last
		for k := len(f) - 1; k > 0; k-- {
			seq[k-1] = from[k][seq[k]]
		}
		return seq
	}
	if P == S { // set-up only
		f, from := linear(0, S, cost[0], 1)
		t := argMin(f[S-1])
		if t < 0 {
			return nil, inf
		}
		return result(back(f, from, t), f[S-1][t])
	}
	// The loop's first stage on t, the set-up before it included.
	init := make([]float64, T)
	preSeq := func(int) []int { return nil }
	if P > 0 {
		fp, fromP := linear(0, P, cost[0], 1)
		last := fp[P-1]
		b1, b2 := twoBest(last)
		into := make([]int, T) // the set-up's last topology before t
		for t := range T {
			v, p := last[t], t
			if o := otherThan(b1, b2, t); o >= 0 {
				if w := last[o] + sw; w < v || w == v && o < p {
					v, p = w, o
				}
			}
			init[t], into[t] = v+iters*cost[P][t], p
		}
		preSeq = func(t0 int) []int { return back(fp, fromP, into[t0]) }
	} else {
		for t := range T {
			init[t] = iters * cost[0][t]
		}
	}
	K := S - P - 1 // the loop's last stage, from its first
	// The cheapest open sequence, and what closing it costs.
	f, from := linear(P, S, init, iters)
	tEnd := argMin(f[K])
	if tEnd < 0 {
		return nil, inf
	}
	loop := back(f, from, tEnd)
	best := f[K][tEnd]
	if loop[0] != tEnd {
		best += (iters - 1) * sw
	}
	bestSeq := append(preSeq(loop[0]), loop...)
	// One topology throughout the loop.
	for t0 := range T {
		v := init[t0]
		for s := P + 1; s < S; s++ {
			v += iters * cost[s][t0]
		}
		if v < best {
			best, bestSeq = v, append(preSeq(t0), slices.Repeat([]int{t0}, S-P)...)
		}
	}
	if K < 2 {
		return result(bestSeq, best)
	}
	// Starting and ending on t0 with changes between: at least two, and
	// each middle stage at its cheapest.
	var mid float64
	for s := P + 1; s < S-1; s++ {
		mid += cost[s][argMin(cost[s])]
	}
	type cand struct {
		t  int
		lb float64
	}
	var cands []cand
	for t0 := range T {
		if lb := init[t0] + iters*(mid+cost[S-1][t0]) + 2*iters*sw; lb < best {
			cands = append(cands, cand{t0, lb})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(a.lb, b.lb) })
	only := make([]float64, T)
	for _, c := range cands {
		if c.lb >= best {
			break
		}
		for t := range T {
			only[t] = inf
		}
		only[c.t] = init[c.t]
		g, gFrom := linear(P, S, only, iters)
		if v := g[K][c.t]; v < best {
			best, bestSeq = v, append(preSeq(c.t), back(g, gFrom, c.t)...)
		}
	}
	return result(bestSeq, best)
}

// twoBest is the indices of the two smallest finite values of v, each
// the earliest of its value (-1 where there are fewer).
func twoBest(v []float64) (b1, b2 int) {
	b1, b2 = -1, -1
	for p, x := range v {
		switch {
		case math.IsInf(x, 1):
		case b1 < 0 || x < v[b1]:
			b1, b2 = p, b1
		case b2 < 0 || x < v[b2]:
			b2 = p
		}
	}
	return b1, b2
}

// otherThan is b1 unless that is t, then b2.
func otherThan(b1, b2, t int) int {
	if b1 == t {
		return b2
	}
	return b1
}

// argMin is the index of v's smallest finite value, the earliest of it
// (-1: none).
func argMin(v []float64) int {
	b, _ := twoBest(v)
	return b
}

// distinct is topos without repeats, each topology where it first
// appears.
func distinct(topos []Topology) []Topology {
	seen := make(map[string]bool, len(topos))
	out := make([]Topology, 0, len(topos))
	var key []byte
	for _, t := range topos {
		key = key[:0]
		for _, row := range t.Count {
			for _, c := range row {
				key = append(key, byte(c))
			}
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, t)
		}
	}
	return out
}

// totals are the job's time and its transfers' weighted lateness with
// the tasks placed and a topology a stage: the set-up stages once, the
// others every iteration, the reconfigurations between.
func (m *model) totals(place []int, topos []Topology) (time, late float64) {
	sw := m.switchTime()
	var pre, loop, preLate, loopLate float64
	for s, t := range topos {
		c := m.compute(s, place).Seconds()
		d, _, l := m.commLate(s, place, t, c)
		st := c + d
		if s > 0 && !topos[s-1].equal(t) {
			st += sw
		}
		if s < m.setup {
			pre, preLate = pre+st, preLate+l
		} else {
			loop, loopLate = loop+st, loopLate+l
		}
	}
	iters := float64(m.j.Iterations)
	time = pre + iters*loop
	if P := m.setup; P < len(topos) && !topos[len(topos)-1].equal(topos[P]) {
		time += (iters - 1) * sw
	}
	return time, preLate + iters*loopLate
}

// demand is the topology of stage s's transfers with the tasks placed:
// a circuit for every pair of hosts that exchange bytes, and each host's
// spare ports doubling its busiest pairs; ok false when some host has
// more peers than ports.
func (m *model) demand(s int, place []int) (Topology, bool) {
	n := len(m.cl.Hosts)
	t := newTopology(n)
	bytes := map[[2]int]int64{}
	for _, step := range m.stages[s].Steps {
		for _, tr := range step {
			a, b := place[tr.From], place[tr.To]
			if a == b {
				continue
			}
			if a > b {
				a, b = b, a
			}
			bytes[[2]int{a, b}] += tr.Bytes
			t.Count[a][b], t.Count[b][a] = 1, 1
		}
	}
	for a := range n {
		if t.degree(a) > m.cl.Hosts[a].Ports {
			return t, false
		}
	}
	// Spare ports: add a parallel circuit to the pair with the most bytes
	// per circuit while both ends have a port free.
	for {
		best, pair := int64(0), [2]int{-1, -1}
		for p, by := range bytes {
			a, b := p[0], p[1]
			if t.degree(a) >= m.cl.Hosts[a].Ports || t.degree(b) >= m.cl.Hosts[b].Ports {
				continue
			}
			if per := by / int64(t.Count[a][b]); per > best || per == best && pair[0] >= 0 && (a < pair[0] || a == pair[0] && b < pair[1]) {
				best, pair = per, p
			}
		}
		if pair[0] < 0 {
			return t, true
		}
		t.Count[pair[0]][pair[1]]++
		t.Count[pair[1]][pair[0]]++
	}
}

// union is the topology of every stage's transfers, if the ports allow.
func (m *model) union(place []int) (Topology, bool) {
	n := len(m.cl.Hosts)
	t := newTopology(n)
	for s := range m.stages {
		d, _ := m.demand(s, place)
		for a := range n {
			for b := range n {
				if d.Count[a][b] > 0 && t.Count[a][b] == 0 {
					t.Count[a][b] = 1
				}
			}
		}
	}
	for a := range n {
		if t.degree(a) > m.cl.Hosts[a].Ports {
			return t, false
		}
	}
	return t, true
}

// ring is a ring through the hosts the tasks are on, in task order: with
// relays it carries any transfer.
func (m *model) ring(place []int) Topology {
	n := len(m.cl.Hosts)
	t := newTopology(n)
	var used []int
	seen := map[int]bool{}
	for _, h := range place {
		if !seen[h] {
			seen[h] = true
			used = append(used, h)
		}
	}
	if len(used) < 2 {
		return t
	}
	if len(used) == 2 {
		k := int8(min(m.cl.Hosts[used[0]].Ports, m.cl.Hosts[used[1]].Ports))
		t.Count[used[0]][used[1]], t.Count[used[1]][used[0]] = k, k
		return t
	}
	for i, a := range used {
		b := used[(i+1)%len(used)]
		t.Count[a][b]++
		t.Count[b][a]++
	}
	return t
}

// candidates are the topologies the heuristic chooses among for a
// placement: each stage's demand topology, their union, and the ring.
func (m *model) candidates(place []int) []Topology {
	var out []Topology
	add := func(t Topology) {
		for _, u := range out {
			if u.equal(t) {
				return
			}
		}
		out = append(out, t)
	}
	for s := range m.stages {
		if t, ok := m.demand(s, place); ok {
			add(t)
		}
	}
	if t, ok := m.union(place); ok {
		add(t)
	}
	add(m.ring(place))
	return out
}

// heuristic places tasks in order on the hosts that fit, filling each
// host's room (a ring collective then runs round consecutive hosts),
// chooses topologies among the candidates, and then moves a task to a
// host with room, or swaps it with a task there, keeping each move that
// lowers the time, until TimeLimit or a round of moves finds nothing
// better.
func (m *model) heuristic(o Options) *candidate {
	n := len(m.cl.Hosts)
	place := make([]int, len(m.j.Tasks))
	used := make([]int, n)
	for i := range place {
		place[i] = -1
		for h := range n {
			if used[h] < m.cl.capacity(h) && m.fits(i, h) {
				place[i] = h
				used[h]++
				break
			}
		}
		if place[i] < 0 {
			return nil
		}
	}
	eval := func(p []int) *candidate {
		m.res = m.residency(p)
		topos, total := m.sequence(p, m.candidates(p), o.Static)
		return &candidate{place: append([]int(nil), p...), topos: topos, total: total + m.res.load}
	}
	best := eval(place)
	r := rand.New(rand.NewPCG(o.Seed, 0x6f6e6963))
	deadline := time.Now().Add(o.TimeLimit)
	for improved := true; improved && time.Now().Before(deadline); {
		improved = false
		moves := r.Perm(len(place) * n)
		for _, mv := range moves {
			if time.Now().After(deadline) {
				break
			}
			i, h := mv/n, mv%n
			if place[i] == h || !m.fits(i, h) {
				continue
			}
			p, ok := m.move(best.place, i, h)
			if !ok {
				continue
			}
			if c := eval(p); c.total < best.total-1e-12 {
				best, place, improved = c, c.place, true
			}
		}
	}
	return best
}

// plan writes candidate c as a Plan.
func (m *model) plan(c *candidate, method string) *Plan {
	m.res = m.residency(c.place)
	p := &Plan{Kernels: m.res.plans, LoadSeconds: m.res.load, Job: m.j.Name, Cluster: m.cl.Name, Method: method, Objective: "iteration time",
		Placement: map[string]string{}, Iterations: m.j.Iterations, place: c.place, topos: c.topos, TotalSeconds: c.total, m: m}
	if m.deadlines {
		p.Objective = "weighted lateness of transfers with deadlines (CadentFlow), then time"
		p.TotalSeconds, p.LateSeconds = m.totals(c.place, c.topos)
		p.TotalSeconds += m.res.load
	} else {
		_, p.LateSeconds = m.totals(c.place, c.topos)
	}
	for i, t := range m.j.Tasks {
		p.Placement[t.Name] = m.cl.Hosts[c.place[i]].Name
	}
	for s, t := range c.topos {
		secs := m.stageTime(s, c.place, t)
		_, relays := m.comm(s, c.place, t)
		once := s < m.setup
		if k := len(p.Phases); k > 0 && p.Phases[k-1].topo.equal(t) && p.Phases[k-1].Once == once {
			ph := &p.Phases[k-1]
			ph.Stages, ph.Names, ph.Seconds, ph.Relays = append(ph.Stages, s), append(ph.Names, m.stages[s].Name), ph.Seconds+secs, ph.Relays || relays
			continue
		}
		ph := Phase{Stages: []int{s}, Names: []string{m.stages[s].Name}, Seconds: secs, Relays: relays, Once: once, topo: t}
		for _, e := range t.Circuits() {
			ph.Circuits = append(ph.Circuits, [2]string{m.cl.Hosts[e[0]].Name, m.cl.Hosts[e[1]].Name})
		}
		p.Phases = append(p.Phases, ph)
	}
	// An iteration: its phases (after the set-up), a reconfiguration
	// between two that differ, and back to the first between iterations.
	var loop []Phase
	for _, ph := range p.Phases {
		if !ph.Once {
			loop = append(loop, ph)
		}
	}
	it := 0.0
	for k, ph := range loop {
		it += ph.Seconds
		if k > 0 && !loop[k-1].topo.equal(ph.topo) {
			p.Reconfigurations++
		}
	}
	if len(loop) > 1 && !loop[0].topo.equal(loop[len(loop)-1].topo) && p.Iterations > 1 {
		p.Reconfigurations++
	}
	p.IterationSeconds = it + float64(p.Reconfigurations)*m.switchTime()
	return p
}
