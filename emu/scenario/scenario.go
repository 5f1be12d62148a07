// Package scenario is the emulator's input: the schema of a cluster and
// the traffic to run on it (Config and its parts, every field with its
// default and limit), FLEET's built-in scenarios, and strict YAML
// loading. The emulator (emu/cluster) builds and runs a Config;
// onic hdl gen and onic fw read the same Config to generate an O-NIC's
// RTL, without importing the emulator.
package scenario

import (
	"fmt"
	"net/netip"
	"time"

	"onic/emu/sim"
	"onic/firmware/board"
	"onic/pcie/lanes"
	"onic/pcie/manager"
	"onic/tlp"
)

// Config describes a cluster and the traffic to run on it.
type Config struct {
	Name     string          `mapstructure:"name"`
	Duration time.Duration   `mapstructure:"duration"` // simulated run length
	Hosts    []HostConfig    `mapstructure:"hosts"`
	ONICs    []ONICConfig    `mapstructure:"onics"`
	Circuits []CircuitConfig `mapstructure:"circuits"` // MEMS circuits at the start (already trained)
	MEMS     MEMSConfig      `mapstructure:"mems"`
	Phases   []PhaseConfig   `mapstructure:"phases"` // later circuit sets
	Flows    []FlowConfig    `mapstructure:"flows"`
	Faults   []FaultConfig   `mapstructure:"faults"` // link partners that misbehave for a while
	// Fidelity is how the run is simulated (docs/emu.md, "Fidelity"):
	// "packet" (the default) every TLP and DLLP; "auto" packet level
	// around every transient and the transfer level for the steady
	// stretches between, where each flow's measured rate carries it and
	// its counters on; "transfer" the same with shorter samples and a
	// looser test of steadiness.
	Fidelity string `mapstructure:"fidelity"`
}

// FaultConfig makes the receiving end of an optical port misbehave
// between From and To: the faults of a slow or stalled link partner that
// docs/hdl.md tests the card against, for the emulator's O-NICs.
type FaultConfig struct {
	// Port is the end that misbehaves as a receiver, "onic.a" or
	// "onic.b": its partner (the other end of its circuit) is the sender
	// that meets the fault.
	Port string `mapstructure:"port"`
	// Kind: "stall" returns no flow-control credits (every TLP that
	// arrives keeps its receive buffer until To); "slow" returns them a
	// trickle at a time (each TLP keeps its buffer Hold longer than the
	// one before it, one after another); "errors" receives TLPs damaged
	// by bit errors at BER, which the data link layer Naks and replays.
	Kind string        `mapstructure:"kind"`
	From time.Duration `mapstructure:"from"`
	To   time.Duration `mapstructure:"to"`
	Hold time.Duration `mapstructure:"hold"` // slow: per TLP
	// BER (errors) is the bit error rate on the fibre into the port: a
	// TLP's frame on the optical link (token, header, payload and LCRC in
	// 64-byte words) arrives damaged with the odds that one of its bits
	// is wrong. More than 0, at most MaxBER.
	BER float64 `mapstructure:"ber"`
}

// MaxBER is the highest bit error rate a fault may give a fibre (about
// one 256-byte write in five damaged).
const MaxBER = 1e-4

// MEMSConfig is the optical circuit switch.
type MEMSConfig struct {
	Ports int `mapstructure:"ports"` // default 384 (Polaris Series 7000, FLEET)
	// Reconfig is how long a changed circuit stays dark (default 10 ms:
	// Glimmerglass and Google OCS class MEMS switches).
	Reconfig time.Duration `mapstructure:"reconfig"`
	// BringUp is how long the two ends of a newly lit circuit take to
	// train their optics and PCIe link (default 1 ms, an assumption: no
	// public O-NIC figure exists; FLEET says it exceeds the MEMS time in
	// the worst case).
	BringUp time.Duration `mapstructure:"bring_up"`
	// Switches, when given, are several clusters' switches instead of
	// one: each O-NIC names its own (ONICConfig.Switch), and the fields
	// above are every switch's defaults. Trunks are the inter-cluster
	// fibres that join them: a circuit between O-NICs on two switches
	// takes one fibre of the trunk between them (FLEET keeps 96 of a
	// cluster's 384 switch ports for such fibres and the WAN).
	Switches []SwitchConfig `mapstructure:"switches"`
	Trunks   []TrunkConfig  `mapstructure:"trunks"`
}

// SwitchConfig is one cluster's MEMS switch; zero fields take MEMSConfig's.
type SwitchConfig struct {
	Name     string        `mapstructure:"name"`
	Ports    int           `mapstructure:"ports"`
	Reconfig time.Duration `mapstructure:"reconfig"`
	BringUp  time.Duration `mapstructure:"bring_up"`
}

// TrunkConfig is a bundle of inter-cluster fibres between switches A and
// B: Fibres of them (each a port of both switches), FibreM long.
type TrunkConfig struct {
	A      string  `mapstructure:"a"`
	B      string  `mapstructure:"b"`
	Fibres int     `mapstructure:"fibres"`
	FibreM float64 `mapstructure:"fibre_m"`
}

// MaxTrunkM is the longest inter-cluster fibre (a campus; past it the WAN
// is another model).
const MaxTrunkM = 100_000

// PhaseConfig switches the MEMS to a new set of circuits at a time.
type PhaseConfig struct {
	At       time.Duration   `mapstructure:"at"`
	Circuits []CircuitConfig `mapstructure:"circuits"`
}

// Defaults of the MEMS switch.
const (
	DefaultMEMSPorts = 384
	DefaultReconfig  = 10 * time.Millisecond
	DefaultBringUp   = time.Millisecond
	DefaultHoldTLPs  = manager.DefaultHoldTLPs
	// DefaultCompletionTimeout is a host's completion timeout; Min and
	// Max bound it: PCIe Base §2.8 allows 50 µs to 64 s (Device
	// Control 2's ranges A to D).
	DefaultCompletionTimeout = 50 * time.Millisecond
	MinCompletionTimeout     = 50 * time.Microsecond
	MaxCompletionTimeout     = 64 * time.Second
	// HoldBeats is the room of a port's hold buffer in data beats of the
	// O-NIC's data_width (64 KiB at 512 bits), the card's block RAM
	// (designs/internal/card.HoldBeats): a held TLP takes a beat per
	// data_width of its payload, one without payload; a TLP is held only
	// while both hold_tlps and the beats allow.
	HoldBeats = manager.HoldBeats
	// DefaultEgressStallCycles and DefaultCreditTimeoutCycles are the
	// card's (pcie/manager's, which the card and the optical link take
	// too), so model and card stall and retrain alike.
	DefaultEgressStallCycles   = manager.DefaultEgressStallCycles
	DefaultCreditTimeoutCycles = manager.DefaultCreditTimeoutCycles
)

// Limits on configuration values whose cost grows with the value (memory
// or events), and on physical quantities outside any real O-NIC. Build
// refuses a value past them, naming the field and the range.
const (
	MaxHosts          = 1024
	MaxONICs          = 1024
	MaxFlows          = 4096
	MaxPhases         = 4096
	MaxMEMSPorts      = 4096
	MaxDepth          = 4096        // a flow's transfers in flight
	MaxHoldTLPs       = 1 << 20     // TLPs an O-NIC port holds while down
	MaxFibreM         = 100_000.0   // metres of fibre (100 km)
	MaxClockMHz       = 1000.0      // the manager's clock
	MinClockMHz       = 1.0         //
	MaxPipelineCycles = 4096        // the manager's pipeline depth
	MinRateGbps       = 0.001       // a paced flow's rate
	MaxRateGbps       = 10_000.0    //
	MaxMediaGbps      = 10_000.0    // an NVMe drive's media rate
	MaxLatency        = time.Second // memory and media latencies
	MaxMEMSTime       = time.Minute // reconfiguration and bring-up
	MaxKernelCycles   = 1 << 20     // an opaque kernel's latency
	MaxBufferBeats    = 1 << 20     // a kernel's input buffer
	MaxPairBufferKiB  = 16 << 10    // a two-input kernel's pair buffer (16 MiB: the card's, designs/internal/slot.MaxPairBytes)
	MinStallCycles    = 16          // a port's stall and credit timeouts
	MaxStallCycles    = 1 << 24     //
	MaxFaults         = 4096        // faults[] entries
)

// HostConfig is a server and the PCIe links to its O-NICs (one root port
// each, all alike).
type HostConfig struct {
	Name string `mapstructure:"name"`
	// Kind is what the node is: a server (default), or a device in a
	// device chassis with its own O-NIC (FLEET) — gpu (BAR memory that
	// others read and write), sensor (a data-acquisition card whose flows
	// stream samples out, paced by rate_gbps) or nvme (a drive or RAID
	// that serves nvme-read flows' commands). All have memory answering
	// at memory_latency and may have flows; the kind names them in
	// reports.
	Kind   string        `mapstructure:"kind"`
	NVMe   NVMeConfig    `mapstructure:"nvme"`  // kind nvme: its media
	Gen    int           `mapstructure:"gen"`   // default 3
	Lanes  int           `mapstructure:"lanes"` // default 16
	MPS    int           `mapstructure:"mps"`   // default 256
	MRRS   int           `mapstructure:"mrrs"`  // default 512
	RCB    int           `mapstructure:"rcb"`   // default 64
	Memory time.Duration `mapstructure:"memory_latency"`
	// CompletionTimeout is how long the host's root complex waits for the
	// completions of a read before it gives up (PCIe Base §2.8,
	// Completion Timeout): the read ends, its tag is free again, and the
	// CPU's load gets all-ones (default 50 ms, the top of the spec's
	// default range, 50 µs to 50 ms).
	CompletionTimeout time.Duration `mapstructure:"completion_timeout"`
	// ONICsPerCPU is how many O-NICs share one CPU's root complex (default
	// 3: FLEET's servers have 8 CPUs with three O-NICs each); a host with
	// more O-NICs has more root complexes, each in its own PCI segment.
	ONICsPerCPU int `mapstructure:"onics_per_cpu"`
	// IPv4 and IPv6 are the host's addresses with their prefix lengths
	// (such as 10.77.0.1/24 and fd00:77::1/64) on the network interface
	// onic emu net gives it; left out, 10.77.0.N/24 and fd00:77::N/64 (N
	// the host's place in the scenario, from 1).
	IPv4 string `mapstructure:"ipv4"`
	IPv6 string `mapstructure:"ipv6"`
}

// ONICConfig is an O-NIC in a host.
type ONICConfig struct {
	Name string `mapstructure:"name"`
	Host string `mapstructure:"host"`
	// The manager pipeline: its clock, its latency in cycles — by
	// default the depth of the RTL onic generates for it
	// (designs/manager.Depth), so the emulator's timing is the hardware's —
	// and its data path width in bits (256 or 512, default 512): each
	// ingress takes one beat of that width per cycle, so a TLP occupies
	// it for max(1, payload/width) cycles.
	ClockMHz       float64 `mapstructure:"clock_mhz"`
	PipelineCycles int     `mapstructure:"pipeline_cycles"`
	DataWidth      int     `mapstructure:"data_width"`
	// FibreM is the fibre from each port (A, B) to the MEMS switch, metres.
	FibreM [2]float64 `mapstructure:"fibre_m"`
	// LanePlan is how each optical port carries its link: lanes and the
	// line rate of each, 64b/66b coded, written as 4x25.78125Gbps
	// (default FLEET's 16x8.25Gbps: 128 Gb/s of data, a 512-bit word
	// every 4 ns). The ports at the two ends of a circuit must have the
	// same plan. A plan slower than the host's PCIe link limits what
	// crosses the port (pcie/lanes, docs/emu.md).
	LanePlan string         `mapstructure:"lane_plan"`
	Manager  manager.Config `mapstructure:"manager"`
	// DownPolicy is what happens to traffic for a port that is down when
	// its window has no failover (a window with failover_egress uses the
	// other port): "hold" it (default, up to HoldTLPs per port and
	// HoldBeats beats of them, sent when the port is back) or "fail" it (posted writes dropped, reads
	// completed with UR).
	DownPolicy string `mapstructure:"down_policy"`
	HoldTLPs   int    `mapstructure:"hold_tlps"`
	// EgressStallCycles is how long, in manager clock cycles, an up
	// port's link may send nothing while it has TLPs to send before the
	// port counts as stalled: treated as down for admission (the down
	// policy applies) until its queue drains (default 4096, 16.4 µs at
	// 250 MHz: the card's default, onic hdl gen --egress-stall-timeout).
	// CreditTimeoutCycles is how long before the link is taken down and
	// retrains, as the card's link does when its partner returns no
	// credits (default 16384, 65.5 µs). Both are watched a quarter of
	// EgressStallCycles at a time (docs/emu.md).
	EgressStallCycles   int `mapstructure:"egress_stall_cycles"`
	CreditTimeoutCycles int `mapstructure:"credit_timeout_cycles"`
	// Kernels are the in-network kernels loaded in its slots.
	Kernels []KernelConfig `mapstructure:"kernels"`
	// Part is its FPGA (default xcvu9p-flga2104-2L-e) and Board its
	// reconfiguration figures (docs/firmware.md; zero fields: defaults),
	// for firmware deployed to it. ReflashPolicy is what happens to
	// traffic that meets a reflash: "hold" it (default, up to HoldTLPs)
	// until the O-NIC or slot is back, or "fail" it.
	Part          string      `mapstructure:"part"`
	Board         board.Board `mapstructure:"board"`
	ReflashPolicy string      `mapstructure:"reflash_policy"`
	// Switch is the MEMS switch its ports are fibred to, one of
	// MEMSConfig.Switches (empty: the only one).
	Switch string `mapstructure:"switch"`
}

// CircuitConfig joins two O-NIC ports, "onic.a" or "onic.b".
type CircuitConfig struct {
	A string `mapstructure:"a"`
	B string `mapstructure:"b"`
}

// FlowConfig is a DMA engine in a host issuing transfers through its
// O-NIC's direct windows (BAR2).
type FlowConfig struct {
	Name  string `mapstructure:"name"`
	From  string `mapstructure:"from"`  // host
	Via   string `mapstructure:"via"`   // which of its O-NICs (default: its first)
	Group string `mapstructure:"group"` // flows of a group are also reported together
	// Forward makes the flow send on the data its host receives: a
	// transfer starts only once its bytes have arrived (a pipeline
	// stage), never more than the host has received.
	Forward bool `mapstructure:"forward"`
	// NVMe places the queues and buffers of an nvme-read flow, whose
	// window (at offset) leads to the device's doorbell.
	NVMe NVMeQueues `mapstructure:"nvme"`
	// Task is a task flow's kernel: each transfer is one task of the
	// kernel in that slot of the flow's O-NIC (op task).
	Task TaskFlowConfig `mapstructure:"task"`
	// RateGbps paces the flow: transfers start no closer together than
	// size*8/rate (a sensor's sample rate; 0: as fast as Depth allows).
	RateGbps  float64 `mapstructure:"rate_gbps"`
	Op        string  `mapstructure:"op"`        // write, read, nvme-read or task
	Offset    uint64  `mapstructure:"offset"`    // where in BAR2 the transfers start
	Span      uint64  `mapstructure:"span"`      // bytes the transfers cycle over (default 256 MiB)
	Size      int     `mapstructure:"size"`      // bytes per transfer
	Transfers int     `mapstructure:"transfers"` // 0: as many as the run allows
	Depth     int     `mapstructure:"depth"`     // transfers in flight (default 4)
	// Start and Stop bound when the flow issues transfers (Stop 0: until
	// the end); transfers in flight at Stop finish.
	Start time.Duration `mapstructure:"start"`
	Stop  time.Duration `mapstructure:"stop"`
}

// Defaults fills in the host's defaults (the table in docs/emu.md).
func (h *HostConfig) Defaults() {
	if h.Gen == 0 {
		h.Gen = 3
	}
	if h.Lanes == 0 {
		h.Lanes = 16
	}
	if h.MPS == 0 {
		h.MPS = 256
	}
	if h.MRRS == 0 {
		h.MRRS = 512
	}
	if h.RCB == 0 {
		h.RCB = 64
	}
	if h.CompletionTimeout == 0 {
		h.CompletionTimeout = DefaultCompletionTimeout
	}
	if h.Memory == 0 {
		h.Memory = 300 * time.Nanosecond
	}
	if h.ONICsPerCPU == 0 {
		h.ONICsPerCPU = 3
	}
	if h.Kind == "" {
		h.Kind = "server"
	}
	if h.NVMe.MediaLatency == 0 {
		h.NVMe.MediaLatency = DefaultMediaLatency
	}
	if h.NVMe.MediaGbps == 0 {
		h.NVMe.MediaGbps = DefaultMediaGbps
	}
}

// Check checks a host's values (after defaults); p is its field path.
func (h *HostConfig) Check(p string) error {
	if h.Memory < 0 || h.Memory > MaxLatency {
		return fmt.Errorf("%s.memory_latency: %v must be 0 to %v", p, h.Memory, MaxLatency)
	}
	if h.CompletionTimeout < MinCompletionTimeout || h.CompletionTimeout > MaxCompletionTimeout {
		return fmt.Errorf("%s.completion_timeout: %v must be %v to %v (PCIe Base §2.8's ranges)", p, h.CompletionTimeout, MinCompletionTimeout, MaxCompletionTimeout)
	}
	if h.Gen < 1 || h.Gen > 5 {
		return fmt.Errorf("%s.gen: %d is not a PCIe generation (1 to 5)", p, h.Gen)
	}
	if h.Lanes < 1 || h.Lanes > 16 || h.Lanes&(h.Lanes-1) != 0 {
		return fmt.Errorf("%s.lanes: %d is not a link width (1, 2, 4, 8 or 16)", p, h.Lanes)
	}
	if err := tlp.CheckSize(p+".mps", h.MPS); err != nil {
		return err
	}
	if h.Kind != "server" && h.Kind != "gpu" && h.Kind != "sensor" && h.Kind != "nvme" {
		return fmt.Errorf("%s.kind: %q must be server, gpu, sensor or nvme", p, h.Kind)
	}
	if h.NVMe.MediaLatency < 0 || h.NVMe.MediaLatency > MaxLatency {
		return fmt.Errorf("%s.nvme.media_latency: %v must be 0 to %v", p, h.NVMe.MediaLatency, MaxLatency)
	}
	if !(h.NVMe.MediaGbps > 0 && h.NVMe.MediaGbps <= MaxMediaGbps) {
		return fmt.Errorf("%s.nvme.media_gbps: %g must be above 0 and at most %g", p, h.NVMe.MediaGbps, MaxMediaGbps)
	}
	if h.ONICsPerCPU < 1 || h.ONICsPerCPU > 31 {
		return fmt.Errorf("%s.onics_per_cpu: %d must be 1 to 31 (root ports on bus 0)", p, h.ONICsPerCPU)
	}
	if h.RCB != 64 && h.RCB != 128 {
		return fmt.Errorf("%s.rcb: %d must be 64 or 128", p, h.RCB)
	}
	if err := tlp.CheckSize(p+".mrrs", h.MRRS); err != nil {
		return err
	}
	if _, err := h.Addresses(); err != nil {
		return fmt.Errorf("%s.%v", p, err)
	}
	return nil
}

// Addresses parses the host's IPv4 and IPv6 fields (those set): each an
// address of its family with a prefix length, not its network's own
// address; the error names the field.
func (h *HostConfig) Addresses() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, a := range []struct {
		field, v, family, eg string
		six                  bool
	}{{"ipv4", h.IPv4, "IPv4", "10.77.0.1/24", false}, {"ipv6", h.IPv6, "IPv6", "fd00:77::1/64", true}} {
		if a.v == "" {
			continue
		}
		pf, err := netip.ParsePrefix(a.v)
		if err != nil || pf.Addr().Is6() != a.six || pf.Addr().Is4In6() || pf.Addr().Zone() != "" {
			return nil, fmt.Errorf("%s: %q is not an %s address with its prefix length (such as %s)", a.field, a.v, a.family, a.eg)
		}
		if pf.Bits() < pf.Addr().BitLen() && pf.Addr() == pf.Masked().Addr() {
			return nil, fmt.Errorf("%s: %s is the network's own address, not a host's", a.field, a.v)
		}
		out = append(out, pf)
	}
	return out, nil
}

// Check checks an O-NIC's own values (after defaults); p is its field path.
func (o *ONICConfig) Check(p string) error {
	if !(o.ClockMHz >= MinClockMHz && o.ClockMHz <= MaxClockMHz) {
		return fmt.Errorf("%s.clock_mhz: %g must be %g to %g MHz", p, o.ClockMHz, MinClockMHz, MaxClockMHz)
	}
	if o.PipelineCycles < 1 || o.PipelineCycles > MaxPipelineCycles {
		return fmt.Errorf("%s.pipeline_cycles: %d must be 1 to %d", p, o.PipelineCycles, MaxPipelineCycles)
	}
	if o.DataWidth != 256 && o.DataWidth != 512 {
		return fmt.Errorf("%s.data_width: %d bits must be 256 or 512 (the widths designs/manager generates)", p, o.DataWidth)
	}
	for j, m := range o.FibreM {
		if !(m >= 0 && m <= MaxFibreM) {
			return fmt.Errorf("%s.fibre_m[%d]: %g metres must be 0 to %g", p, j, m, MaxFibreM)
		}
	}
	if _, err := lanes.Parse(o.LanePlan); err != nil {
		return fmt.Errorf("%s.lane_plan: %v", p, err)
	}
	if o.DownPolicy != "hold" && o.DownPolicy != "fail" {
		return fmt.Errorf("%s.down_policy: %q must be hold or fail", p, o.DownPolicy)
	}
	if o.HoldTLPs < 1 || o.HoldTLPs > MaxHoldTLPs {
		return fmt.Errorf("%s.hold_tlps: %d must be 1 to %d", p, o.HoldTLPs, MaxHoldTLPs)
	}
	if o.EgressStallCycles < MinStallCycles || o.EgressStallCycles > MaxStallCycles {
		return fmt.Errorf("%s.egress_stall_cycles: %d must be %d to %d", p, o.EgressStallCycles, MinStallCycles, MaxStallCycles)
	}
	if o.CreditTimeoutCycles <= o.EgressStallCycles || o.CreditTimeoutCycles > MaxStallCycles {
		return fmt.Errorf("%s.credit_timeout_cycles: %d must be more than egress_stall_cycles (%d) and at most %d",
			p, o.CreditTimeoutCycles, o.EgressStallCycles, MaxStallCycles)
	}
	if o.ReflashPolicy != "hold" && o.ReflashPolicy != "fail" {
		return fmt.Errorf("%s.reflash_policy: %q must be hold or fail", p, o.ReflashPolicy)
	}
	if err := board.CheckPart(o.Part); err != nil {
		return fmt.Errorf("%s.part: %v", p, err)
	}
	if err := o.Board.Check(); err != nil {
		return fmt.Errorf("%s.board.%v", p, err)
	}
	return nil
}

// Defaults fills in the O-NIC's defaults (the table in docs/emu.md).
func (o *ONICConfig) Defaults() {
	if o.ClockMHz == 0 {
		o.ClockMHz = DefaultClockMHz
	}
	if o.PipelineCycles == 0 {
		o.PipelineCycles = manager.Depth
	}
	if o.DataWidth == 0 {
		o.DataWidth = DefaultDataWidth
	}
	if o.LanePlan == "" {
		o.LanePlan = lanes.Default.String()
	}
	if o.DownPolicy == "" {
		o.DownPolicy = "hold"
	}
	if o.HoldTLPs == 0 {
		o.HoldTLPs = DefaultHoldTLPs
	}
	if o.EgressStallCycles == 0 {
		o.EgressStallCycles = DefaultEgressStallCycles
	}
	if o.CreditTimeoutCycles == 0 {
		o.CreditTimeoutCycles = DefaultCreditTimeoutCycles
	}
	if o.ReflashPolicy == "" {
		o.ReflashPolicy = "hold"
	}
	if o.Part == "" {
		o.Part = board.DefaultPart
	}
}

// DefaultClockMHz and DefaultDataWidth are the O-NIC's PCIe manager: a
// 512-bit data path at 250 MHz carries 128 Gb/s, enough for one 126 Gb/s
// O-NIC link (shared/REFERENCE.md). The generated manager takes a beat
// per cycle (designs/manager.II), so at these settings it does not limit
// a Gen3 x16 link; at a lower clock or 256 bits it does, and the
// emulator models that (onicNode.decide).
const (
	DefaultClockMHz  = 250
	DefaultDataWidth = 512
)

// MaxTime is the end of simulated time as a duration (about 106 days, the
// engine's picosecond clock's range): later deadlines are refused.
const MaxTime = time.Duration(sim.Forever / sim.Nanosecond)

// KernelConfig binds an in-network kernel to an O-NIC's kernel slot; the
// windows whose egress is "kernel:SLOT", and the manager's kernel_in
// ranges naming the slot, feed it. The posted writes it receives pass
// through it and leave out of an optical port or into the host's memory.
//
// A kernel of onic's library (onic kernel list) is timed by its own cycle
// simulation (kernels.Profile): its latency, its cycles per 64-byte beat
// and its output bytes per input byte, in the O-NIC's clock. Any other
// name is an opaque kernel timed by Cycles and Gbps.
//
// A two-input kernel (sum-int32 and the other combiners) pairs its
// inputs' writes in arrival order, the way its two AXI-Stream inputs pair
// packets: the n-th write into input 0 with the n-th into input 1, which
// must have the same length. The combined write goes out at Translated
// plus input 0's offset. A write waiting for its partner waits in a pair
// buffer; the two requests end together, when the combined write does.
type KernelConfig struct {
	Slot int    `mapstructure:"slot"`
	Name string `mapstructure:"name"`
	// Opaque says the kernel is not in the library: Name only labels it,
	// and its timing is Cycles and Gbps. Without it a name not in the
	// library is an error, so a misspelt name is not a made-up kernel.
	Opaque bool `mapstructure:"opaque"`
	// Cycles is an opaque kernel's pipeline latency in the O-NIC's clock
	// (default 64).
	Cycles int `mapstructure:"cycles"`
	// Gbps is an opaque kernel's throughput (default 128: a 512-bit
	// datapath at 250 MHz).
	Gbps float64 `mapstructure:"gbps"`
	// BufferBeats is the kernel's input buffer in beats (default 4): a
	// backlog beyond it stalls the PCIe manager, and with it every TLP
	// the O-NIC handles, until the kernel catches up.
	BufferBeats int `mapstructure:"buffer_beats"`
	// Egress (port-a, port-b or host) and Translated: its output goes
	// out of that port, or into the O-NIC's host's memory, at Translated
	// plus the offset the window or kernel_in range gave.
	Egress     string `mapstructure:"egress"`
	Translated uint64 `mapstructure:"translated"`
	// Sources are a two-input kernel's inputs in order: where writes for
	// input 0 and input 1 enter the O-NIC (host, port-a or port-b;
	// default port-a then port-b, the FLEET allreduce step).
	Sources []string `mapstructure:"sources"`
	// PairBufferKiB bounds what a two-input kernel holds per input while
	// writes wait for their partners (default 1024). A write that does
	// not fit is dropped and counted: real hardware would hold it back
	// at its port instead, so size it for the streams' skew.
	PairBufferKiB int `mapstructure:"pair_buffer_kib"`
}

// TaskFlowConfig is what a task flow (op task) drives: the kernel in slot
// Slot of the flow's O-NIC, through its task shell's registers in BAR0
// (kernels.TaskPage). Each transfer is a task: the host writes ARG0 (the
// task's length: the transfer size) and rings the doorbell, then writes
// the task's data into the O-NIC's window to the slot; when the kernel
// has taken it all and the last output has left, the shell writes its
// 32-byte completion record to Record in the host's memory and then the
// MSI-X message (unless Poll: the driver polls the record). The transfer
// ends when the last of these lands.
type TaskFlowConfig struct {
	Slot   int    `mapstructure:"slot"`
	Record uint64 `mapstructure:"record"` // host address of the completion record (default 0x7000_0000)
	Poll   bool   `mapstructure:"poll"`
}

// NVMeConfig is an NVMe device's media (kind nvme).
type NVMeConfig struct {
	// MediaLatency is from a command's fetch to its data being ready
	// (default 80 µs: a NAND flash page read and the controller, an
	// assumption for a datacentre TLC drive).
	MediaLatency time.Duration `mapstructure:"media_latency"`
	// MediaGbps is the most the media delivers (default 28 Gb/s, 3.5 GB/s:
	// a Gen3 x4 drive; a RAID of several drives behind one O-NIC is more).
	MediaGbps float64 `mapstructure:"media_gbps"`
}

// Defaults of an NVMe device.
const (
	DefaultMediaLatency = 80 * time.Microsecond
	DefaultMediaGbps    = 28
)

// NVMeQueues places an nvme-read flow's queues and data, as offsets in the
// device's (first) O-NIC's BAR2: the device reaches them through that
// O-NIC's windows. Command i uses slot i mod depth of each.
type NVMeQueues struct {
	SQ   uint64 `mapstructure:"sq"`   // submission queue (64-byte entries)
	CQ   uint64 `mapstructure:"cq"`   // completion queue (16-byte entries)
	Data uint64 `mapstructure:"data"` // data buffers, size bytes (rounded up to 4 KiB) each
	// MSI, if not 0, is where the device writes its MSI after each
	// completion entry (a window to the host's 0xFEExxxxx interrupt
	// range); 0: the driver polls its completion queue (SmartIO's does).
	MSI uint64 `mapstructure:"msi"`
}
