package desc

import (
	"cmp"
	"fmt"

	"onic/emu/scenario"
	"onic/kernels"
	"onic/pcie/acl"
	"onic/pcie/manager"
	"onic/pcie/ntb"
)

// MaxKernelSlots bounds the kernel slots an O-NIC can have.
const MaxKernelSlots = 16

// Defaults of a kernel entry (the table in docs/emu.md).
const (
	DefaultBufferBeats = 4       // a kernel's input buffer
	DefaultCycles      = 64      // an opaque kernel's latency
	DefaultGbps        = 128     // an opaque kernel's throughput: 512 bits at 250 MHz
	DefaultPairBytes   = 1 << 20 // a two-input kernel's pair buffer, per input
)

// Kernel is a kernel in a slot, resolved.
type Kernel struct {
	Slot int
	// Name is the kernel's name: a library kernel's, or an opaque
	// kernel's label; "" for an empty slot of a firmware spec, whose
	// static logic is built for the shape the other fields give.
	Name string
	// Library is the library kernel; nil for an opaque kernel and an
	// empty slot.
	Library *kernels.Kernel
	// Opaque kernels are timed by Cycles (latency, in the O-NIC's clock)
	// and Gbps (throughput) instead of a cycle simulation.
	Opaque bool
	Cycles int
	Gbps   float64
	// BufferBeats is the kernel's input buffer in beats.
	BufferBeats int
	// Egress is where its output goes: ntb.EgressHost, EgressPortA or
	// EgressPortB; Translated the address its output is written at, plus
	// the offset the window or kernel_in range gave.
	Egress     ntb.Egress
	Translated uint64
	// Inputs is 1 or 2. A two-input kernel's Sources are where writes for
	// input 0 and input 1 enter the O-NIC, and PairBytes how much each
	// input holds waiting for its partner.
	Inputs    int
	Sources   [2]manager.Ingress
	PairBytes int
	// Where names the entry in errors (onics[0].kernels[1]), for the
	// rules a consumer has of its own.
	Where string
}

// Input returns which input of k writes from in feed: 0 for a
// one-input kernel, the source's input for a two-input one, or -1.
func (k *Kernel) Input(in manager.Ingress) int {
	if k.Inputs == 1 {
		return 0
	}
	for i, s := range k.Sources {
		if s == in {
			return i
		}
	}
	return -1
}

// KernelConfig is a kernel entry to resolve.
type KernelConfig struct {
	scenario.KernelConfig
	// Where names the entry in errors (onics[0].kernels[1]).
	Where string
	// Empty allows an entry with no name: an empty slot of a firmware
	// spec (output to the host unless Egress says otherwise).
	Empty bool
}

// Kernels resolves kernel entries for an O-NIC with slots kernel slots:
// every field range-checked and defaulted, names looked up in the kernel
// library, each slot given at most once.
func Kernels(ks []KernelConfig, slots int) ([]Kernel, error) {
	slots = min(slots, MaxKernelSlots)
	out := make([]Kernel, 0, len(ks))
	held := map[int]string{}
	for _, kc := range ks {
		p := kc.Where
		if kc.Slot < 0 || kc.Slot >= slots {
			return nil, fmt.Errorf("%s.slot: %d is not a kernel slot of the O-NIC (it has %d)", p, kc.Slot, slots)
		}
		if name, dup := held[kc.Slot]; dup {
			if name == "" {
				return nil, fmt.Errorf("%s.slot: slot %d is given twice", p, kc.Slot)
			}
			return nil, fmt.Errorf("%s.slot: slot %d already holds kernel %q", p, kc.Slot, name)
		}
		held[kc.Slot] = kc.Name
		k, err := kernel(kc)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// kernel resolves one entry.
//
// Long: one check per field, in the order the fields are documented.
func kernel(kc KernelConfig) (Kernel, error) {
	p := kc.Where
	k := Kernel{Slot: kc.Slot, Name: kc.Name, Opaque: kc.Opaque, Cycles: kc.Cycles, Gbps: kc.Gbps,
		BufferBeats: kc.BufferBeats, Translated: kc.Translated, Inputs: 1, Where: p}
	if kc.Cycles < 0 || kc.Cycles > scenario.MaxKernelCycles {
		return k, fmt.Errorf("%s.cycles: %d must be 1 to %d", p, kc.Cycles, scenario.MaxKernelCycles)
	}
	if kc.Gbps != 0 && !(kc.Gbps >= scenario.MinRateGbps && kc.Gbps <= scenario.MaxRateGbps) {
		return k, fmt.Errorf("%s.gbps: %g must be %g to %g", p, kc.Gbps, scenario.MinRateGbps, scenario.MaxRateGbps)
	}
	if kc.BufferBeats < 0 || kc.BufferBeats > scenario.MaxBufferBeats {
		return k, fmt.Errorf("%s.buffer_beats: %d must be 1 to %d", p, kc.BufferBeats, scenario.MaxBufferBeats)
	}
	if kc.PairBufferKiB < 0 || kc.PairBufferKiB > scenario.MaxPairBufferKiB {
		return k, fmt.Errorf("%s.pair_buffer_kib: %d must be 1 to %d", p, kc.PairBufferKiB, scenario.MaxPairBufferKiB)
	}
	if k.BufferBeats == 0 {
		k.BufferBeats = DefaultBufferBeats
	}
	lk, err := kernels.Lookup(kc.Name)
	switch {
	case kc.Name == "" && kc.Empty:
		if kc.Opaque {
			return k, fmt.Errorf("%s.name: an opaque kernel needs a name to label it", p)
		}
		if kc.Sources != nil {
			k.Inputs = 2
		}
	case kc.Opaque && kc.Name == "":
		return k, fmt.Errorf("%s.name: an opaque kernel needs a name to label it", p)
	case kc.Opaque && err == nil:
		return k, fmt.Errorf("%s.opaque: %q is a library kernel, timed by its cycle simulation; drop opaque, or name the opaque kernel differently", p, kc.Name)
	case !kc.Opaque && err != nil:
		return k, fmt.Errorf("%s.name: %v; for a kernel with configured timing say opaque: true", p, err)
	case !kc.Opaque:
		if kc.Cycles != 0 || kc.Gbps != 0 {
			return k, fmt.Errorf("%s: kernel %q is timed by its cycle simulation; cycles and gbps are for opaque kernels", p, kc.Name)
		}
		k.Library, k.Inputs = lk, lk.Inputs
	default:
		k.Cycles, k.Gbps = cmp.Or(k.Cycles, DefaultCycles), cmp.Or(k.Gbps, DefaultGbps)
	}
	egress := kc.Egress
	if egress == "" && kc.Name == "" {
		egress = "host"
	}
	switch egress {
	case "host", "port-a", "port-b":
		k.Egress, _ = ntb.ParseEgress(egress, 0)
	case "":
		return k, fmt.Errorf("%s.egress: no egress: a kernel's output needs one (host, port-a or port-b)", p)
	default:
		return k, fmt.Errorf("%s.egress: %q must be port-a, port-b or host", p, kc.Egress)
	}
	what := fmt.Sprintf("kernel %q", kc.Name)
	if kc.Name == "" {
		what = "the empty slot"
	}
	if k.Inputs == 1 {
		if kc.Sources != nil || kc.PairBufferKiB != 0 {
			return k, fmt.Errorf("%s: sources and pair_buffer_kib are for two-input kernels; %s has one input", p, what)
		}
		return k, nil
	}
	src := kc.Sources
	if src == nil {
		src = []string{"port-a", "port-b"}
	}
	if len(src) != 2 {
		return k, fmt.Errorf("%s.sources: %s has two inputs; name two sources, not %d", p, what, len(src))
	}
	for i, s := range src {
		in, err := acl.ParseIngress(s)
		if err != nil {
			return k, fmt.Errorf("%s.sources[%d]: %v", p, i, err)
		}
		if i == 1 && in == k.Sources[0] {
			return k, fmt.Errorf("%s.sources[%d]: %s feeds input 0 already", p, i, s)
		}
		k.Sources[i] = in
	}
	k.PairBytes = cmp.Or(kc.PairBufferKiB<<10, DefaultPairBytes)
	return k, nil
}
