package planner

// exact searches every placement of the tasks on hosts that fit them,
// and for each every sequence of topologies — all multigraphs of
// circuits between the hosts within their ports — by dynamic programming
// over the stages (exact: a stage's time depends only on its own
// topology, a reconfiguration only on two consecutive ones).
func (m *model) exact(static bool) *candidate {
	topos := m.allTopologies()
	var best *candidate
	m.canonicalPlacements(func(place []int) {
		m.res = m.residency(place)
		seq, total := m.sequence(place, topos, static)
		total += m.res.load
		if best == nil || total < best.total {
			best = &candidate{place: append([]int(nil), place...), topos: seq, total: total}
		}
	})
	return best
}

// allTopologies lists every set of circuits between the cluster's hosts
// that no host's ports exceed.
func (m *model) allTopologies() []Topology {
	n := len(m.cl.Hosts)
	var pairs [][2]int
	for a := range n {
		for b := a + 1; b < n; b++ {
			pairs = append(pairs, [2]int{a, b})
		}
	}
	var out []Topology
	t := newTopology(n)
	var walk func(k int)
	walk = func(k int) {
		if k == len(pairs) {
			out = append(out, t.clone())
			return
		}
		a, b := pairs[k][0], pairs[k][1]
		da, db := t.degree(a), t.degree(b) // (this pair's count is 0 here)
		for c := 0; ; c++ {
			if da+c > m.cl.Hosts[a].Ports || db+c > m.cl.Hosts[b].Ports {
				break
			}
			t.Count[a][b], t.Count[b][a] = int8(c), int8(c)
			walk(k + 1)
		}
		t.Count[a][b], t.Count[b][a] = 0, 0
	}
	walk(0)
	return out
}

// MaxExactTopologies bounds the topologies the exact search lists (it
// keeps them all, and tries each for every stage of every placement):
// eight hosts of one O-NIC have 213,798, four of two O-NICs 641; a
// cluster with more is planned by the heuristic whatever ExactHosts is.
const MaxExactTopologies = 250_000

// topologiesWithin says whether the cluster has at most limit
// topologies (allTopologies' count, stopping once past it).
func (m *model) topologiesWithin(limit int) bool {
	n := len(m.cl.Hosts)
	deg := make([]int, n)
	count := 0
	var walk func(a, b int) bool
	walk = func(a, b int) bool { // (the pair a < b next, in allTopologies' order)
		if b == n {
			a, b = a+1, a+2
		}
		if a >= n-1 {
			count++
			return count <= limit
		}
		for c := 0; deg[a]+c <= m.cl.Hosts[a].Ports && deg[b]+c <= m.cl.Hosts[b].Ports; c++ {
			deg[a], deg[b] = deg[a]+c, deg[b]+c
			ok := walk(a, b+1)
			deg[a], deg[b] = deg[a]-c, deg[b]-c
			if !ok {
				return false
			}
		}
		return true
	}
	return walk(0, 1)
}

// placements calls f with every placement of the tasks on hosts that fit
// them, as many on a host as it has room for.
func (m *model) placements(f func(place []int)) { m.placementsOf(false, f) }

// canonicalPlacements is placements up to renumbering hosts that are
// alike (of one kind, with as many O-NICs, ports and room for tasks):
// the exact search tries every topology with each, and a placement on
// renumbered hosts with the topology renumbered alike is the same plan.
// A task opens a host of a class only if it is the class's lowest host
// not yet used, so each placement's class comes once: one placement for
// eight tasks on eight alike hosts, where placements gives 40,320.
func (m *model) canonicalPlacements(f func(place []int)) { m.placementsOf(true, f) }

// placementsOf is placements, or with canonical canonicalPlacements.
func (m *model) placementsOf(canonical bool, f func(place []int)) {
	n := len(m.cl.Hosts)
	place := make([]int, len(m.j.Tasks))
	used := make([]int, n)
	// class[h]: the lowest host alike with h.
	class := make([]int, n)
	for h := range n {
		class[h] = h
		for g := range h {
			a, b := m.cl.Hosts[g], m.cl.Hosts[h]
			if a.Kind == b.Kind && len(a.ONICs) == len(b.ONICs) && a.Ports == b.Ports && m.cl.capacity(g) == m.cl.capacity(h) {
				class[h] = class[g]
				break
			}
		}
	}
	// opens says whether a task may start using host h: in a canonical
	// walk, only the lowest unused host of h's class.
	opens := func(h int) bool {
		if !canonical || used[h] > 0 {
			return true
		}
		for g := range h {
			if class[g] == class[h] && used[g] == 0 {
				return false
			}
		}
		return true
	}
	var walk func(i int)
	walk = func(i int) {
		if i == len(place) {
			f(place)
			return
		}
		for h := range n {
			if used[h] < m.cl.capacity(h) && m.fits(i, h) && opens(h) {
				used[h]++
				place[i] = h
				walk(i + 1)
				used[h]--
			}
		}
	}
	walk(0)
}
