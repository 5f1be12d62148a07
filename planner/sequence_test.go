package planner

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sequenceRef is sequence as it was first written: every pair of
// consecutive topologies tried at every stage, O(S·T³) — the reference
// the faster programme is held to.
func (m *model) sequenceRef(place []int, topos []Topology, static bool) ([]Topology, float64) {
	S, T, P := len(m.stages), len(topos), m.setup
	if T == 0 {
		return nil, math.Inf(1)
	}
	cost := make([][]float64, S)
	for s := range S {
		cost[s] = make([]float64, T)
		for t := range T {
			cost[s][t] = m.stageCost(s, place, topos[t])
		}
	}
	same := make([][]bool, T)
	for a := range T {
		same[a] = make([]bool, T)
		for b := range T {
			same[a][b] = topos[a].equal(topos[b])
		}
	}
	sw := m.switchTime()
	swap := func(a, b int) float64 {
		if same[a][b] {
			return 0
		}
		return sw
	}
	// chain is the cheapest way through stages lo..hi-1: f[s-lo][t] with
	// stage s on t, stage lo on start if start >= 0, every stage on start
	// when static; from holds the choices.
	chain := func(lo, hi, start int) (f [][]float64, from [][]int) {
		f, from = make([][]float64, hi-lo), make([][]int, hi-lo)
		for k := range f {
			f[k], from[k] = make([]float64, T), make([]int, T)
			for t := range T {
				f[k][t], from[k][t] = math.Inf(1), -1
			}
		}
		for t := range T {
			if start < 0 || t == start {
				f[0][t] = cost[lo][t]
			}
		}
		for k := 1; k < hi-lo; k++ {
			for t := range T {
				if static && t != start {
					continue
				}
				for p := range T {
					if v := f[k-1][p] + cost[lo+k][t] + swap(p, t); v < f[k][t] {
						f[k][t], from[k][t] = v, p
					}
				}
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
	iters := float64(m.j.Iterations)
	best, bestSeq := math.Inf(1), []int(nil)
	for t0 := range T {
		var pre float64
		var preSeq []int
		if P > 0 {
			start := -1
			if static {
				start = t0
			}
			fp, fromP := chain(0, P, start)
			pre = math.Inf(1)
			for p := range T {
				if v := fp[P-1][p] + swap(p, t0); v < pre && (!static || p == t0) {
					pre, preSeq = v, back(fp, fromP, p)
				}
			}
			if P == S { // (set-up only: t0 is the circuits after it)
				if pre-swap(preSeq[P-1], t0) < best {
					best, bestSeq = pre-swap(preSeq[P-1], t0), preSeq
				}
				continue
			}
		}
		fl, fromL := chain(P, S, t0)
		for t := range T {
			total := pre + iters*fl[S-P-1][t] + (iters-1)*swap(t, t0)
			if total < best {
				best, bestSeq = total, append(append([]int(nil), preSeq...), back(fl, fromL, t)...)
			}
		}
	}
	if bestSeq == nil || math.IsInf(best, 1) {
		return nil, math.Inf(1)
	}
	out := make([]Topology, S)
	for s, t := range bestSeq {
		out[s] = topos[t]
	}
	return out, best
}

// TestSequenceIsReference: on random jobs over three and four hosts (half
// with a set-up stage), static or not, with repeats among the candidate
// topologies, the programme finds the all-pairs one's time (to rounding),
// and the topologies it chooses take that time (the job's time with
// them, worked out apart by totals).
func TestSequenceIsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 2))
	for k := range 24 {
		n := 3 + k%2
		j := randomJob(t, r, n, 2+k%3)
		cl := testCluster(n)
		m := newModel(cl, j)
		topos := m.allTopologies()
		if k%3 == 0 {
			topos = append(topos, topos[:5]...) // repeats
		}
		place := make([]int, len(j.Tasks))
		for i := range place {
			place[i] = r.IntN(n)
		}
		m.res = m.residency(place)
		for _, static := range []bool{false, true} {
			got, gt := m.sequence(place, topos, static)
			_, wt := m.sequenceRef(place, topos, static)
			if math.IsInf(gt, 1) || math.IsInf(wt, 1) {
				if math.IsInf(gt, 1) != math.IsInf(wt, 1) {
					t.Fatalf("job %d static %v: %v s, the reference %v s", k, static, gt, wt)
				}
				continue
			}
			if math.Abs(gt-wt) > 1e-12*wt {
				t.Fatalf("job %d static %v: %.12f s, the reference %.12f s", k, static, gt, wt)
			}
			if tt, _ := m.totals(place, got); math.Abs(tt-gt) > 1e-9*gt {
				t.Fatalf("job %d static %v: the chosen topologies take %.12f s, not %.12f", k, static, tt, gt)
			}
		}
	}
}
