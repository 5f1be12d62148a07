package planner

// exact searches every placement of the tasks on hosts that fit them,
// and for each every sequence of topologies — all multigraphs of
// circuits between the hosts within their ports — by dynamic programming
// over the stages (exact: a stage's time depends only on its own
// topology, a reconfiguration only on two consecutive ones).
func (m *model) exact(static bool) *candidate {
	topos := m.allTopologies()
	var best *candidate
	m.placements(func(place []int) {
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

// placements calls f with every placement of the tasks on hosts that fit
// them, as many on a host as it has room for.
func (m *model) placements(f func(place []int)) {
	n := len(m.cl.Hosts)
	place := make([]int, len(m.j.Tasks))
	used := make([]int, n)
	var walk func(i int)
	walk = func(i int) {
		if i == len(place) {
			f(place)
			return
		}
		for h := range n {
			if used[h] < m.cl.capacity(h) && m.fits(i, h) {
				used[h]++
				place[i] = h
				walk(i + 1)
				used[h]--
			}
		}
	}
	walk(0)
}
