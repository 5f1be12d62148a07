// Package plan decides which kernels an O-NIC keeps in its reconfigurable
// slots as a sequence of tasks comes: a load/evict plan and what it costs
// in reflash time. It is weighted paging — slots are the cache, kernels
// the pages, a partial reconfiguration the miss, and its time the page's
// weight — with three policies: Optimal (offline, the minimum total
// reflash time, by min-cost flow), LRU and CostAware (online; the
// Landlord rule, which keeps expensive kernels longer).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package plan

import (
	"fmt"
	"time"
)

// Task is one task of a trace: the kernel it needs, when it arrives (0:
// as soon as the one before it has finished) and how long it runs once
// its kernel is loaded.
type Task struct {
	Kernel   string        `mapstructure:"kernel" json:"kernel"`
	Start    time.Duration `mapstructure:"start" json:"start_ns"`
	Duration time.Duration `mapstructure:"duration" json:"duration_ns"`
}

// Step is what the plan does for one task.
type Step struct {
	Task   int    `json:"task"`
	Kernel string `json:"kernel"`
	Hit    bool   `json:"hit"`  // the kernel was in a slot already
	Slot   int    `json:"slot"` // where it runs
	// Evict is the kernel the load replaced (empty: the slot was free or
	// it was a hit).
	Evict string        `json:"evict,omitempty"`
	Load  time.Duration `json:"load_ns"` // reflash time spent for it (0 on a hit)
	// Arrive, Ready and End are the task's times: it arrives, its kernel
	// is loaded (the O-NIC reconfigures one slot at a time, after the
	// task before has finished), and it ends.
	Arrive time.Duration `json:"arrive_ns"`
	Ready  time.Duration `json:"ready_ns"`
	End    time.Duration `json:"end_ns"`
	// Stall is Ready - Arrive: how long the task waited.
	Stall time.Duration `json:"stall_ns"`
}

// Result is a plan and its totals.
type Result struct {
	Policy  string        `json:"policy"`
	Slots   int           `json:"slots"`
	Steps   []Step        `json:"steps"`
	Loads   int           `json:"loads"`
	Reflash time.Duration `json:"reflash_ns"` // total load time
	Stall   time.Duration `json:"stall_ns"`   // total task stall
	End     time.Duration `json:"end_ns"`     // when the last task ends
}

// Policies by name.
var Policies = []string{"optimal", "lru", "cost-aware"}

// Plan makes the plan for tasks on an O-NIC with slots slots, by policy;
// load gives each kernel's load time (every kernel a task needs must be
// in it, at a positive time).
func Plan(policy string, slots int, tasks []Task, load map[string]time.Duration) (Result, error) {
	if slots < 1 {
		return Result{}, fmt.Errorf("slots %d: want at least 1", slots)
	}
	ids := map[string]int{}
	var w []int64
	var names []string
	seq := make([]int, len(tasks))
	for i, t := range tasks {
		id, ok := ids[t.Kernel]
		if !ok {
			c, ok := load[t.Kernel]
			if !ok {
				return Result{}, fmt.Errorf("tasks[%d]: kernel %q has no load time", i, t.Kernel)
			}
			if c <= 0 {
				return Result{}, fmt.Errorf("kernel %q: load time %v: must be positive", t.Kernel, c)
			}
			id = len(w)
			ids[t.Kernel] = id
			w = append(w, int64(c))
			names = append(names, t.Kernel)
		}
		if t.Start < 0 || t.Duration < 0 {
			return Result{}, fmt.Errorf("tasks[%d]: start and duration must not be negative", i)
		}
		seq[i] = id
	}
	var victim chooser
	switch policy {
	case "optimal":
		victim = optimal(seq, w, slots)
	case "lru":
		victim = lru()
	case "cost-aware":
		victim = landlord(w)
	default:
		return Result{}, fmt.Errorf("policy %q: want one of %v", policy, Policies)
	}
	r := run(seq, w, names, slots, victim)
	r.Policy = policy
	// Names and times.
	var prevEnd time.Duration
	for i := range r.Steps {
		s := &r.Steps[i]
		s.Arrive = max(tasks[i].Start, 0)
		if tasks[i].Start == 0 {
			s.Arrive = prevEnd
		}
		s.Ready = max(s.Arrive, prevEnd) + s.Load
		s.Stall = s.Ready - s.Arrive
		s.End = s.Ready + tasks[i].Duration
		prevEnd = s.End
		r.Stall += s.Stall
	}
	r.End = prevEnd
	return r, nil
}

// chooser picks which slot a miss at task i loads into, given the slots'
// contents (-1: free); it is told of every access too.
type chooser interface {
	access(i, kernel, slot int)
	victim(i int, slots []int) int
}

// run plays a policy over the sequence: the cost of every miss, which
// slot it used, what it evicted. Free slots are used first, lowest
// first.
func run(seq []int, w []int64, names []string, k int, c chooser) Result {
	slots := make([]int, k)
	for i := range slots {
		slots[i] = -1
	}
	r := Result{Slots: k, Steps: make([]Step, len(seq))}
	for i, p := range seq {
		s := &r.Steps[i]
		s.Task, s.Kernel, s.Slot = i, names[p], -1
		for j, q := range slots {
			if q == p {
				s.Hit, s.Slot = true, j
			}
		}
		if !s.Hit {
			for j, q := range slots {
				if q == -1 {
					s.Slot = j
					break
				}
			}
			if s.Slot < 0 {
				s.Slot = c.victim(i, slots)
				s.Evict = names[slots[s.Slot]]
			}
			slots[s.Slot] = p
			s.Load = time.Duration(w[p])
			r.Loads++
			r.Reflash += s.Load
		}
		c.access(i, p, s.Slot)
	}
	return r
}

// lruChooser evicts the least recently used kernel.
type lruChooser struct{ last map[int]int } // slot -> last access

func lru() *lruChooser { return &lruChooser{last: map[int]int{}} }

func (l *lruChooser) access(i, _, slot int) { l.last[slot] = i }
func (l *lruChooser) victim(_ int, slots []int) int {
	best := 0
	for j := range slots {
		if l.last[j] < l.last[best] {
			best = j
		}
	}
	return best
}

// landlordChooser is Young's Landlord (GreedyDual for weighted caching):
// each loaded kernel holds credit, set to its load cost when loaded or
// used; a miss takes the least credit from every kernel and evicts one
// left with none (the least recently used of those). It is k-competitive
// and keeps costly kernels in proportion to their cost.
type landlordChooser struct {
	w      []int64
	credit map[int]int64 // slot -> credit
	last   map[int]int
}

func landlord(w []int64) *landlordChooser {
	return &landlordChooser{w: w, credit: map[int]int64{}, last: map[int]int{}}
}

func (l *landlordChooser) access(i, kernel, slot int) {
	l.credit[slot], l.last[slot] = l.w[kernel], i
}

func (l *landlordChooser) victim(_ int, slots []int) int {
	least := l.credit[0]
	for j := range slots {
		least = min(least, l.credit[j])
	}
	best := -1
	for j := range slots {
		l.credit[j] -= least
		if l.credit[j] == 0 && (best < 0 || l.last[j] < l.last[best]) {
			best = j
		}
	}
	return best
}
