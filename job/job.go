// Package job is the description of a distributed job that `onic plan`
// maps onto an O-NIC cluster: the tasks to place, and the stages every
// iteration runs — each stage the tasks' compute, then their
// communication (point-to-point sends and collectives). It reads the
// documented YAML format (docs/plan.md), writes Megatron-style jobs from
// their parallel degrees (Megatron), and imports ASTRA-sim's text
// workloads (ImportASTRA).
//
// A job is bulk-synchronous, as data-, tensor- and pipeline-parallel
// training is: a stage's communication starts once its compute is done
// everywhere, and the next stage starts once the communication is done.
// Collectives are expanded into the steps of their ring algorithms (Expand)
// so a planner sees, for each step, which task sends how many bytes to
// which.
package job

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"onic/internal/readfile"
	"onic/internal/yamlcfg"
)

// Job is a job as its YAML file gives it.
type Job struct {
	Name string `mapstructure:"name"`
	// Iterations is how many times the stages run (default 1).
	Iterations int         `mapstructure:"iterations"`
	Tasks      []Task      `mapstructure:"tasks"`
	Stages     []StageSpec `mapstructure:"stages"`
}

// Task is a unit the planner places on one host of the cluster: a GPU's
// worth of work, a CPU's, or an O-NIC kernel's.
type Task struct {
	Name string `mapstructure:"name"`
	// Kind is the device it needs: gpu, cpu (a server) — default the
	// cluster's hosts whatever their kind.
	Kind string `mapstructure:"kind"`
}

// StageSpec is one stage: compute, then communication.
type StageSpec struct {
	Name string `mapstructure:"name"`
	// Once makes the stage set-up: it runs once, before the first
	// iteration (loading weights, a warm-up). Set-up stages come first.
	Once        bool         `mapstructure:"once"`
	Compute     []Compute    `mapstructure:"compute"`
	Sends       []Send       `mapstructure:"sends"`
	Collectives []Collective `mapstructure:"collectives"`
}

// Compute is a task's compute in a stage: Time on whatever device it is
// placed, or a time per device kind (Cost). With Kernel, the same work
// may instead run as that library kernel over Bytes on the task's O-NIC
// — if the planner keeps the kernel resident in one of its slots.
type Compute struct {
	Task   string                   `mapstructure:"task"`
	Time   time.Duration            `mapstructure:"time"`
	Cost   map[string]time.Duration `mapstructure:"cost"` // by kind: gpu, cpu
	Kernel string                   `mapstructure:"kernel"`
	Bytes  string                   `mapstructure:"bytes"` // the kernel's input
}

// Send is a point-to-point transfer (a pipeline send, a gradient to a
// parameter server).
type Send struct {
	From  string `mapstructure:"from"`
	To    string `mapstructure:"to"`
	Bytes string `mapstructure:"bytes"` // with a unit: 64MiB
	// Deadline is when, counted from the start of its stage, the data
	// is wanted (0: none); Weight how much its lateness counts (default
	// 1): CadentFlow's per-flow metrics, for the deadlines objective.
	Deadline time.Duration `mapstructure:"deadline"`
	Weight   float64       `mapstructure:"weight"`
}

// Collective is a collective over a group of tasks, each holding Bytes
// (the whole buffer: an all-reduce's gradients, an all-gather's result).
type Collective struct {
	Op    string   `mapstructure:"op"` // all-reduce, reduce-scatter, all-gather, all-to-all
	Group []string `mapstructure:"group"`
	Bytes string   `mapstructure:"bytes"`
	// Deadline and Weight as a Send's, for the collective's last step.
	Deadline time.Duration `mapstructure:"deadline"`
	Weight   float64       `mapstructure:"weight"`
}

// Limits.
const (
	MaxBytes      = 4 << 20 // a job file
	MaxTasks      = 4096
	MaxStages     = 4096
	MaxIterations = 1 << 20
	MaxTransfer   = 1 << 40 // bytes in one send or collective
	MaxCompute    = time.Hour
)

// Load reads a job from r (name names it in errors) and checks it.
func Load(name string, r io.Reader) (*Job, error) {
	var j Job
	if err := yamlcfg.Decode(name, r, &j, yamlcfg.Options{MaxBytes: MaxBytes, Defaulted: map[string]bool{"iterations": true}}); err != nil {
		return nil, err
	}
	if err := j.Check(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &j, nil
}

// LoadFile is Load from the regular file at path.
func LoadFile(path string) (*Job, error) {
	b, err := readfile.Read(path, MaxBytes)
	if err != nil {
		return nil, err
	}
	return Load(path, bytes.NewReader(b))
}

// Check applies defaults and checks every field; the error names the
// field.
func (j *Job) Check() error {
	if j.Iterations == 0 {
		j.Iterations = 1
	}
	switch {
	case j.Name == "":
		return fmt.Errorf("name: a job needs a name")
	case j.Iterations < 1 || j.Iterations > MaxIterations:
		return fmt.Errorf("iterations: %d must be 1 to %d", j.Iterations, MaxIterations)
	case len(j.Tasks) == 0 || len(j.Tasks) > MaxTasks:
		return fmt.Errorf("tasks: %d of them; want 1 to %d", len(j.Tasks), MaxTasks)
	case len(j.Stages) == 0 || len(j.Stages) > MaxStages:
		return fmt.Errorf("stages: %d of them; want 1 to %d", len(j.Stages), MaxStages)
	}
	idx := map[string]int{}
	for i, t := range j.Tasks {
		if t.Name == "" {
			return fmt.Errorf("tasks[%d].name: every task needs a name", i)
		}
		if _, dup := idx[t.Name]; dup {
			return fmt.Errorf("tasks[%d].name: %q is already a task", i, t.Name)
		}
		if t.Kind != "" && t.Kind != "gpu" && t.Kind != "cpu" {
			return fmt.Errorf("tasks[%d].kind: %q must be gpu or cpu", i, t.Kind)
		}
		idx[t.Name] = i
	}
	task := func(p, name string) error {
		if _, ok := idx[name]; !ok {
			return fmt.Errorf("%s: %q is not a task", p, name)
		}
		return nil
	}
	for i, s := range j.Stages {
		p := fmt.Sprintf("stages[%d]", i)
		if s.Once && i > 0 && !j.Stages[i-1].Once {
			return fmt.Errorf("%s.once: set-up stages come first, before the stages every iteration runs", p)
		}
		for k, c := range s.Compute {
			q := fmt.Sprintf("%s.compute[%d]", p, k)
			if err := task(q+".task", c.Task); err != nil {
				return err
			}
			if c.Time < 0 || c.Time > MaxCompute {
				return fmt.Errorf("%s.time: %v must be 0 to %v", q, c.Time, MaxCompute)
			}
			for kind, d := range c.Cost {
				if kind != "gpu" && kind != "cpu" {
					return fmt.Errorf("%s.cost: %q is not a device kind (gpu, cpu)", q, kind)
				}
				if d < 0 || d > MaxCompute {
					return fmt.Errorf("%s.cost.%s: %v must be 0 to %v", q, kind, d, MaxCompute)
				}
			}
			if c.Time != 0 && len(c.Cost) > 0 {
				return fmt.Errorf("%s: give time or cost, not both", q)
			}
			if (c.Kernel == "") != (c.Bytes == "") {
				return fmt.Errorf("%s: kernel and bytes go together (the kernel's input)", q)
			}
			if c.Bytes != "" {
				if _, err := readfile.ParseSize(c.Bytes, 1, MaxTransfer); err != nil {
					return fmt.Errorf("%s.bytes: %v", q, err)
				}
			}
		}
		for k, snd := range s.Sends {
			q := fmt.Sprintf("%s.sends[%d]", p, k)
			if err := task(q+".from", snd.From); err != nil {
				return err
			}
			if err := task(q+".to", snd.To); err != nil {
				return err
			}
			if snd.From == snd.To {
				return fmt.Errorf("%s: a task does not send to itself", q)
			}
			if _, err := readfile.ParseSize(snd.Bytes, 1, MaxTransfer); err != nil {
				return fmt.Errorf("%s.bytes: %v", q, err)
			}
			if err := checkDeadline(q, snd.Deadline, snd.Weight); err != nil {
				return err
			}
		}
		for k, c := range s.Collectives {
			q := fmt.Sprintf("%s.collectives[%d]", p, k)
			switch c.Op {
			case "all-reduce", "reduce-scatter", "all-gather", "all-to-all":
			default:
				return fmt.Errorf("%s.op: %q must be all-reduce, reduce-scatter, all-gather or all-to-all", q, c.Op)
			}
			if len(c.Group) < 2 {
				return fmt.Errorf("%s.group: a collective needs two tasks or more, not %d", q, len(c.Group))
			}
			in := map[string]bool{}
			for g, name := range c.Group {
				if err := task(fmt.Sprintf("%s.group[%d]", q, g), name); err != nil {
					return err
				}
				if in[name] {
					return fmt.Errorf("%s.group[%d]: %q is in the group twice", q, g, name)
				}
				in[name] = true
			}
			if _, err := readfile.ParseSize(c.Bytes, 1, MaxTransfer); err != nil {
				return fmt.Errorf("%s.bytes: %v", q, err)
			}
			if err := checkDeadline(q, c.Deadline, c.Weight); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDeadline checks a transfer's deadline and weight (p its path).
func checkDeadline(p string, d time.Duration, w float64) error {
	switch {
	case d < 0 || d > MaxCompute:
		return fmt.Errorf("%s.deadline: %v must be 0 to %v", p, d, MaxCompute)
	case !(w >= 0 && w <= 1e6):
		return fmt.Errorf("%s.weight: %g must be 0 to 1e6", p, w)
	case w != 0 && d == 0:
		return fmt.Errorf("%s.weight: a weight counts only with a deadline", p)
	}
	return nil
}

// Transfer is bytes from one task to another; Deadline (from the start
// of its stage; 0: none) and Weight are its lateness's.
type Transfer struct {
	From, To int // task indices
	Bytes    int64
	Deadline time.Duration
	Weight   float64
}

// Step is transfers that go at once; a stage's steps go one after
// another.
type Step []Transfer

// Stage is a stage expanded: each task's compute (by task index, per
// device kind; "" for any), the kernel that may do it instead (by task
// index; Name "" for none), and the communication steps.
type Stage struct {
	Name    string
	Compute []map[string]time.Duration
	Kernels []KernelWork
	Steps   []Step
}

// KernelWork is work an O-NIC kernel may do instead of the host: Bytes
// through library kernel Name.
type KernelWork struct {
	Name  string
	Bytes int64
}

// Expand expands the job's stages: each collective into its ring
// algorithm's steps over the group in the order given — an all-reduce
// into 2(N-1) steps in which each member sends Bytes/N to the next
// (reduce-scatter, then all-gather), a reduce-scatter or all-gather into
// N-1 such steps, an all-to-all into one step of Bytes/N between every
// ordered pair — and the stage's sends into its first step, beside the
// collectives' first steps (collectives of one stage run at once, step
// by step).
func (j *Job) Expand() []Stage {
	idx := map[string]int{}
	for i, t := range j.Tasks {
		idx[t.Name] = i
	}
	out := make([]Stage, len(j.Stages))
	for i, s := range j.Stages {
		st := Stage{Name: s.Name, Compute: make([]map[string]time.Duration, len(j.Tasks)), Kernels: make([]KernelWork, len(j.Tasks))}
		if st.Name == "" {
			st.Name = fmt.Sprintf("stage%d", i)
		}
		for _, c := range s.Compute {
			m := st.Compute[idx[c.Task]]
			if m == nil {
				m = map[string]time.Duration{}
				st.Compute[idx[c.Task]] = m
			}
			if len(c.Cost) > 0 {
				for k, d := range c.Cost {
					m[k] += d
				}
			} else {
				m[""] += c.Time
			}
			if c.Kernel != "" {
				b, _ := readfile.ParseSize(c.Bytes, 1, MaxTransfer)
				st.Kernels[idx[c.Task]] = KernelWork{c.Kernel, b}
			}
		}
		var steps []Step
		at := func(k int) *Step {
			for len(steps) <= k {
				steps = append(steps, nil)
			}
			return &steps[k]
		}
		weight := func(d time.Duration, w float64) float64 {
			if d > 0 && w == 0 {
				return 1
			}
			return w
		}
		for _, snd := range s.Sends {
			b, _ := readfile.ParseSize(snd.Bytes, 1, MaxTransfer)
			*at(0) = append(*at(0), Transfer{idx[snd.From], idx[snd.To], b, snd.Deadline, weight(snd.Deadline, snd.Weight)})
		}
		for _, c := range s.Collectives {
			b, _ := readfile.ParseSize(c.Bytes, 1, MaxTransfer)
			n := len(c.Group)
			share := (b + int64(n) - 1) / int64(n)
			rounds := 0
			switch c.Op {
			case "all-reduce":
				rounds = 2 * (n - 1)
			case "reduce-scatter", "all-gather":
				rounds = n - 1
			case "all-to-all":
				for a := range n {
					for z := range n {
						if a != z {
							*at(0) = append(*at(0), Transfer{idx[c.Group[a]], idx[c.Group[z]], share, c.Deadline, weight(c.Deadline, c.Weight)})
						}
					}
				}
			}
			for r := range rounds {
				for m := range n {
					tr := Transfer{From: idx[c.Group[m]], To: idx[c.Group[(m+1)%n]], Bytes: share}
					if r == rounds-1 { // the collective is done with its last step
						tr.Deadline, tr.Weight = c.Deadline, weight(c.Deadline, c.Weight)
					}
					*at(r) = append(*at(r), tr)
				}
			}
		}
		st.Steps = steps
		out[i] = st
	}
	return out
}
