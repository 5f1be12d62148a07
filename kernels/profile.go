package kernels

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// Profile is a kernel's timing as its cycle simulation measured it, in
// its own clock: what the emulator charges a payload that passes through.
type Profile struct {
	// Latency is the cycles from a packet's first beat in to its first
	// beat out.
	Latency int `json:"latency_cycles"`
	// CyclesPerBeat is the cycles per input beat back to back (1 when the
	// kernel takes a beat every cycle).
	CyclesPerBeat float64 `json:"cycles_per_beat"`
	// BeatBytes is the input beat's width in bytes.
	BeatBytes int `json:"beat_bytes"`
	// OutPerIn is output bytes per input byte on the kernel's sample data
	// (1 for most; 0.5 for fp32 to bf16; data-dependent for a filter).
	OutPerIn float64 `json:"out_per_in"`
}

var (
	profMu sync.Mutex
	profs  = map[*Kernel]Profile{}
)

// Profile measures the kernel on 64 beats of its sample data per input,
// back to back (every input always offering, the output always ready),
// once per kernel value; later calls return the same numbers.
func (k *Kernel) Profile() (Profile, error) {
	profMu.Lock()
	defer profMu.Unlock()
	if p, ok := profs[k]; ok {
		return p, nil
	}
	in := k.sample(rand.New(rand.NewPCG(1, 1)), 64*k.Lanes)
	out, st, err := k.Run(in, Full)
	if err != nil {
		return Profile{}, err
	}
	if st.InBeats == 0 || len(in[0]) == 0 {
		return Profile{}, fmt.Errorf("kernel %s: profile: no beats went in", k.Name)
	}
	p := Profile{Latency: st.Latency(), BeatBytes: k.InBits() / 8,
		CyclesPerBeat: float64(st.LastOut-st.FirstIn+1-st.Latency()) / float64(st.InBeats),
		OutPerIn:      float64(len(out)) / float64(len(in[0]))}
	profs[k] = p
	return p, nil
}
