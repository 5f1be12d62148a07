package job

import (
	"os"
	"strings"
	"testing"
	"time"
)

const sample = `name: data-parallel
iterations: 2
tasks:
  - {name: w0, kind: gpu}
  - {name: w1, kind: gpu}
  - {name: w2, kind: gpu}
stages:
  - name: compute
    compute:
      - {task: w0, cost: {gpu: 3ms, cpu: 30ms}}
      - {task: w1, time: 3ms}
  - name: exchange
    sends: [{from: w0, to: w1, bytes: 64MiB}]
    collectives: [{op: all-reduce, group: [w0, w1, w2], bytes: 3MiB}]
`

// TestLoadAndExpand: the documented format reads, and a 3-task ring
// all-reduce expands into 4 steps of each task sending a third of the
// bytes to the next, the send beside the first.
func TestLoadAndExpand(t *testing.T) {
	j, err := Load("dp.yaml", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	st := j.Expand()
	if len(st) != 2 || st[0].Compute[0]["gpu"] != 3*time.Millisecond || st[0].Compute[1][""] != 3*time.Millisecond || st[0].Compute[2] != nil {
		t.Fatalf("compute: %+v", st[0].Compute)
	}
	steps := st[1].Steps
	if len(steps) != 4 || len(steps[0]) != 4 || len(steps[3]) != 3 {
		t.Fatalf("steps: %+v", steps)
	}
	if steps[0][0] != (Transfer{From: 0, To: 1, Bytes: 64 << 20}) || steps[1][2] != (Transfer{From: 2, To: 0, Bytes: 1 << 20}) {
		t.Errorf("steps: %+v", steps)
	}
}

// TestLoadErrors: every mistake is one line naming the field.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"iterations: 2", "iterations: 0", "iterations: 0 is not a value here"},
		{"{name: w2, kind: gpu}", "{name: w2, kind: tpu}", `tasks[2].kind: "tpu" must be gpu or cpu`},
		{"{name: w2, kind: gpu}", "{name: w1, kind: gpu}", `tasks[2].name: "w1" is already a task`},
		{"to: w1, bytes: 64MiB", "to: w9, bytes: 64MiB", `stages[1].sends[0].to: "w9" is not a task`},
		{"to: w1, bytes: 64MiB", "to: w1, bytes: 64", `stages[1].sends[0].bytes: "64": a size needs a unit`},
		{"op: all-reduce", "op: broadcast", `stages[1].collectives[0].op: "broadcast"`},
		{"group: [w0, w1, w2]", "group: [w0, w0]", `group[1]: "w0" is in the group twice`},
		{"time: 3ms", "time: 3", "stages[0].compute[1].time"},
		{"time: 3ms", "time: 3ms, cost: {gpu: 1ms}", "give time or cost, not both"},
		{"stages:", "stagez:", "stagez"},
	} {
		_, err := Load("dp.yaml", strings.NewReader(strings.Replace(sample, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s -> %s: got %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
}

// TestMegatron: dp 2, tp 2, pp 2 with 4 micro-batches is 8 GPUs; each
// iteration 5 forward and 5 backward waves and the gradients'
// all-reduce; a forward wave's tensor-parallel groups all-reduce and its
// pipeline stages send on.
func TestMegatron(t *testing.T) {
	j, err := Megatron(MegatronConfig{DP: 2, TP: 2, PP: 2, Layers: 8, Hidden: 1024, Seq: 512, MicroBatch: 1, MicroBatches: 4, BytesPer: 2, LayerTime: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Tasks) != 8 || len(j.Stages) != 11 || j.Stages[10].Name != "gradients" {
		t.Fatalf("%d tasks, %d stages", len(j.Tasks), len(j.Stages))
	}
	f0 := j.Stages[0] // wave 0: pipeline stage 0's first micro-batch, both data-parallel ranks
	if len(f0.Compute) != 4 || len(f0.Collectives) != 2 || len(f0.Sends) != 4 || f0.Sends[0].To != "gpu-d0-p1-t0" {
		t.Errorf("forward wave 0: %+v", f0)
	}
	if f0.Compute[0].Time != 200*time.Microsecond { // 4 layers over tp 2
		t.Errorf("forward compute %v", f0.Compute[0].Time)
	}
	if g := j.Stages[10]; len(g.Collectives) != 4 || len(g.Collectives[0].Group) != 2 || g.Collectives[0].Bytes != "50331648B" {
		t.Errorf("gradients: %+v", g.Collectives[0]) // 12*1024^2*4/2 parameters, 2 bytes each
	}
	if _, err := Megatron(MegatronConfig{DP: 1, TP: 1, PP: 3, Layers: 8, Hidden: 1, Seq: 1, MicroBatch: 1, MicroBatches: 1, BytesPer: 2, LayerTime: time.Microsecond}); err == nil {
		t.Error("8 layers on 3 pipeline stages: no error")
	}
}

// TestImportASTRA: the head of ASTRA-sim's public ResNet-50
// data-parallel workload (testdata/README.md) is 8 workers, a forward
// stage and one backward stage a layer, last layer first, each all-
// reducing its weight gradient.
func TestImportASTRA(t *testing.T) {
	f, err := os.Open("testdata/resnet50-head.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	j, err := ImportASTRA("resnet50-head.txt", f, 8, time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "resnet50-head" || len(j.Tasks) != 8 || len(j.Stages) != 6 || j.Stages[1].Name != "backward-fc1000" {
		t.Fatalf("%s: %d tasks, %d stages, %q", j.Name, len(j.Tasks), len(j.Stages), j.Stages[1].Name)
	}
	fc := j.Stages[1]
	if fc.Collectives[0].Op != "all-reduce" || fc.Collectives[0].Bytes != "8192000B" || fc.Compute[0].Time != (27708+9220+922)*time.Nanosecond {
		t.Errorf("fc1000: %+v", fc)
	}
	for _, bad := range []string{"HYBRID_TRANSFORMER\n1\n", "DATA\n2\nconv1 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 10 5\n", "DATA\n1\nconv1 -1 5 NONE 0 5 BCAST 0 5 ALLREDUCE 10 5\n"} {
		if _, err := ImportASTRA("bad.txt", strings.NewReader(bad), 4, time.Nanosecond); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestWriteYAMLRoundTrips: a generated job written out loads back the
// same.
func TestWriteYAMLRoundTrips(t *testing.T) {
	j, err := Megatron(MegatronConfig{DP: 2, TP: 2, PP: 2, Layers: 4, Hidden: 256, Seq: 128, MicroBatch: 1, MicroBatches: 2, BytesPer: 2, LayerTime: 50 * time.Microsecond, Iterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	j.Stages[0].Compute[0] = Compute{Task: j.Stages[0].Compute[0].Task, Cost: map[string]time.Duration{"gpu": time.Millisecond, "cpu": 9 * time.Millisecond}, Kernel: "sum-int32", Bytes: "1MiB"}
	j.Stages[0].Sends[0].Deadline, j.Stages[0].Sends[0].Weight = 2*time.Millisecond, 2.5
	j.Stages[0].Once = true
	var b strings.Builder
	if err := j.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	back, err := Load("megatron.yaml", strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var b2 strings.Builder
	if err := back.WriteYAML(&b2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "deadline: 2000000ns, weight: 2.5") || !strings.Contains(b.String(), "once: true") {
		t.Errorf("the deadline, weight or set-up were not written:\n%s", b.String())
	}
	if b.String() != b2.String() {
		t.Errorf("written, read and written again differs:\n%s\n---\n%s", b.String(), b2.String())
	}
}
