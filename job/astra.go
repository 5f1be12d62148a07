package job

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ImportASTRA reads a workload in ASTRA-sim 1.0's text format — the
// parallelism on the first line, the layer count on the second, then a
// line a layer: name, a reserved field, and for the forward pass, the
// input gradient and the weight gradient each a compute time (cycles), a
// collective (NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL) and
// its size in bytes, then the update delay (cycles) — as a job of
// workers data-parallel tasks (w0, w1, ...), a cycle lasting cycle. DATA
// and MICRO workloads are read (every collective over all workers); the
// hybrid ones need ASTRA-sim's dimension groups and are refused. The
// forward pass is one stage (the layers' compute in order, their
// forward collectives); the backward pass a stage a layer, last layer
// first (input- and weight-gradient compute and collectives, and the
// update delay).
func ImportASTRA(name string, r io.Reader, workers int, cycle time.Duration) (*Job, error) {
	if workers < 2 || workers > MaxTasks {
		return nil, fmt.Errorf("%s: %d workers: want 2 to %d", name, workers, MaxTasks)
	}
	if cycle <= 0 || cycle > time.Millisecond {
		return nil, fmt.Errorf("%s: cycle %v: want above 0 and at most 1ms", name, cycle)
	}
	sc := bufio.NewScanner(io.LimitReader(r, MaxBytes+1))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	line, read := 0, 0
	next := func() ([]string, bool) {
		for sc.Scan() {
			line++
			read += len(sc.Bytes()) + 1
			if f := strings.Fields(sc.Text()); len(f) > 0 {
				return f, true
			}
		}
		return nil, false
	}
	f, ok := next()
	if !ok {
		return nil, fmt.Errorf("%s: empty", name)
	}
	if p := f[0]; p != "DATA" && p != "MICRO" {
		return nil, fmt.Errorf("%s:%d: parallelism %q: only DATA and MICRO workloads are imported (every collective over all workers)", name, line, p)
	}
	f, ok = next()
	layers := 0
	if ok {
		layers, _ = strconv.Atoi(f[0])
	}
	if !ok || len(f) != 1 || layers < 1 || layers > MaxStages-1 {
		return nil, fmt.Errorf("%s:%d: want the layer count, 1 to %d", name, line, MaxStages-1)
	}
	j := &Job{Name: strings.TrimSuffix(name[strings.LastIndexAny(name, "/\\")+1:], ".txt")}
	var all []string
	for w := range workers {
		n := fmt.Sprintf("w%d", w)
		j.Tasks = append(j.Tasks, Task{Name: n})
		all = append(all, n)
	}
	ops := map[string]string{"NONE": "", "ALLREDUCE": "all-reduce", "ALLGATHER": "all-gather", "REDUCESCATTER": "reduce-scatter", "ALLTOALL": "all-to-all"}
	fwd := StageSpec{Name: "forward"}
	var back []StageSpec
	for range layers {
		f, ok := next()
		if !ok {
			return nil, fmt.Errorf("%s: %d layers announced, %d found", name, layers, len(back))
		}
		if len(f) < 12 {
			return nil, fmt.Errorf("%s:%d: a layer has 12 fields (name, reserved, then compute, collective and size for the forward pass, input and weight gradients, and the update delay), not %d", name, line, len(f))
		}
		var n [12]int64
		for _, k := range []int{2, 4, 5, 7, 8, 10, 11} {
			v, err := strconv.ParseInt(f[k], 10, 64)
			if err != nil || v < 0 || v > int64(MaxCompute/cycle) && k != 4 && k != 7 && k != 10 || v > MaxTransfer {
				return nil, fmt.Errorf("%s:%d: field %d %q: want a whole number in range", name, line, k+1, f[k])
			}
			n[k] = v
		}
		for _, k := range []int{3, 6, 9} {
			if _, known := ops[f[k]]; !known {
				return nil, fmt.Errorf("%s:%d: field %d %q: not a collective ASTRA-sim names (NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL)", name, line, k+1, f[k])
			}
		}
		layer := f[0]
		compute := func(st *StageSpec, cycles int64) {
			if cycles == 0 {
				return
			}
			for _, w := range all {
				st.Compute = append(st.Compute, Compute{Task: w, Time: time.Duration(cycles) * cycle})
			}
		}
		coll := func(st *StageSpec, op string, bytes int64) {
			if o := ops[op]; o != "" && bytes > 0 {
				st.Collectives = append(st.Collectives, Collective{Op: o, Group: all, Bytes: fmt.Sprintf("%dB", bytes)})
			}
		}
		compute(&fwd, n[2])
		coll(&fwd, f[3], n[4])
		b := StageSpec{Name: "backward-" + layer}
		compute(&b, n[5]+n[8]+n[11])
		coll(&b, f[6], n[7])
		coll(&b, f[9], n[10])
		back = append(back, b)
	}
	if read > MaxBytes {
		return nil, fmt.Errorf("%s: more than %d bytes", name, MaxBytes)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	j.Stages = append(j.Stages, fwd)
	for i := len(back) - 1; i >= 0; i-- {
		j.Stages = append(j.Stages, back[i])
	}
	if err := j.Check(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return j, nil
}
