package plan

import (
	"container/heap"
	"math"
)

// The offline optimum. Serve the tasks in order; between two consecutive
// tasks i < j that need the same kernel, keeping it loaded saves its
// load at j. A set of kept intervals is feasible with k slots when at
// every task t at most k-1 intervals pass strictly over t (the kernel of
// t takes the k-th slot); intervals that only touch t are t's own
// kernel. Choosing kept intervals of maximum total saving under that
// bound is an interval packing on a line, solved exactly by a min-cost
// flow: nodes u0..un, a chain u(t-1) -> u(t) standing for task t with
// capacity k-1 and cost 0, and for each interval (i, j) with j > i+1 an
// arc u(i) -> u(j-1) (it covers tasks i+1 .. j-1) of capacity 1 and cost
// minus the saving; k-1 units flow from u0 to un. Intervals with j = i+1
// cover nothing and are always kept. A lazy policy (load only on a
// miss) loses nothing against any other, so the plan built from the kept
// intervals is optimal among all plans.

// edge is an arc of the residual graph; its reverse is edges[e^1].
type edge struct {
	to   int32
	cap  int32
	cost int64
}

// flowGraph is a residual graph in adjacency lists.
type flowGraph struct {
	edges []edge
	adj   [][]int32
}

func (g *flowGraph) add(from, to int, cap int32, cost int64) int {
	g.adj[from] = append(g.adj[from], int32(len(g.edges)))
	g.edges = append(g.edges, edge{int32(to), cap, cost})
	g.adj[to] = append(g.adj[to], int32(len(g.edges)))
	g.edges = append(g.edges, edge{int32(from), 0, -cost})
	return len(g.edges) - 2
}

// keep returns, for each task i, whether its kernel stays loaded until
// the next task needing it, in a plan of minimum total load cost.
func keep(seq []int, w []int64, k int) []bool {
	n := len(seq)
	kept := make([]bool, n)
	next := make([]int, n)
	seen := map[int]int{}
	for i := n - 1; i >= 0; i-- {
		next[i] = -1
		if j, ok := seen[seq[i]]; ok {
			next[i] = j
		}
		seen[seq[i]] = i
	}
	g := &flowGraph{adj: make([][]int32, n+1)}
	type interval struct{ task, edge int }
	var arcs []interval
	for t := 1; t <= n; t++ {
		g.add(t-1, t, int32(k-1), 0)
	}
	for i, j := range next {
		switch {
		case j < 0:
		case j == i+1:
			kept[i] = true
		case k > 1:
			// Tasks are 0-based here and positions 1-based: task i is
			// position i+1, so the interval covers positions i+2 .. j.
			arcs = append(arcs, interval{i, g.add(i+1, j, 1, -w[seq[j]])})
		}
	}
	if k > 1 && len(arcs) > 0 {
		g.minCostFlow(0, n, k-1)
		for _, a := range arcs {
			if g.edges[a.edge].cap == 0 {
				kept[a.task] = true
			}
		}
	}
	return kept
}

// minCostFlow sends want units from s to t at least cost: successive
// shortest paths, Dijkstra on reduced costs. All arcs go forward (from a
// lower node to a higher), so the first potentials are one pass of
// shortest paths in node order, negative costs and all.
func (g *flowGraph) minCostFlow(s, t, want int) {
	n := len(g.adj)
	const inf = math.MaxInt64 / 4
	pot := make([]int64, n)
	for i := range pot {
		pot[i] = inf
	}
	pot[s] = 0
	for u := range n {
		if pot[u] == inf {
			continue
		}
		for _, e := range g.adj[u] {
			ed := g.edges[e]
			if ed.cap > 0 && pot[u]+ed.cost < pot[ed.to] {
				pot[ed.to] = pot[u] + ed.cost
			}
		}
	}
	dist := make([]int64, n)
	prev := make([]int32, n)
	h := &nodeHeap{}
	for want > 0 {
		for i := range dist {
			dist[i], prev[i] = inf, -1
		}
		dist[s] = 0
		h.items = h.items[:0]
		heap.Push(h, item{s, 0})
		for h.Len() > 0 {
			it := heap.Pop(h).(item)
			if it.d > dist[it.node] {
				continue
			}
			u := it.node
			for _, e := range g.adj[u] {
				ed := g.edges[e]
				if ed.cap <= 0 || pot[ed.to] == inf {
					continue
				}
				nd := dist[u] + ed.cost + pot[u] - pot[ed.to]
				if nd < dist[ed.to] {
					dist[ed.to], prev[ed.to] = nd, e
					heap.Push(h, item{int(ed.to), nd})
				}
			}
		}
		if dist[t] == inf {
			return // the chain always has room, so this does not happen
		}
		for i := range pot {
			if dist[i] < inf {
				pot[i] += dist[i]
			}
		}
		push := int32(want)
		for v := t; v != s; {
			e := prev[v]
			push = min(push, g.edges[e].cap)
			v = int(g.edges[e^1].to)
		}
		for v := t; v != s; {
			e := prev[v]
			g.edges[e].cap -= push
			g.edges[e^1].cap += push
			v = int(g.edges[e^1].to)
		}
		want -= int(push)
	}
}

type item struct {
	node int
	d    int64
}

type nodeHeap struct{ items []item }

func (h *nodeHeap) Len() int { return len(h.items) }
func (h *nodeHeap) Less(i, j int) bool {
	if h.items[i].d != h.items[j].d {
		return h.items[i].d < h.items[j].d
	}
	return h.items[i].node < h.items[j].node
}
func (h *nodeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *nodeHeap) Push(x any)    { h.items = append(h.items, x.(item)) }
func (h *nodeHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// optimalChooser evicts a kernel that the optimum does not keep: one
// whose interval to its next use was not chosen (or that has none).
type optimalChooser struct {
	kept []bool
	from map[int]int // slot -> the task that last used it
}

func optimal(seq []int, w []int64, k int) *optimalChooser {
	return &optimalChooser{kept: keep(seq, w, k), from: map[int]int{}}
}

func (o *optimalChooser) access(i, _, slot int) { o.from[slot] = i }

func (o *optimalChooser) victim(_ int, slots []int) int {
	for j := range slots {
		if !o.kept[o.from[j]] {
			return j
		}
	}
	// Unreachable when the flow is right: the tests check that every
	// plan's cost equals the flow's and brute force's.
	return 0
}
