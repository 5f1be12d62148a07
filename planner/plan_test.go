package planner

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/job"
)

// testCluster is n hosts with one O-NIC each (two ports), FLEET's MEMS.
func testCluster(n int) *Cluster {
	c := &Cluster{Name: fmt.Sprintf("%d-hosts", n), RateGbps: DefaultRateGbps, HopLatency: DefaultHop,
		Reconfig: 10 * time.Millisecond, BringUp: time.Millisecond}
	for i := range n {
		c.Hosts = append(c.Hosts, Host{Name: string(rune('A' + i)), Kind: "cpu", ONICs: []string{"onic" + string(rune('A'+i))}, Ports: 2})
	}
	return c
}

func tasks(n int) []job.Task {
	var ts []job.Task
	for i := range n {
		ts = append(ts, job.Task{Name: fmt.Sprintf("w%d", i)})
	}
	return ts
}

func mustCheck(t *testing.T, j *job.Job) *job.Job {
	t.Helper()
	if err := j.Check(); err != nil {
		t.Fatal(err)
	}
	return j
}

// ringJob is data-parallel training on n workers: compute, then a ring
// all-reduce of bytes.
func ringJob(t *testing.T, n int, bytes string) *job.Job {
	var group []string
	var compute []job.Compute
	for i := range n {
		group = append(group, fmt.Sprintf("w%d", i))
		compute = append(compute, job.Compute{Task: group[i], Time: time.Millisecond})
	}
	return mustCheck(t, &job.Job{Name: "ring", Iterations: 3, Tasks: tasks(n), Stages: []job.StageSpec{
		{Name: "compute", Compute: compute},
		{Name: "all-reduce", Collectives: []job.Collective{{Op: "all-reduce", Group: group, Bytes: bytes}}},
	}})
}

// TestRingAllReduce: ring all-reduce on N O-NICs plans one ring — every
// host joined to the two hosts holding its ring neighbours — and no
// reconfiguration, by the exact method on 4 hosts and the heuristic on 8.
func TestRingAllReduce(t *testing.T) {
	for _, n := range []int{4, 8} {
		p, err := Make(testCluster(n), ringJob(t, n, "256MiB"), Options{TimeLimit: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if p.Reconfigurations != 0 || len(p.Phases) != 1 || p.Phases[0].Relays {
			t.Fatalf("%d hosts (%s): %d reconfigurations, %d phases, relays %v; want one ring", n, p.Method, p.Reconfigurations, len(p.Phases), p.Phases[0].Relays)
		}
		joined := map[[2]string]int{}
		for _, c := range p.Phases[0].Circuits {
			joined[c]++
			joined[[2]string{c[1], c[0]}]++
		}
		for i := range n {
			a, b := p.Placement[fmt.Sprintf("w%d", i)], p.Placement[fmt.Sprintf("w%d", (i+1)%n)]
			if joined[[2]string{a, b}] == 0 {
				t.Errorf("%d hosts: w%d on %s and w%d on %s, ring neighbours, have no circuit: %v", n, i, a, (i+1)%n, b, p.Phases[0].Circuits)
			}
		}
		// A ring all-reduce moves 2(N-1)/N of the bytes through each host
		// link and each circuit of the ring: the model's time is that at
		// the slower of the two (the circuit's, on FLEET's lane plan),
		// plus hops.
		rate := min(DefaultRateGbps, DefaultPortGbps)
		want := 1e-3 + float64(2*(n-1))*(float64(256<<20)/float64(n)/(rate*1e9/8)+DefaultHop.Seconds())
		if math.Abs(p.IterationSeconds-want) > 1e-9 {
			t.Errorf("%d hosts: iteration %.6f s, want %.6f", n, p.IterationSeconds, want)
		}
		t.Logf("%d hosts (%s): one ring, iteration %.3f ms", n, p.Method, p.IterationSeconds*1e3)
	}
}

// alternating is two phases over 4 workers, alternating every
// iteration: a ring all-reduce round w0, w1, w2, w3, then an exchange
// across the ring's diagonals (w0 with w2, w1 with w3, both ways). The
// two need three peers a host in all, more than its two ports: on one
// topology for both, the exchange is relayed round the ring, two
// transfers sharing each circuit they cross.
func alternating(t *testing.T, bytes string) *job.Job {
	return mustCheck(t, &job.Job{Name: "alternating", Iterations: 4, Tasks: tasks(4), Stages: []job.StageSpec{
		{Name: "ring", Collectives: []job.Collective{{Op: "all-reduce", Group: []string{"w0", "w1", "w2", "w3"}, Bytes: "64MiB"}}},
		{Name: "diagonals", Sends: []job.Send{{From: "w0", To: "w2", Bytes: bytes}, {From: "w2", To: "w0", Bytes: bytes},
			{From: "w1", To: "w3", Bytes: bytes}, {From: "w3", To: "w1", Bytes: bytes}}},
	}})
}

// TestReconfigureWhenItPays: the two alternating phases reconfigure
// exactly when the time saved — the exchange relayed over one static
// topology against each phase on its own circuits — exceeds the switch's
// dark and training time, twice an iteration: never for small
// exchanges, always for big ones, and the plan's time is the better of
// the two.
func TestReconfigureWhenItPays(t *testing.T) {
	cl := testCluster(4)
	// Circuits at half the host link's rate (a lane plan slower than the
	// PCIe side): a relayed transfer then slows the circuits it shares,
	// where at the full rate an O-NIC's two ports have room to relay
	// beside its host's own traffic.
	cl.PortGbps = cl.RateGbps / 2
	sawStatic, sawSwitch := false, false
	for _, bytes := range []string{"1MiB", "16MiB", "64MiB", "128MiB", "256MiB", "1GiB"} {
		j := alternating(t, bytes)
		p, err := Make(cl, j, Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Make(cl, j, Options{Static: true})
		if err != nil {
			t.Fatal(err)
		}
		// The best plan that reconfigures at every stage boundary.
		m := newModel(cl, j)
		place := []int{0, 1, 2, 3}
		var direct []Topology
		for s := range m.stages {
			d, _ := m.demand(s, place)
			direct = append(direct, d)
		}
		sw := 0.0
		for s := range m.stages {
			sw += m.stageTime(s, place, direct[s])
		}
		sw = float64(j.Iterations)*(sw+m.switchTime()) + float64(j.Iterations-1)*m.switchTime()
		want := min(st.TotalSeconds, sw)
		if math.Abs(p.TotalSeconds-want) > 1e-9 {
			t.Errorf("%s: plan %.6f s; static %.6f, switching %.6f", bytes, p.TotalSeconds, st.TotalSeconds, sw)
		}
		if reconf := p.Reconfigurations > 0; reconf != (sw < st.TotalSeconds) {
			t.Errorf("%s: %d reconfigurations; static %.6f s, switching %.6f s", bytes, p.Reconfigurations, st.TotalSeconds, sw)
		}
		sawStatic = sawStatic || p.Reconfigurations == 0
		sawSwitch = sawSwitch || p.Reconfigurations > 0
		t.Logf("%s: %d reconfigurations an iteration; static %.2f ms, switching %.2f ms", bytes, p.Reconfigurations, st.TotalSeconds*1e3, sw*1e3)
	}
	if !sawStatic || !sawSwitch {
		t.Errorf("the sizes should span the break-even point: static seen %v, switching seen %v", sawStatic, sawSwitch)
	}
}

// randomJob is a job of n tasks and s stages of random sends and
// collectives.
func randomJob(t *testing.T, r *rand.Rand, n, s int) *job.Job {
	j := &job.Job{Name: "random", Iterations: 1 + r.IntN(3), Tasks: tasks(n)}
	for k := range s {
		st := job.StageSpec{Name: fmt.Sprintf("s%d", k)}
		for i := range n {
			st.Compute = append(st.Compute, job.Compute{Task: fmt.Sprintf("w%d", i), Time: time.Duration(r.IntN(2000)) * time.Microsecond})
		}
		for range 1 + r.IntN(3) {
			a, b := r.IntN(n), r.IntN(n)
			if a != b {
				st.Sends = append(st.Sends, job.Send{From: fmt.Sprintf("w%d", a), To: fmt.Sprintf("w%d", b), Bytes: fmt.Sprintf("%dMiB", 1+r.IntN(512))})
			}
		}
		if r.IntN(2) == 0 {
			st.Collectives = append(st.Collectives, job.Collective{Op: []string{"all-reduce", "all-gather", "all-to-all"}[r.IntN(3)], Group: []string{"w0", "w1", "w2"}[:2+r.IntN(2)], Bytes: "64MiB"})
		}
		j.Stages = append(j.Stages, st)
	}
	if r.IntN(2) == 0 {
		j.Stages[0].Once = true // a set-up stage
	}
	return mustCheck(t, j)
}

// everyTopology lists the circuit multigraphs on the cluster's hosts the
// slow way, apart from allTopologies: every vector of circuit counts per
// host pair up to the most ports, kept when no host's ports overflow.
func everyTopology(m *model) []Topology {
	n := len(m.cl.Hosts)
	var pairs [][2]int
	most := 0
	for a := range n {
		most = max(most, m.cl.Hosts[a].Ports)
		for b := a + 1; b < n; b++ {
			pairs = append(pairs, [2]int{a, b})
		}
	}
	var out []Topology
	counts := make([]int, len(pairs))
	for {
		t := newTopology(n)
		for k, p := range pairs {
			t.Count[p[0]][p[1]], t.Count[p[1]][p[0]] = int8(counts[k]), int8(counts[k])
		}
		ok := true
		for a := range n {
			ok = ok && t.degree(a) <= m.cl.Hosts[a].Ports
		}
		if ok {
			out = append(out, t)
		}
		k := 0
		for k < len(counts) && counts[k] == most {
			counts[k] = 0
			k++
		}
		if k == len(counts) {
			return out
		}
		counts[k]++
	}
}

// bruteForce tries every placement and every topology for every stage:
// the set-up stages once, then the others every iteration.
func bruteForce(m *model) float64 {
	topos := everyTopology(m)
	if len(topos) != len(m.allTopologies()) {
		panic(fmt.Sprintf("%d topologies by brute force, %d by allTopologies", len(topos), len(m.allTopologies())))
	}
	best := math.Inf(1)
	S := len(m.stages)
	m.placements(func(place []int) {
		// Each stage's time on each topology, worked out once for the
		// placement (every sequence below adds them up).
		times := make([][]float64, S)
		for k := range S {
			times[k] = make([]float64, len(topos))
			for t := range topos {
				times[k][t] = m.stageTime(k, place, topos[t])
			}
		}
		seq := make([]int, S)
		var walk func(s int)
		walk = func(s int) {
			if s == S {
				P := m.setup
				pre, loop := 0.0, 0.0
				for k := range S {
					c := times[k][seq[k]]
					if k > 0 && !topos[seq[k]].equal(topos[seq[k-1]]) {
						c += m.switchTime()
					}
					if k < P {
						pre += c
					} else if k == P && P > 0 {
						pre += c - times[k][seq[k]] // the switch out of the set-up
						loop += times[k][seq[k]]
					} else {
						loop += c
					}
				}
				total := pre + float64(m.j.Iterations)*loop
				if P < S && !topos[seq[S-1]].equal(topos[seq[P]]) {
					total += float64(m.j.Iterations-1) * m.switchTime()
				}
				best = min(best, total)
				return
			}
			for t := range topos {
				seq[s] = t
				walk(s + 1)
			}
		}
		walk(0)
	})
	return best
}

// TestExactIsBruteForce: on random small jobs (3 and 4 hosts, 3 stages,
// half of them with a set-up stage), the
// exact method's time equals brute force over every placement and every
// sequence of topologies; the heuristic's is reported beside it, never
// better.
func TestExactIsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 1))
	worstGap := 0.0
	for k := range 20 {
		n := 3 + k%2 // (four hosts: the canonical placements against every one)
		j := randomJob(t, r, n, 3)
		cl := testCluster(n)
		p, err := Make(cl, j, Options{})
		if err != nil {
			t.Fatal(err)
		}
		bf := bruteForce(newModel(cl, j))
		if p.Method != "exact" || math.Abs(p.TotalSeconds-bf) > 1e-9*bf {
			t.Fatalf("job %d: %s plan %.9f s, brute force %.9f s", k, p.Method, p.TotalSeconds, bf)
		}
		h, err := Make(cl, j, Options{ExactHosts: 1, TimeLimit: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if h.TotalSeconds < bf-1e-9*bf {
			t.Fatalf("job %d: the heuristic %.9f s beats brute force %.9f s", k, h.TotalSeconds, bf)
		}
		if bf > 0 {
			worstGap = max(worstGap, h.TotalSeconds/bf-1)
		}
	}
	t.Logf("20 random jobs: exact = brute force; the heuristic's worst gap %.1f%%", 100*worstGap)
}

// TestExactEightONICs: the exact method on eight O-NICs, four hosts of
// two (four ports each: 641 topologies), equals brute force over every
// placement and every pair of topologies on random two-stage jobs.
func TestExactEightONICs(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 8))
	for k := range 3 {
		j := randomJob(t, r, 4, 2)
		cl := testCluster(4)
		for i := range cl.Hosts {
			h := &cl.Hosts[i]
			h.ONICs, h.Ports = append(h.ONICs, h.ONICs[0]+"2"), 4
		}
		start := time.Now()
		p, err := Make(cl, j, Options{})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		bf := bruteForce(newModel(cl, j))
		if p.Method != "exact" || math.Abs(p.TotalSeconds-bf) > 1e-9*bf {
			t.Fatalf("job %d: %s plan %.9f s, brute force %.9f s", k, p.Method, p.TotalSeconds, bf)
		}
		t.Logf("job %d: exact = brute force, %.6f s; planned in %v", k, bf, took.Round(time.Millisecond))
	}
}

// TestExactEightHosts: eight hosts of one O-NIC (213,798 topologies,
// past the reach of brute force) are searched exactly with ExactHosts 8:
// the ring all-reduce on them gets the known optimum (one ring, 2(N−1)
// steps of B/N at the rate), and on random jobs the exact plan is never
// worse than the heuristic's. TopologiesWithin counts as allTopologies
// lists, and bounds the search.
func TestExactEightHosts(t *testing.T) {
	for _, c := range []struct{ n, count int }{{3, 11}, {4, 56}, {6, 2578}} {
		m := newModel(testCluster(c.n), ringJob(t, c.n, "1MiB"))
		if got := len(m.allTopologies()); got != c.count || !m.topologiesWithin(c.count) || m.topologiesWithin(c.count-1) {
			t.Errorf("%d hosts: %d topologies listed, want %d; within %d %v, within %d %v", c.n, got, c.count, c.count, m.topologiesWithin(c.count), c.count-1, m.topologiesWithin(c.count-1))
		}
	}
	if !newModel(testCluster(8), ringJob(t, 8, "1MiB")).topologiesWithin(MaxExactTopologies) {
		t.Fatal("eight hosts of one O-NIC are past MaxExactTopologies")
	}
	const n = 8
	p, err := Make(testCluster(n), ringJob(t, n, "256MiB"), Options{ExactHosts: n})
	if err != nil {
		t.Fatal(err)
	}
	rate := min(DefaultRateGbps, DefaultPortGbps)
	want := 1e-3 + float64(2*(n-1))*(float64(256<<20)/float64(n)/(rate*1e9/8)+DefaultHop.Seconds())
	if p.Method != "exact" || p.Reconfigurations != 0 || math.Abs(p.IterationSeconds-want) > 1e-9 {
		t.Fatalf("ring on 8 hosts: %s, %d reconfigurations, iteration %.6f s, want one ring at %.6f", p.Method, p.Reconfigurations, p.IterationSeconds, want)
	}
	r := rand.New(rand.NewPCG(49, 88))
	for k := range 2 {
		j := randomJob(t, r, n, 3)
		start := time.Now()
		e, err := Make(testCluster(n), j, Options{ExactHosts: n})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		h, err := Make(testCluster(n), j, Options{TimeLimit: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if e.Method != "exact" || e.TotalSeconds > h.TotalSeconds*(1+1e-9) {
			t.Fatalf("job %d: %s plan %.9f s, the heuristic's %.9f s", k, e.Method, e.TotalSeconds, h.TotalSeconds)
		}
		t.Logf("job %d: exact %.6f s in %v, the heuristic %.6f s (%.1f%% over)", k, e.TotalSeconds, took.Round(time.Millisecond), h.TotalSeconds, 100*(h.TotalSeconds/e.TotalSeconds-1))
	}
}

// BenchmarkPlanFLEET plans a Megatron job of 192 GPUs (dp 24, tp 4, pp
// 2: the 384 ports of FLEET's switch, one O-NIC a GPU) with the
// heuristic, its improvement bounded at 30 s: the wall time per plan and
// the iteration time it reaches.
func BenchmarkPlanFLEET(b *testing.B) {
	j, err := job.Megatron(job.MegatronConfig{DP: 24, TP: 4, PP: 2, Layers: 48, Hidden: 8192, Seq: 2048, MicroBatch: 1, MicroBatches: 8, BytesPer: 2, LayerTime: 2 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	cl := Uniform(192, "gpu")
	for b.Loop() {
		p, err := Make(cl, j, Options{TimeLimit: *fleetLimit})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(p.IterationSeconds*1e3, "ms/iteration")
		b.ReportMetric(float64(p.Reconfigurations), "reconfigurations")
	}
}

// BenchmarkPlanFleetCluster plans onto the FLEET-scale issue's built-in
// cluster (fleet-cluster: four servers of 24 O-NICs and 48 GPUs of one,
// on the 384-port switch) a Megatron job over its 48 GPUs (dp 12, tp 4),
// the heuristic at its default time limit: the wall time per plan.
func BenchmarkPlanFleetCluster(b *testing.B) {
	sc, err := scenario.Lookup("fleet-cluster")
	if err != nil {
		b.Fatal(err)
	}
	cl, err := FromScenario(sc)
	if err != nil {
		b.Fatal(err)
	}
	j, err := job.Megatron(job.MegatronConfig{DP: 12, TP: 4, PP: 1, Layers: 24, Hidden: 4096, Seq: 2048, MicroBatch: 1, MicroBatches: 4, BytesPer: 2, LayerTime: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p, err := Make(cl, j, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(p.IterationSeconds*1e3, "ms/iteration")
	}
}

var fleetLimit = flag.Duration("fleet-limit", 30*time.Second, "BenchmarkPlanFLEET's time limit")

// TestChart: the circuit schedule of a plan that reconfigures draws a
// row per host pair, the parallel circuits' count and the dark time (two
// grey spans: into the second phase and back).
func TestChart(t *testing.T) {
	cl := testCluster(4)
	cl.PortGbps = cl.RateGbps / 2 // (so a second circuit to a peer pays)
	p, err := Make(cl, alternating(t, "1GiB"), Options{NoRelay: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.WriteChart(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, want := range []string{"<svg", "A-B", "A-C", "×2", "circuits in one iteration", "fill:#DCDCDC"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart has no %q", want)
		}
	}
	if n := strings.Count(svg, "fill:#DCDCDC"); n != 2 {
		t.Errorf("%d dark spans, want 2", n)
	}
}

// TestKernelResidency: a kernel that saves more host compute over the
// job than its load costs is kept in a slot (its load paid once, before
// the job), and the job's time counts the kernel's compute; one used
// once, or whose savings over every use stay under its load, is not
// flashed: the host's compute is cheaper.
func TestKernelResidency(t *testing.T) {
	j := mustCheck(t, &job.Job{Name: "kernels", Iterations: 10, Tasks: tasks(2), Stages: []job.StageSpec{
		{Name: "quantize", Compute: []job.Compute{{Task: "w0", Time: 5 * time.Millisecond, Kernel: "fp32-to-bf16", Bytes: "16MiB"}}},
		{Name: "checksum", Compute: []job.Compute{{Task: "w1", Time: 1400 * time.Microsecond, Kernel: "crc32c-append", Bytes: "16MiB"}}},
		{Name: "send", Sends: []job.Send{{From: "w0", To: "w1", Bytes: "1MiB"}}},
	}})
	cl := testCluster(2)
	one := *j
	one.Iterations = 1
	// The checksum as set-up, run once before ten iterations of the
	// quantizer: used once, it is not flashed.
	setup := *j
	setup.Stages = []job.StageSpec{{Name: "checksum", Once: true, Compute: []job.Compute{{Task: "w1", Time: 3 * time.Millisecond, Kernel: "crc32c-append", Bytes: "16MiB"}}},
		j.Stages[0], j.Stages[2]}
	kt := (16 << 20) * 8 / (DefaultKernelGbps * 1e9) // 1.05 ms
	for _, tc := range []struct {
		j        *job.Job
		resident map[string]bool
	}{
		// Ten uses: 10 x 3.95 ms saved pays for a 5.17 ms load; 10 x
		// 0.35 ms does not.
		{j, map[string]bool{"fp32-to-bf16": true, "crc32c-append": false}},
		// One use each: neither pays.
		{&one, map[string]bool{"fp32-to-bf16": false, "crc32c-append": false}},
		// Every iteration's kernel stays; the set-up's is not flashed.
		{&setup, map[string]bool{"fp32-to-bf16": true, "crc32c-append": false}},
	} {
		p, err := Make(cl, tc.j, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Kernels) != 2 {
			t.Fatalf("kernels %+v", p.Kernels)
		}
		for _, k := range p.Kernels {
			if (k.Slot >= 0) != tc.resident[k.Kernel] {
				t.Errorf("%d iterations: %s slot %d (%s), want resident %v", tc.j.Iterations, k.Kernel, k.Slot, k.Reason, tc.resident[k.Kernel])
			}
		}
		wantLoad, compute, once := 0.0, 5e-3+1.4e-3, 0.0
		switch {
		case tc.j == &setup:
			wantLoad, compute, once = DefaultKernelLoad.Seconds(), kt, 3e-3
		case tc.j.Iterations == 10:
			wantLoad, compute = DefaultKernelLoad.Seconds(), kt+1.4e-3
		}
		comm := (p.TotalSeconds-wantLoad-once)/float64(tc.j.Iterations) - compute
		if p.LoadSeconds != wantLoad || comm <= 0 || comm > 1e-4 {
			t.Errorf("%d iterations: load %v s, total %v s (communication %v s an iteration)", tc.j.Iterations, p.LoadSeconds, p.TotalSeconds, comm)
		}
		var b strings.Builder
		p.WriteText(&b)
		t.Logf("%d iterations:\n%s", tc.j.Iterations, b.String())
	}
	bad := *j
	bad.Stages = append([]job.StageSpec(nil), j.Stages...)
	bad.Stages[0].Compute = []job.Compute{{Task: "w0", Time: time.Millisecond, Kernel: "no-such-kernel", Bytes: "1MiB"}}
	if _, err := Make(cl, &bad, Options{}); err == nil || !strings.Contains(err.Error(), "no-such-kernel") {
		t.Errorf("unknown kernel: %v", err)
	}
}

// TestSeveralTasksAHost: a server runs a task per CPU; tasks on one host
// exchange through memory, so a job of 4 tasks that pair up on two
// two-CPU servers needs no circuit for its busiest pairs, and more tasks
// than the cluster has room for is an error naming the room.
func TestSeveralTasksAHost(t *testing.T) {
	cl := &Cluster{Name: "two servers", RateGbps: DefaultRateGbps, HopLatency: DefaultHop, Reconfig: 10 * time.Millisecond, BringUp: time.Millisecond,
		Hosts: []Host{{Name: "S0", Kind: "cpu", ONICs: []string{"a", "b"}, Ports: 4, Tasks: 2}, {Name: "S1", Kind: "cpu", ONICs: []string{"c", "d"}, Ports: 4, Tasks: 2}}}
	j := mustCheck(t, &job.Job{Name: "pairs", Iterations: 2, Tasks: tasks(4), Stages: []job.StageSpec{
		{Name: "heavy", Sends: []job.Send{{From: "w0", To: "w2", Bytes: "1GiB"}, {From: "w1", To: "w3", Bytes: "1GiB"}}},
		{Name: "light", Sends: []job.Send{{From: "w0", To: "w1", Bytes: "1MiB"}}},
	}})
	p, err := Make(cl, j, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Placement["w0"] != p.Placement["w2"] || p.Placement["w1"] != p.Placement["w3"] || p.Placement["w0"] == p.Placement["w1"] {
		t.Errorf("placement %v: the heavy pairs should share hosts", p.Placement)
	}
	if p.TotalSeconds > 1e-3 {
		t.Errorf("%.6f s: only the light send crosses a circuit", p.TotalSeconds)
	}
	j.Tasks = append(j.Tasks, job.Task{Name: "w4"})
	if _, err := Make(cl, j, Options{}); err == nil || !strings.Contains(err.Error(), "room for 4") {
		t.Errorf("5 tasks on room for 4: %v", err)
	}
}

// TestDeadlines: CadentFlow's objective. Five workers all-reduce round a
// ring, then w1 sends w3 a GiB while w0 sends w2 a MiB that is due 1 ms
// into the stage (weight 5). On the ring's circuits both are relayed
// through w1's and w2's O-NICs, sharing the circuit between them, so the
// small transfer arrives with the big one, 78 ms in. By time that costs
// nothing (the big transfer takes as long either way, and reconfiguring
// would cost the switch's 11 ms twice an iteration); by deadlines the
// plan keeps the small transfer off the big one's circuits, nothing is
// late, and the job takes no less time.
func TestDeadlines(t *testing.T) {
	j := mustCheck(t, &job.Job{Name: "deadlines", Iterations: 4, Tasks: tasks(5), Stages: []job.StageSpec{
		{Name: "ring", Collectives: []job.Collective{{Op: "all-reduce", Group: []string{"w0", "w1", "w2", "w3", "w4"}, Bytes: "64MiB"}}},
		{Name: "exchange", Sends: []job.Send{{From: "w0", To: "w2", Bytes: "1MiB", Deadline: time.Millisecond, Weight: 5}, {From: "w1", To: "w3", Bytes: "1GiB"}}},
	}})
	cl := testCluster(5)
	byTime, err := Make(cl, j, Options{TimeLimit: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	byDeadlines, err := Make(cl, j, Options{Objective: "deadlines", TimeLimit: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if byTime.LateSeconds < 4*5*0.07 {
		t.Errorf("by time: %d reconfigurations, %.3f s late; want the small transfer late every iteration", byTime.Reconfigurations, byTime.LateSeconds)
	}
	if byDeadlines.LateSeconds != 0 || byDeadlines.TotalSeconds < byTime.TotalSeconds-1e-9 {
		t.Errorf("by deadlines: %d reconfigurations, %.6f s late, %.3f s against %.3f; want nothing late, no faster",
			byDeadlines.Reconfigurations, byDeadlines.LateSeconds, byDeadlines.TotalSeconds, byTime.TotalSeconds)
	}
	if _, err := Make(cl, j, Options{Objective: "fastest"}); err == nil || !strings.Contains(err.Error(), `objective "fastest"`) {
		t.Errorf("unknown objective: %v", err)
	}
	t.Logf("by time: %.1f ms, %.1f ms late; by deadlines: %.1f ms, %d reconfigurations an iteration, nothing late",
		byTime.TotalSeconds*1e3, byTime.LateSeconds*1e3, byDeadlines.TotalSeconds*1e3, byDeadlines.Reconfigurations)
}
