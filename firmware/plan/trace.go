package plan

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"onic/internal/readfile"
	"onic/internal/yamlcfg"
)

// Trace is a planner's input (YAML, docs/firmware.md): the load time of
// each kernel and, per O-NIC, its slot count and task sequence.
type Trace struct {
	Kernels []KernelLoad `mapstructure:"kernels"`
	ONICs   []ONICTrace  `mapstructure:"onics"`
}

// KernelLoad is a kernel's load time: its partial reconfiguration
// (onic fw costs gives it for a built image).
type KernelLoad struct {
	Name string        `mapstructure:"name"`
	Load time.Duration `mapstructure:"load"`
}

// ONICTrace is one O-NIC's slots and tasks.
type ONICTrace struct {
	Name  string `mapstructure:"name"`
	Slots int    `mapstructure:"slots"`
	Tasks []Task `mapstructure:"tasks"`
}

// LoadTrace reads a trace; name labels its errors. Unknown fields are
// errors.
func LoadTrace(name string, r io.Reader) (Trace, error) {
	var t Trace
	if err := yamlcfg.Decode(name, r, &t, yamlcfg.Options{MaxBytes: MaxTraceFile}); err != nil {
		return Trace{}, err
	}
	if len(t.ONICs) == 0 {
		return Trace{}, fmt.Errorf("%s: onics: the trace has none", name)
	}
	seen := map[string]bool{}
	for i, k := range t.Kernels {
		if k.Name == "" || seen[k.Name] {
			return Trace{}, fmt.Errorf("%s: kernels[%d]: name %q empty or given twice", name, i, k.Name)
		}
		seen[k.Name] = true
	}
	return t, nil
}

// MaxTraceFile is the largest trace file LoadTraceFile reads.
const MaxTraceFile = 64 << 20

// LoadTraceFile is LoadTrace from a file, a regular file of at most
// MaxTraceFile bytes.
func LoadTraceFile(path string) (Trace, error) {
	b, err := readfile.Read(path, MaxTraceFile)
	if err != nil {
		return Trace{}, err
	}
	return LoadTrace(path, bytes.NewReader(b))
}

// Loads is the kernels' load times as Plan takes them.
func (t Trace) Loads() map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, k := range t.Kernels {
		m[k.Name] = k.Load
	}
	return m
}

// ONICPlan is one O-NIC's plan.
type ONICPlan struct {
	ONIC string `json:"onic"`
	Result
}

// PlanTrace plans every O-NIC of the trace with policy, naming a bad
// O-NIC in its error.
func PlanTrace(t Trace, policy string, loads map[string]time.Duration) ([]ONICPlan, error) {
	var out []ONICPlan
	for i, o := range t.ONICs {
		r, err := Plan(policy, o.Slots, o.Tasks, loads)
		if err != nil {
			return nil, fmt.Errorf("onics[%d] (%s): %v", i, o.Name, err)
		}
		out = append(out, ONICPlan{ONIC: o.Name, Result: r})
	}
	return out, nil
}
