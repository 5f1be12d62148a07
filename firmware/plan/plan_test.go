package plan

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// brute is the least total load cost of serving seq with k slots, by
// trying every victim at every miss (a lazy plan is optimal, so that is
// every plan worth trying).
func brute(seq []int, w []int64, k int) int64 {
	best := int64(-1)
	var try func(i int, slots []int, cost int64)
	try = func(i int, slots []int, cost int64) {
		if best >= 0 && cost >= best {
			return
		}
		if i == len(seq) {
			best = cost
			return
		}
		p := seq[i]
		for _, q := range slots {
			if q == p {
				try(i+1, slots, cost)
				return
			}
		}
		if len(slots) < k {
			try(i+1, append(append([]int(nil), slots...), p), cost+w[p])
			return
		}
		for j := range slots {
			s := append([]int(nil), slots...)
			s[j] = p
			try(i+1, s, cost+w[p])
		}
	}
	try(0, nil, 0)
	return best
}

func randomTrace(rng *rand.Rand, n, kernels int) ([]Task, map[string]time.Duration) {
	load := map[string]time.Duration{}
	for i := range kernels {
		load[fmt.Sprintf("k%d", i)] = time.Duration(1+rng.IntN(20)) * time.Millisecond
	}
	tasks := make([]Task, n)
	for i := range tasks {
		tasks[i] = Task{Kernel: fmt.Sprintf("k%d", rng.IntN(kernels)), Duration: time.Duration(rng.IntN(5)) * time.Millisecond}
	}
	return tasks, load
}

// check holds a plan to the rules: a hit finds its kernel in its slot, a
// load puts it there, at most slots are used, and the totals add up.
func check(t *testing.T, r Result, tasks []Task, load map[string]time.Duration) {
	t.Helper()
	in := make([]string, r.Slots)
	var total time.Duration
	loads := 0
	for i, s := range r.Steps {
		if s.Slot < 0 || s.Slot >= r.Slots || s.Kernel != tasks[i].Kernel {
			t.Fatalf("step %d: %+v", i, s)
		}
		if s.Hit {
			if in[s.Slot] != s.Kernel || s.Load != 0 {
				t.Fatalf("step %d: a hit on slot %d, which holds %q", i, s.Slot, in[s.Slot])
			}
		} else {
			for j, k := range in {
				if k == s.Kernel {
					t.Fatalf("step %d: loads %s, already in slot %d", i, k, j)
				}
			}
			if in[s.Slot] != s.Evict || s.Load != load[s.Kernel] {
				t.Fatalf("step %d: evicts %q from slot %d holding %q, load %v", i, s.Evict, s.Slot, in[s.Slot], s.Load)
			}
			in[s.Slot] = s.Kernel
			total += s.Load
			loads++
		}
		if s.Stall != s.Ready-s.Arrive || s.End != s.Ready+tasks[i].Duration || (i > 0 && s.Ready < r.Steps[i-1].End+s.Load) {
			t.Fatalf("step %d times: %+v", i, s)
		}
	}
	if total != r.Reflash || loads != r.Loads {
		t.Fatalf("totals %v/%d, steps add to %v/%d", r.Reflash, r.Loads, total, loads)
	}
}

// TestOptimalMatchesBruteForce: on small random traces the optimal plan
// costs exactly the brute-force minimum, and the online policies never
// less.
func TestOptimalMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for c := range 400 {
		n, kernels, slots := 1+rng.IntN(12), 1+rng.IntN(5), 1+rng.IntN(3)
		tasks, load := randomTrace(rng, n, kernels)
		ids := map[string]int{}
		var w []int64
		seq := make([]int, n)
		for i, tk := range tasks {
			if _, ok := ids[tk.Kernel]; !ok {
				ids[tk.Kernel] = len(w)
				w = append(w, int64(load[tk.Kernel]))
			}
			seq[i] = ids[tk.Kernel]
		}
		want := time.Duration(brute(seq, w, slots))
		for _, p := range Policies {
			r, err := Plan(p, slots, tasks, load)
			if err != nil {
				t.Fatal(err)
			}
			check(t, r, tasks, load)
			if p == "optimal" && r.Reflash != want || r.Reflash < want {
				t.Fatalf("case %d (%d tasks, %d kernels, %d slots) %s: %v, brute force %v", c, n, kernels, slots, p, r.Reflash, want)
			}
		}
	}
}

// TestCostAwareKeepsExpensiveKernels: with one costly kernel used every
// other task and cheap ones streaming past, LRU reloads the costly one
// and Landlord keeps it.
func TestCostAwareKeepsExpensiveKernels(t *testing.T) {
	load := map[string]time.Duration{"big": 100 * time.Millisecond}
	var tasks []Task
	for i := range 20 {
		tasks = append(tasks, Task{Kernel: "big"})
		for j := range 2 {
			name := fmt.Sprintf("small%d", 2*i+j)
			load[name] = time.Millisecond
			tasks = append(tasks, Task{Kernel: name})
		}
	}
	res := map[string]time.Duration{}
	for _, p := range Policies {
		r, err := Plan(p, 2, tasks, load)
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, tasks, load)
		res[p] = r.Reflash
	}
	if res["optimal"] != 140*time.Millisecond || res["cost-aware"] > 2*res["optimal"] || res["lru"] < 10*res["optimal"] {
		t.Errorf("reflash: %v", res)
	}
}

func TestPlanErrors(t *testing.T) {
	load := map[string]time.Duration{"a": time.Millisecond, "z": 0}
	for _, c := range []struct {
		policy string
		slots  int
		tasks  []Task
		want   string
	}{
		{"optimal", 0, nil, "slots 0: want at least 1"},
		{"belady", 1, nil, "policy \"belady\""},
		{"lru", 1, []Task{{Kernel: "b"}}, "tasks[0]: kernel \"b\" has no load time"},
		{"lru", 1, []Task{{Kernel: "z"}}, "kernel \"z\": load time 0s: must be positive"},
		{"lru", 1, []Task{{Kernel: "a", Start: -1}}, "tasks[0]: start and duration must not be negative"},
	} {
		if _, err := Plan(c.policy, c.slots, c.tasks, load); err == nil || err.Error()[:len(c.want)] != c.want {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestTimes: a task waits for the one before and for its kernel's load.
func TestTimes(t *testing.T) {
	load := map[string]time.Duration{"a": 5 * time.Millisecond, "b": 3 * time.Millisecond}
	tasks := []Task{
		{Kernel: "a", Start: 10 * time.Millisecond, Duration: 2 * time.Millisecond}, // ready 15, end 17
		{Kernel: "a", Start: 12 * time.Millisecond, Duration: time.Millisecond},     // hit, waits for 17, end 18
		{Kernel: "b", Duration: time.Millisecond},                                   // arrives 18, ready 21, end 22
	}
	r, err := Plan("optimal", 1, tasks, load)
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	for i, want := range [][3]time.Duration{{10 * ms, 15 * ms, 17 * ms}, {12 * ms, 17 * ms, 18 * ms}, {18 * ms, 21 * ms, 22 * ms}} {
		if s := r.Steps[i]; s.Arrive != want[0] || s.Ready != want[1] || s.End != want[2] {
			t.Errorf("task %d: %+v, want arrive/ready/end %v", i, s, want)
		}
	}
	if r.Stall != 5*ms+5*ms+3*ms || r.End != 22*ms || r.Steps[2].Evict != "a" {
		t.Errorf("%+v", r)
	}
}

// TestLargeTrace: 10,000 tasks over 40 kernels and 4 slots plan, and the
// optimum is no worse than the online policies (BenchmarkOptimal times it).
func TestLargeTrace(t *testing.T) {
	tasks, load := zipfTrace(10000, 40)
	opt, err := Plan("optimal", 4, tasks, load)
	if err != nil {
		t.Fatal(err)
	}
	check(t, opt, tasks, load)
	for _, p := range []string{"lru", "cost-aware"} {
		r, err := Plan(p, 4, tasks, load)
		if err != nil {
			t.Fatal(err)
		}
		if r.Reflash < opt.Reflash {
			t.Errorf("%s %v beats the optimum %v", p, r.Reflash, opt.Reflash)
		}
	}
}

// zipfTrace draws kernels with Zipf-like popularity and varied costs.
func zipfTrace(n, kernels int) ([]Task, map[string]time.Duration) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(rng, 1.2, 2, uint64(kernels-1))
	load := map[string]time.Duration{}
	tasks := make([]Task, n)
	for i := range tasks {
		k := fmt.Sprintf("k%02d", z.Uint64())
		if _, ok := load[k]; !ok {
			load[k] = time.Duration(1+rng.IntN(50)) * time.Millisecond
		}
		tasks[i] = Task{Kernel: k, Duration: time.Millisecond}
	}
	return tasks, load
}

func BenchmarkOptimal10k(b *testing.B) {
	tasks, load := zipfTrace(10000, 40)
	for b.Loop() {
		if _, err := Plan("optimal", 4, tasks, load); err != nil {
			b.Fatal(err)
		}
	}
}
