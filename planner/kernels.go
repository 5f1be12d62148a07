package planner

import (
	"fmt"
	"slices"
	"time"

	"onic/kernels"
)

// Kernel defaults: a slot's rate is the emulator's default for a kernel
// (kernels[].gbps); loading one is docs/firmware.md's partial-bitstream
// estimate for a 40,000-LUT region of a VU9P over ICAP at 500 MB/s; an
// O-NIC has four slots (the generated manager's).
const (
	DefaultKernelGbps = 128
	DefaultKernelLoad = 5170 * time.Microsecond
	DefaultSlots      = 4
)

// KernelPlan is a kernel the plan keeps in a slot of a task's O-NIC, or
// one it leaves out and why.
type KernelPlan struct {
	Task   string  `json:"task"`
	Host   string  `json:"host"`
	Kernel string  `json:"kernel"`
	Slot   int     `json:"slot"`             // -1: not flashed
	Uses   int     `json:"uses"`             // stages that run it, all iterations
	Saved  float64 `json:"saved_seconds"`    // host compute it saves, all iterations, less its load
	Reason string  `json:"reason,omitempty"` // why it is not flashed
}

// residency is which kernels each task's O-NIC holds for a placement.
type residency struct {
	on    []map[string]bool // by task
	load  float64           // seconds of loading before the job: the busiest O-NIC's loads one after another
	plans []KernelPlan
}

// kernelTime is a kernel's time over n bytes.
func (m *model) kernelTime(n int64) time.Duration {
	g := m.cl.KernelGbps
	if g == 0 {
		g = DefaultKernelGbps
	}
	return time.Duration(float64(n) * 8 / (g * 1e9) * 1e9)
}

// hostTime is task i's host compute in stage s on host h.
func (m *model) hostTime(s, i, h int) time.Duration {
	c := m.stages[s].Compute[i]
	if d, ok := c[m.cl.Hosts[h].Kind]; ok {
		return d
	}
	return c[""]
}

// residency decides, for each task on its host, which of the kernels it
// may use its O-NIC keeps: a kernel is loaded when the host compute it
// saves over every iteration (where it is faster than the host) exceeds
// its load time, the biggest savings first while slots last. (The saving
// is of the task's own compute; a stage lasts its longest task's.)
func (m *model) residency(place []int) residency {
	load := m.cl.KernelLoad
	if load == 0 {
		load = DefaultKernelLoad
	}
	slots := m.cl.Slots
	if slots == 0 {
		slots = DefaultSlots
	}
	r := residency{on: make([]map[string]bool, len(place))}
	free := map[int]int{}      // slots left on each host's O-NICs
	loads := map[int]int{}     // kernels loaded on each host's O-NICs
	loaded := map[[2]any]int{} // (host, kernel) -> its slot
	for h := range m.cl.Hosts {
		free[h] = slots * len(m.cl.Hosts[h].ONICs)
	}
	for i, h := range place {
		type use struct {
			name  string
			uses  int
			saved time.Duration
		}
		by := map[string]*use{}
		var names []string
		for s := range m.stages {
			k := m.stages[s].Kernels[i]
			if k.Name == "" {
				continue
			}
			u := by[k.Name]
			if u == nil {
				u = &use{name: k.Name}
				by[k.Name] = u
				names = append(names, k.Name)
			}
			runs := m.j.Iterations
			if s < m.setup {
				runs = 1 // set-up: once
			}
			u.uses += runs
			if d := m.hostTime(s, i, h) - m.kernelTime(k.Bytes); d > 0 {
				u.saved += d * time.Duration(runs)
			}
		}
		slices.SortStableFunc(names, func(a, b string) int {
			if by[a].saved != by[b].saved {
				if by[a].saved > by[b].saved {
					return -1
				}
				return 1
			}
			return 0
		})
		r.on[i] = map[string]bool{}
		for _, n := range names {
			u := by[n]
			kp := KernelPlan{Task: m.j.Tasks[i].Name, Host: m.cl.Hosts[h].Name, Kernel: n, Slot: -1, Uses: u.uses, Saved: (u.saved - load).Seconds()}
			slot, shared := loaded[[2]any{h, n}]
			switch {
			case shared && u.saved > 0: // another task on the host loaded it
				r.on[i][n] = true
				kp.Slot, kp.Saved = slot, u.saved.Seconds()
			case u.saved <= load:
				kp.Reason = fmt.Sprintf("the host's compute is cheaper: the kernel would save %v in all, its load takes %v", u.saved.Round(time.Microsecond), load)
			case free[h] == 0:
				kp.Reason = "no slot left"
			default:
				r.on[i][n] = true
				kp.Slot = slots*len(m.cl.Hosts[h].ONICs) - free[h]
				loaded[[2]any{h, n}] = kp.Slot
				free[h]--
				loads[h]++
			}
			r.plans = append(r.plans, kp)
		}
	}
	for _, n := range loads {
		r.load = max(r.load, float64(n)*load.Seconds())
	}
	return r
}

// checkKernels refuses a job naming a kernel the library lacks.
func checkKernels(m *model) error {
	for _, st := range m.stages {
		for i, k := range st.Kernels {
			if k.Name == "" {
				continue
			}
			if _, err := kernels.Lookup(k.Name); err != nil {
				return fmt.Errorf("stage %s, task %s: %v", st.Name, m.j.Tasks[i].Name, err)
			}
		}
	}
	return nil
}
