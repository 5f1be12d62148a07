package job

import (
	"fmt"
	"time"
)

// MegatronConfig describes a transformer trained Megatron-LM's way: data,
// tensor and pipeline parallel degrees over DP*TP*PP GPUs, the model's
// size, and its micro-batches (Narayanan et al., SC'21, "Efficient
// Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM").
type MegatronConfig struct {
	DP, TP, PP   int           // parallel degrees
	Layers       int           // transformer layers (a multiple of PP)
	Hidden       int           // hidden size
	Seq          int           // sequence length
	MicroBatch   int           // sequences per micro-batch
	MicroBatches int           // micro-batches per iteration (per data-parallel rank)
	BytesPer     int           // bytes per value (2: bf16)
	LayerTime    time.Duration // one layer's forward pass of one micro-batch on one GPU (TP 1); backward takes twice
	Iterations   int
}

// Megatron writes the job of c. Its tasks are the GPUs, named
// gpu-d<d>-p<p>-t<t>. Each iteration is GPipe's schedule flattened into
// stages: forward waves (in wave w, pipeline stage p runs micro-batch
// w-p), each GPU computing Layers/PP layers over 1/TP of the work, its
// tensor-parallel group all-reducing the activations (two all-reduces a
// layer, of Seq*MicroBatch*Hidden values each) and sending them to the
// next pipeline stage; the backward waves the same in reverse at twice
// the compute; then the data-parallel all-reduce of each GPU's share of
// the gradients (12*Hidden^2 parameters a layer).
func Megatron(c MegatronConfig) (*Job, error) {
	switch {
	case c.DP < 1 || c.TP < 1 || c.PP < 1 || c.DP*c.TP*c.PP > MaxTasks:
		return nil, fmt.Errorf("megatron: degrees dp %d, tp %d, pp %d: each at least 1, %d GPUs at most", c.DP, c.TP, c.PP, MaxTasks)
	case c.Layers < c.PP || c.Layers%c.PP != 0:
		return nil, fmt.Errorf("megatron: %d layers do not divide into %d pipeline stages", c.Layers, c.PP)
	case c.Hidden < 1 || c.Seq < 1 || c.MicroBatch < 1 || c.BytesPer < 1:
		return nil, fmt.Errorf("megatron: hidden, seq, micro-batch size and bytes per value must be positive")
	case c.MicroBatches < 1 || 2*(c.MicroBatches+c.PP-1)+1 > MaxStages:
		return nil, fmt.Errorf("megatron: %d micro-batches: 1 to %d for %d pipeline stages", c.MicroBatches, (MaxStages-1)/2-c.PP+1, c.PP)
	case c.LayerTime <= 0 || c.LayerTime > MaxCompute:
		return nil, fmt.Errorf("megatron: layer time %v must be above 0 and at most %v", c.LayerTime, MaxCompute)
	}
	if c.Iterations == 0 {
		c.Iterations = 1
	}
	name := func(d, p, t int) string { return fmt.Sprintf("gpu-d%d-p%d-t%d", d, p, t) }
	j := &Job{Name: fmt.Sprintf("megatron-dp%d-tp%d-pp%d", c.DP, c.TP, c.PP), Iterations: c.Iterations}
	for d := range c.DP {
		for p := range c.PP {
			for t := range c.TP {
				j.Tasks = append(j.Tasks, Task{Name: name(d, p, t), Kind: "gpu"})
			}
		}
	}
	per := c.Layers / c.PP
	act := int64(c.Seq) * int64(c.MicroBatch) * int64(c.Hidden) * int64(c.BytesPer)
	size := func(n int64) string { return fmt.Sprintf("%dB", n) }
	wave := func(back bool, w int) StageSpec {
		dir, mult := "forward", 1
		if back {
			dir, mult = "backward", 2
		}
		st := StageSpec{Name: fmt.Sprintf("%s-%d", dir, w)}
		for p := range c.PP {
			stage := p
			if back {
				stage = c.PP - 1 - p
			}
			if m := w - p; m < 0 || m >= c.MicroBatches {
				continue
			}
			for d := range c.DP {
				var group []string
				for t := range c.TP {
					group = append(group, name(d, stage, t))
					st.Compute = append(st.Compute, Compute{Task: name(d, stage, t),
						Time: time.Duration(int64(c.LayerTime) * int64(per*mult) / int64(c.TP))})
				}
				if c.TP > 1 {
					st.Collectives = append(st.Collectives, Collective{Op: "all-reduce", Group: group, Bytes: size(2 * int64(per) * act)})
				}
				next := stage + 1
				if back {
					next = stage - 1
				}
				if next >= 0 && next < c.PP {
					for t := range c.TP {
						st.Sends = append(st.Sends, Send{From: name(d, stage, t), To: name(d, next, t), Bytes: size(act / int64(c.TP))})
					}
				}
			}
		}
		return st
	}
	waves := c.MicroBatches + c.PP - 1
	for w := range waves {
		j.Stages = append(j.Stages, wave(false, w))
	}
	for w := range waves {
		j.Stages = append(j.Stages, wave(true, w))
	}
	if c.DP > 1 {
		grad := StageSpec{Name: "gradients"}
		params := 12 * int64(c.Hidden) * int64(c.Hidden) * int64(per) / int64(c.TP)
		for p := range c.PP {
			for t := range c.TP {
				var group []string
				for d := range c.DP {
					group = append(group, name(d, p, t))
				}
				grad.Collectives = append(grad.Collectives, Collective{Op: "all-reduce", Group: group, Bytes: size(params * int64(c.BytesPer))})
			}
		}
		j.Stages = append(j.Stages, grad)
	}
	if err := j.Check(); err != nil {
		return nil, fmt.Errorf("megatron: %v", err)
	}
	return j, nil
}
