package cluster

import (
	"fmt"
	"strings"
	"time"

	"onic/emu/link"
	"onic/emu/sim"
	"onic/firmware"
	"onic/pcie"
	"onic/pcie/acl"
	"onic/pcie/manager"
	"onic/pcie/ntb"
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
}

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
}

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
	DefaultHoldTLPs  = 1024
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
	MaxPairBufferKiB  = 1 << 20     // a two-input kernel's pair buffer (1 GiB)
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
	// ONICsPerCPU is how many O-NICs share one CPU's root complex (default
	// 3: FLEET's servers have 8 CPUs with three O-NICs each); a host with
	// more O-NICs has more root complexes, each in its own PCI segment.
	ONICsPerCPU int `mapstructure:"onics_per_cpu"`
}

// ONICConfig is an O-NIC in a host.
type ONICConfig struct {
	Name string `mapstructure:"name"`
	Host string `mapstructure:"host"`
	// The manager pipeline: its clock, its latency in cycles — by
	// default the depth of the RTL onic generates for it
	// (hdlgen/manager.Depth), so the emulator's timing is the hardware's —
	// and its data path width in bits (256 or 512, default 512): each
	// ingress takes one beat of that width per cycle, so a TLP occupies
	// it for max(1, payload/width) cycles.
	ClockMHz       float64 `mapstructure:"clock_mhz"`
	PipelineCycles int     `mapstructure:"pipeline_cycles"`
	DataWidth      int     `mapstructure:"data_width"`
	// FibreM is the fibre from each port (A, B) to the MEMS switch, metres.
	FibreM  [2]float64     `mapstructure:"fibre_m"`
	Manager manager.Config `mapstructure:"manager"`
	// DownPolicy is what happens to traffic for a port that is down when
	// its window has no failover (a window with failover_egress uses the
	// other port): "hold" it (default, up to HoldTLPs per port, sent when
	// the port is back) or "fail" it (posted writes dropped, reads
	// completed with UR).
	DownPolicy string `mapstructure:"down_policy"`
	HoldTLPs   int    `mapstructure:"hold_tlps"`
	// Kernels are the in-network kernels loaded in its slots.
	Kernels []KernelConfig `mapstructure:"kernels"`
	// Part is its FPGA (default xcvu9p-flga2104-2L-e) and Board its
	// reconfiguration figures (docs/firmware.md; zero fields: defaults),
	// for firmware deployed to it. ReflashPolicy is what happens to
	// traffic that meets a reflash: "hold" it (default, up to HoldTLPs)
	// until the O-NIC or slot is back, or "fail" it.
	Part          string         `mapstructure:"part"`
	Board         firmware.Board `mapstructure:"board"`
	ReflashPolicy string         `mapstructure:"reflash_policy"`
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

func (h *HostConfig) defaults() {
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

// check checks a host's values (after defaults); p is its field path.
func (h *HostConfig) check(p string) error {
	if h.Memory < 0 || h.Memory > MaxLatency {
		return fmt.Errorf("%s.memory_latency: %v must be 0 to %v", p, h.Memory, MaxLatency)
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
	return nil
}

// check checks an O-NIC's own values (after defaults); p is its field path.
func (o *ONICConfig) check(p string) error {
	if !(o.ClockMHz >= MinClockMHz && o.ClockMHz <= MaxClockMHz) {
		return fmt.Errorf("%s.clock_mhz: %g must be %g to %g MHz", p, o.ClockMHz, MinClockMHz, MaxClockMHz)
	}
	if o.PipelineCycles < 1 || o.PipelineCycles > MaxPipelineCycles {
		return fmt.Errorf("%s.pipeline_cycles: %d must be 1 to %d", p, o.PipelineCycles, MaxPipelineCycles)
	}
	if o.DataWidth != 256 && o.DataWidth != 512 {
		return fmt.Errorf("%s.data_width: %d bits must be 256 or 512 (the widths hdlgen/manager generates)", p, o.DataWidth)
	}
	for j, m := range o.FibreM {
		if !(m >= 0 && m <= MaxFibreM) {
			return fmt.Errorf("%s.fibre_m[%d]: %g metres must be 0 to %g", p, j, m, MaxFibreM)
		}
	}
	if o.DownPolicy != "hold" && o.DownPolicy != "fail" {
		return fmt.Errorf("%s.down_policy: %q must be hold or fail", p, o.DownPolicy)
	}
	if o.HoldTLPs < 1 || o.HoldTLPs > MaxHoldTLPs {
		return fmt.Errorf("%s.hold_tlps: %d must be 1 to %d", p, o.HoldTLPs, MaxHoldTLPs)
	}
	if o.ReflashPolicy != "hold" && o.ReflashPolicy != "fail" {
		return fmt.Errorf("%s.reflash_policy: %q must be hold or fail", p, o.ReflashPolicy)
	}
	if _, err := firmware.LookupPart(o.Part); err != nil {
		return fmt.Errorf("%s.part: %v", p, err)
	}
	if err := o.Board.Check(); err != nil {
		return fmt.Errorf("%s.board.%v", p, err)
	}
	return nil
}

func (o *ONICConfig) defaults() {
	if o.ClockMHz == 0 {
		o.ClockMHz = DefaultClockMHz
	}
	if o.PipelineCycles == 0 {
		o.PipelineCycles = manager.Depth
	}
	if o.DataWidth == 0 {
		o.DataWidth = DefaultDataWidth
	}
	if o.DownPolicy == "" {
		o.DownPolicy = "hold"
	}
	if o.HoldTLPs == 0 {
		o.HoldTLPs = DefaultHoldTLPs
	}
	if o.ReflashPolicy == "" {
		o.ReflashPolicy = "hold"
	}
	if o.Part == "" {
		o.Part = firmware.DefaultPart
	}
}

// DefaultClockMHz and DefaultDataWidth are the O-NIC's PCIe manager: a
// 512-bit data path at 250 MHz carries 128 Gb/s, enough for one 126 Gb/s
// O-NIC link (shared/REFERENCE.md). The generated manager takes a beat
// per cycle (hdlgen/manager.II), so at these settings it does not limit
// a Gen3 x16 link; at a lower clock or 256 bits it does, and the
// emulator models that (onicNode.decide).
const (
	DefaultClockMHz  = 250
	DefaultDataWidth = 512
	// FibreNsPerMetre is light's flight time in fibre (shared/REFERENCE.md).
	FibreNsPerMetre = 4.9
	// hostLinkPropagation is the flight time on a host's PCIe link (board
	// traces and a riser, a few tens of centimetres).
	hostLinkPropagation = 2 * sim.Nanosecond
)

// Durations past MaxTime saturate at sim.Forever.
func ps(d time.Duration) sim.Time {
	if d >= MaxTime {
		return sim.Forever
	}
	return sim.Time(d.Nanoseconds()) * sim.Nanosecond
}

// MaxTime is the end of simulated time as a duration (about 106 days, the
// engine's picosecond clock's range): later deadlines are refused.
const MaxTime = time.Duration(sim.Forever / sim.Nanosecond)

// Build checks c and wires the cluster. Errors name the field path.
func Build(c Config) (*Cluster, error) {
	if c.Duration <= 0 {
		return nil, fmt.Errorf("duration: %v must be positive", c.Duration)
	}
	if c.Duration > MaxTime {
		return nil, fmt.Errorf("duration: %v is past the end of simulated time (%v)", c.Duration, MaxTime)
	}
	if len(c.Hosts) == 0 {
		return nil, fmt.Errorf("hosts: a cluster needs at least one host")
	}
	for _, n := range []struct {
		field    string
		got, max int
	}{{"hosts", len(c.Hosts), MaxHosts}, {"onics", len(c.ONICs), MaxONICs}, {"flows", len(c.Flows), MaxFlows}, {"phases", len(c.Phases), MaxPhases}} {
		if n.got > n.max {
			return nil, fmt.Errorf("%s: %d of them, more than the %d allowed", n.field, n.got, n.max)
		}
	}
	cl := &Cluster{s: sim.New(4096), cfg: c, why: map[string]uint64{}}
	hosts := map[string]*hostNode{}
	for i, hc := range c.Hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		hc.defaults()
		if hc.Name == "" {
			return nil, fmt.Errorf("%s.name: every host needs a name", p)
		}
		if _, dup := hosts[hc.Name]; dup {
			return nil, fmt.Errorf("%s.name: %q is already a host", p, hc.Name)
		}
		if err := hc.check(p); err != nil {
			return nil, err
		}
		h := &hostNode{c: cl, cfg: hc, idx: i, id: tlp.NewID(0, 0, 0)}
		hosts[hc.Name] = h
		cl.hosts = append(cl.hosts, h)
	}
	onics := map[string]*onicNode{}
	for i, oc := range c.ONICs {
		p := fmt.Sprintf("onics[%d]", i)
		oc.defaults()
		if oc.Name == "" {
			return nil, fmt.Errorf("%s.name: every O-NIC needs a name", p)
		}
		if _, dup := onics[oc.Name]; dup {
			return nil, fmt.Errorf("%s.name: %q is already an O-NIC", p, oc.Name)
		}
		h := hosts[oc.Host]
		if h == nil {
			return nil, fmt.Errorf("%s.host: %q is not a host", p, oc.Host)
		}
		if err := oc.check(p); err != nil {
			return nil, err
		}
		o := &onicNode{c: cl, cfg: oc, host: h, idx: i}
		onics[oc.Name] = o
		cl.onics = append(cl.onics, o)
		h.onics = append(h.onics, o)
	}
	for _, h := range cl.hosts {
		if len(h.onics) == 0 {
			return nil, fmt.Errorf("hosts: host %q has no O-NIC", h.cfg.Name)
		}
		if err := buildHost(cl, h); err != nil {
			return nil, err
		}
	}
	if c.MEMS.Ports == 0 {
		c.MEMS.Ports = DefaultMEMSPorts
	}
	if c.MEMS.Reconfig == 0 {
		c.MEMS.Reconfig = DefaultReconfig
	}
	if c.MEMS.BringUp == 0 {
		c.MEMS.BringUp = DefaultBringUp
	}
	if c.MEMS.Ports < 0 || c.MEMS.Ports > MaxMEMSPorts {
		return nil, fmt.Errorf("mems.ports: %d must be 1 to %d", c.MEMS.Ports, MaxMEMSPorts)
	}
	if c.MEMS.Reconfig < 0 || c.MEMS.Reconfig > MaxMEMSTime || c.MEMS.BringUp < 0 || c.MEMS.BringUp > MaxMEMSTime {
		return nil, fmt.Errorf("mems: reconfig %v and bring_up %v must be 0 to %v", c.MEMS.Reconfig, c.MEMS.BringUp, MaxMEMSTime)
	}
	if n := 2 * len(cl.onics); n > c.MEMS.Ports {
		return nil, fmt.Errorf("mems.ports: %d O-NIC ports need more than the switch's %d", n, c.MEMS.Ports)
	}
	cl.cfg.MEMS = c.MEMS
	for _, o := range cl.onics {
		for i := range o.ports {
			// Dark until a circuit lights it: the manager knows.
			o.ports[i] = &port{o: o, idx: i}
			o.mgr.PortDown[i] = true
		}
	}
	initial, err := cl.circuits(c.Circuits, "circuits", onics)
	if err != nil {
		return nil, err
	}
	if err := cl.relayLoop(initial, "circuits"); err != nil {
		return nil, err
	}
	for _, pr := range initial {
		cl.light(pr)
	}
	last := time.Duration(0)
	for i, ph := range c.Phases {
		p := fmt.Sprintf("phases[%d]", i)
		if ph.At <= last {
			return nil, fmt.Errorf("%s.at: %v must be after the previous phase (%v)", p, ph.At, last)
		}
		if ph.At > MaxTime {
			return nil, fmt.Errorf("%s.at: %v is past the end of simulated time (%v)", p, ph.At, MaxTime)
		}
		last = ph.At
		pairs, err := cl.circuits(ph.Circuits, p+".circuits", onics)
		if err != nil {
			return nil, err
		}
		if err := cl.relayLoop(pairs, p+".circuits"); err != nil {
			return nil, err
		}
		cl.phases = append(cl.phases, phase{at: ps(ph.At), pairs: pairs})
	}
	names := map[string]bool{}
	for i, fc := range c.Flows {
		p := fmt.Sprintf("flows[%d]", i)
		if fc.Name == "" || names[fc.Name] {
			return nil, fmt.Errorf("%s.name: %q must be a unique non-empty name", p, fc.Name)
		}
		names[fc.Name] = true
		h := hosts[fc.From]
		if h == nil {
			return nil, fmt.Errorf("%s.from: %q is not a host", p, fc.From)
		}
		if fc.Op != "write" && fc.Op != "read" && fc.Op != "nvme-read" && fc.Op != "task" {
			return nil, fmt.Errorf("%s.op: %q must be write, read, nvme-read or task", p, fc.Op)
		}
		if fc.Op == "task" {
			if fc.Depth == 0 {
				fc.Depth = 1
			}
			if fc.Depth != 1 {
				return nil, fmt.Errorf("%s.depth: %d: a kernel's task shell runs one task at a time", p, fc.Depth)
			}
		}
		if fc.Size < 1 || fc.Size > 1<<24 {
			return nil, fmt.Errorf("%s.size: %d must be 1 byte to 16 MiB", p, fc.Size)
		}
		if fc.Depth == 0 {
			fc.Depth = 4
		}
		if fc.Span == 0 {
			fc.Span = 256 << 20
		}
		if fc.Depth < 1 || fc.Depth > MaxDepth {
			return nil, fmt.Errorf("%s.depth: %d must be 1 to %d", p, fc.Depth, MaxDepth)
		}
		if fc.Transfers < 0 || fc.Start < 0 || fc.Stop < 0 || fc.Stop != 0 && fc.Stop <= fc.Start || fc.Start > MaxTime || fc.Stop > MaxTime {
			return nil, fmt.Errorf("%s: transfers, start and stop must not be negative, stop must be after start, and both within simulated time", p)
		}
		o := h.onics[0]
		if fc.Via != "" {
			if o = onics[fc.Via]; o == nil || o.host != h {
				return nil, fmt.Errorf("%s.via: %q is not an O-NIC of host %q", p, fc.Via, fc.From)
			}
		}
		bar2 := o.fn.BARs[2].Size
		if fc.Offset+fc.Span > bar2 || fc.Span < uint64((fc.Size+4095)&^4095) {
			return nil, fmt.Errorf("%s: offset %#x and span %#x must fit one transfer and lie within the O-NIC's BAR2 (%#x bytes)", p, fc.Offset, fc.Span, bar2)
		}
		if fc.RateGbps != 0 && !(fc.RateGbps >= MinRateGbps && fc.RateGbps <= MaxRateGbps) {
			return nil, fmt.Errorf("%s.rate_gbps: %g must be %g to %g (or left out: unpaced)", p, fc.RateGbps, MinRateGbps, MaxRateGbps)
		}
		if fc.Forward && fc.Op != "write" {
			return nil, fmt.Errorf("%s.forward: only a write flow can send on what its host receives", p)
		}
		if fc.Op == "task" {
			if err := o.taskFlow(fc.Task, p+".task"); err != nil {
				return nil, err
			}
		}
		fs := &flowState{c: cl, idx: i, cfg: fc, host: h, onic: o, base: o.fn.BARAddress(2) + fc.Offset}
		if fc.Forward {
			h.forwarders = append(h.forwarders, fs)
		}
		if fc.RateGbps > 0 {
			fs.gap = max(sim.Time(float64(fc.Size)*8/fc.RateGbps*float64(sim.Nanosecond)), 1)
		}
		cl.flows = append(cl.flows, fs)
	}
	return cl, nil
}

// relayLoop refuses a circuit set (named path) under which relayed
// writes would go round for ever: an O-NIC relays writes from one port
// out of the other, unchanged in address, so a ring of relays whose
// ranges all cover some address would circulate a write there without
// end.
func (cl *Cluster) relayLoop(pairs [][2]*port, path string) error {
	peer := map[*port]*port{}
	for _, pr := range pairs {
		peer[pr[0]], peer[pr[1]] = pr[1], pr[0]
	}
	type hop struct {
		o    *onicNode
		in   int // the port a write arrives on
		from string
	}
	var walk func(start, at hop, lo, hi uint64, route []string, depth int) error
	walk = func(start, at hop, lo, hi uint64, route []string, depth int) error {
		if depth > 2*len(cl.onics) {
			return nil
		}
		for _, r := range at.o.cfg.Manager.Relay {
			in := 0
			if r.From == "port-b" {
				in = 1
			}
			if in != at.in || r.Size == 0 || r.Base+r.Size < r.Base {
				continue
			}
			l, h := max(lo, r.Base), min(hi, r.Base+r.Size)
			if l >= h {
				continue
			}
			here := fmt.Sprintf("%s.%s", at.o.cfg.Name, r.From)
			next := peer[at.o.ports[1-in]]
			if next == nil {
				continue
			}
			nh := hop{next.o, next.idx, ""}
			if nh.o == start.o && nh.in == start.in {
				return fmt.Errorf("%s: relayed writes to %#x-%#x would go round for ever (%s -> %s.%s): break the ring of relays", path, l, h-1,
					strings.Join(append(route, here), " -> "), nh.o.cfg.Name, [2]string{"port-a", "port-b"}[nh.in])
			}
			if err := walk(start, nh, l, h, append(route, here), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, o := range cl.onics {
		for in := range 2 {
			h := hop{o: o, in: in}
			if err := walk(h, h, 0, ^uint64(0), nil, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// circuits checks a circuit list and returns its port pairs.
func (cl *Cluster) circuits(cs []CircuitConfig, path string, onics map[string]*onicNode) ([][2]*port, error) {
	wired := map[*port]string{}
	var out [][2]*port
	for i, cc := range cs {
		p := fmt.Sprintf("%s[%d]", path, i)
		var ends [2]*port
		for j, name := range []string{cc.A, cc.B} {
			fp := p + [2]string{".a", ".b"}[j]
			on, pn, ok := strings.Cut(name, ".")
			o := onics[on]
			if !ok || o == nil || (pn != "a" && pn != "b") {
				return nil, fmt.Errorf("%s: %q is not an O-NIC port (want onic.a or onic.b)", fp, name)
			}
			pt := o.ports[pn[0]-'a']
			if prev, used := wired[pt]; used {
				return nil, fmt.Errorf("%s: port %s is already wired in %s", fp, name, prev)
			}
			wired[pt] = p
			ends[j] = pt
		}
		if ends[0].o == ends[1].o {
			return nil, fmt.Errorf("%s: a circuit joins two different O-NICs", p)
		}
		out = append(out, ends)
	}
	return out, nil
}

func ingress(port int) manager.Ingress {
	if port == 1 {
		return manager.FromPortB
	}
	return manager.FromPortA
}

// buildHost enumerates host h's hierarchies (per CPU, a root complex
// with a root port per O-NIC, in configuration order) and builds each
// O-NIC's manager and host link.
func buildHost(cl *Cluster, h *hostNode) error {
	for first := 0; first < len(h.onics); first += h.cfg.ONICsPerCPU {
		cpu := h.onics[first:min(first+h.cfg.ONICsPerCPU, len(h.onics))]
		topo := pcie.TopologyConfig{Name: fmt.Sprintf("%s.cpu%d", h.cfg.Name, first/h.cfg.ONICsPerCPU)}
		for k, o := range cpu {
			topo.RootPorts = append(topo.RootPorts, pcie.PortConfig{Name: fmt.Sprintf("%s.rp%d", topo.Name, k),
				Gen: h.cfg.Gen, Width: h.cfg.Lanes, Device: &pcie.DeviceConfig{Name: o.cfg.Name, Kind: "onic"}})
		}
		hier, err := pcie.Build(topo)
		if err == nil {
			err = hier.Enumerate()
		}
		if err != nil {
			return fmt.Errorf("hosts %q: %v", h.cfg.Name, err)
		}
		h.hiers = append(h.hiers, hier)
		for _, o := range cpu {
			if err := buildONIC(cl, h, o, hier.Find(o.cfg.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildONIC builds O-NIC o, enumerated as node n: its manager and host link.
func buildONIC(cl *Cluster, h *hostNode, o *onicNode, n *pcie.Node) error {
	var err error
	o.fn, o.self = n.Funcs[0], n.ID(0)
	if o.mgr, err = manager.New(o.cfg.Manager, o.fn, o.self); err != nil {
		return fmt.Errorf("onics[%d].manager.%v", o.idx, err)
	}
	o.pl.set(o.cfg.PipelineCycles, o.cfg.ClockMHz, o.cfg.DataWidth)
	o.resetRegs()
	for j, kc := range o.cfg.Kernels {
		if err := o.loadKernel(kc, fmt.Sprintf("onics[%d].kernels[%d]", o.idx, j)); err != nil {
			return err
		}
	}
	o.link, err = link.New(cl.s, link.Config{Gen: tlp.Gen(h.cfg.Gen), Lanes: h.cfg.Lanes, MPS: h.cfg.MPS,
		Propagation: hostLinkPropagation}, hostEnd{h, o}, onicEnd{o, manager.FromHost})
	if err != nil {
		return fmt.Errorf("hosts %q: %v", h.cfg.Name, err)
	}
	return nil
}

// peerONIC is an O-NIC whose 1 GiB window on port A leads to the memory
// of whichever host is at the far end, with proxy ID proxy for its host
// and remote requesters allowed into its host's memory.
func peerONIC(name, host, proxy string, remote ...string) ONICConfig {
	return ONICConfig{Name: name, Host: host, FibreM: [2]float64{10, 10}, Manager: manager.Config{
		Translation: ntb.Config{
			Windows: []ntb.WindowConfig{{Name: "peer-memory", BAR: 2, Size: 1 << 30, Egress: "port-a", Translated: 1 << 32}},
			RID:     ntb.RIDConfig{ProxyBase: proxy, Map: []string{"00:00.0"}},
		},
		Access: acl.Config{Domains: []acl.DomainConfig{
			{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Egress: []string{"port-a"},
				Ranges: []acl.RangeConfig{{Base: 1 << 32, Size: 1 << 30, Read: true, Write: true}}},
			{Name: "peer", Requesters: remote, Ingress: []string{"port-a"}, Egress: []string{"host"},
				Ranges: []acl.RangeConfig{{Base: 1 << 32, Size: 1 << 30, Read: true, Write: true}}},
		}},
	}}
}

// Phased is FLEET's phased exchange: host A writes to B, the software
// quiesces the flow, the MEMS switches A's circuit from B to C, and A
// writes to C — its first transfers held while the new circuit is dark
// and training.
func Phased() Config {
	return Config{
		Name:     "phased",
		Duration: 100*time.Microsecond + DefaultReconfig + DefaultBringUp + 200*time.Microsecond,
		Hosts:    []HostConfig{{Name: "A"}, {Name: "B"}, {Name: "C"}},
		ONICs: []ONICConfig{
			peerONIC("onicA", "A", "10:00.0", "20:00.0-20:00.7", "30:00.0-30:00.7"),
			peerONIC("onicB", "B", "20:00.0", "10:00.0-10:00.7"),
			peerONIC("onicC", "C", "30:00.0", "10:00.0-10:00.7"),
		},
		Circuits: []CircuitConfig{{A: "onicA.a", B: "onicB.a"}},
		Phases:   []PhaseConfig{{At: 100 * time.Microsecond, Circuits: []CircuitConfig{{A: "onicA.a", B: "onicC.a"}}}},
		Flows: []FlowConfig{
			{Name: "A->B", From: "A", Op: "write", Size: 64 << 10, Stop: 80 * time.Microsecond},
			{Name: "A->C", From: "A", Op: "write", Size: 64 << 10, Start: 100 * time.Microsecond},
		},
	}
}

// TwoParty is FLEET's two-party exchange, the default scenario: hosts A
// and B, each with an O-NIC, port A of each joined by a MEMS circuit over
// 10 m of fibre a side, each host writing 64 KiB transfers into the
// other's memory through a 1 GiB window. It is written in YAML
// (scenarios/two-party.yaml, embedded) as a model for writing scenarios.
func TwoParty() Config { return embedded("two-party.yaml") }

// HostInterface is the cluster onic emu serve gives its clients by
// default: the two-party cluster without traffic generators, each host's
// software allowed to its O-NIC's registers, each O-NIC with a 16-entry
// LUT (scenarios/host-interface.yaml).
func HostInterface() Config { return embedded("host-interface.yaml") }

// RingMulticast is FLEET's ring multicast to three receivers: sender S's
// O-NIC sends out of port B to R1; R1's and R2's O-NICs keep a copy for
// their host and relay each write out of their port B to the next; R3
// only keeps it. (R3's port B closes the ring back to S's port A, unused:
// a relay on every hop would send writes round forever.) A write is
// delivered when all three hosts have it.
func RingMulticast() Config {
	sender := peerONIC("onicS", "S", "10:00.0", "40:00.0-40:00.7")
	sender.Manager.Translation.Windows[0].Egress = "port-b"
	sender.Manager.Access.Domains[0].Egress = []string{"port-b"}
	relayer := func(name, host, proxy string) ONICConfig {
		o := peerONIC(name, host, proxy, "10:00.0-10:00.7")
		o.Manager.Relay = []manager.RelayConfig{{From: "port-a", Base: 1 << 32, Size: 1 << 30}}
		o.Manager.Access.Domains[1].Egress = []string{"host", "port-b"}
		return o
	}
	return Config{
		Name:     "ring-multicast",
		Duration: 200 * time.Microsecond,
		Hosts:    []HostConfig{{Name: "S"}, {Name: "R1"}, {Name: "R2"}, {Name: "R3"}},
		ONICs: []ONICConfig{sender, relayer("onic1", "R1", "20:00.0"), relayer("onic2", "R2", "30:00.0"),
			peerONIC("onic3", "R3", "40:00.0", "10:00.0-10:00.7")},
		Circuits: []CircuitConfig{{A: "onicS.b", B: "onic1.a"}, {A: "onic1.b", B: "onic2.a"},
			{A: "onic2.b", B: "onic3.a"}, {A: "onic3.b", B: "onicS.a"}},
		Flows: []FlowConfig{{Name: "S->R1,R2,R3", From: "S", Op: "write", Size: 64 << 10}},
	}
}

// ThreeParty is FLEET's three-party exchange in units of one O-NIC
// (126 Gb/s): server A exchanges data with B over units O-NIC pairs and
// with C over unitsC pairs, each pair one MEMS circuit, both directions
// writing 64 KiB transfers. FLEET's example, 2 Tb/s with B and 10 Tb/s
// with C, is ThreeParty(16, 80): 192 O-NICs filling the 384-port switch.
func ThreeParty(unitsB, unitsC int) Config {
	c := Config{Name: "three-party", Duration: 100 * time.Microsecond,
		Hosts: []HostConfig{{Name: "A"}, {Name: "B"}, {Name: "C"}}}
	// party adds units O-NIC pairs between A and peer, whose O-NICs show
	// its requesters to A as proxy (bus:00.x).
	party := func(peer string, units int, bus string) {
		for k := range units {
			near, far := fmt.Sprintf("a%s%d", peer, k), fmt.Sprintf("%s%d", strings.ToLower(peer), k)
			c.ONICs = append(c.ONICs, peerONIC(near, "A", "10:00.0", bus+":00.0-"+bus+":00.7"),
				peerONIC(far, peer, bus+":00.0", "10:00.0-10:00.7"))
			c.Circuits = append(c.Circuits, CircuitConfig{A: near + ".a", B: far + ".a"})
			c.Flows = append(c.Flows,
				FlowConfig{Name: fmt.Sprintf("A->%s#%d", peer, k), Group: "A->" + peer, From: "A", Via: near, Op: "write", Size: 64 << 10},
				FlowConfig{Name: fmt.Sprintf("%s->A#%d", peer, k), Group: peer + "->A", From: peer, Via: far, Op: "write", Size: 64 << 10})
		}
	}
	party("B", unitsB, "20")
	party("C", unitsC, "30")
	return c
}

// DirectGathering is FLEET's direct data gathering: n radar
// data-acquisition cards in a device chassis, each with its own O-NIC,
// stream 64 KiB blocks of samples at rateGbps each straight into server
// A's memory, one MEMS circuit per card to one of A's O-NICs.
func DirectGathering(n int, rateGbps float64) Config {
	c := Config{Name: "direct-gathering", Duration: 200 * time.Microsecond, Hosts: []HostConfig{{Name: "A"}}}
	for k := range n {
		card, sensor, near := fmt.Sprintf("radar%d", k), fmt.Sprintf("onicR%d", k), fmt.Sprintf("onicA%d", k)
		buf := uint64(1)<<32 + uint64(k)<<30 // the card's 1 GiB buffer in A's memory
		c.Hosts = append(c.Hosts, HostConfig{Name: card, Kind: "sensor"})
		so := peerONIC(sensor, card, "20:00.0", "10:00.0-10:00.7")
		so.Manager.Translation.Windows[0].Translated = buf
		so.Manager.Access.Domains[0].Ranges[0].Base = buf
		ao := peerONIC(near, "A", "10:00.0", "20:00.0-20:00.7")
		ao.Manager.Access.Domains[1].Ranges[0].Base = buf
		c.ONICs = append(c.ONICs, ao, so)
		c.Circuits = append(c.Circuits, CircuitConfig{A: sensor + ".a", B: near + ".a"})
		c.Flows = append(c.Flows, FlowConfig{Name: card + "->A", Group: "radar->A", From: card, Op: "write",
			Size: 64 << 10, RateGbps: rateGbps})
	}
	return c
}

// NVMeGathering is FLEET's direct data gathering from stored data: server
// A reads from n NVMe RAIDs in a device chassis, each behind its own
// O-NIC with media delivering mediaGbps. A's driver keeps 32 commands of
// 128 KiB in flight per RAID, its queues and buffers in its own memory;
// each command is a doorbell write from A, a command fetch and the data
// and completion-entry writes from the device.
func NVMeGathering(n int, mediaGbps float64) Config {
	c := Config{Name: "nvme-gathering", Duration: 600 * time.Microsecond, Hosts: []HostConfig{{Name: "A"}}}
	for k := range n {
		raid, near, far := fmt.Sprintf("nvme%d", k), fmt.Sprintf("onicA%d", k), fmt.Sprintf("onicN%d", k)
		c.Hosts = append(c.Hosts, HostConfig{Name: raid, Kind: "nvme", NVMe: NVMeConfig{MediaGbps: mediaGbps}})
		c.ONICs = append(c.ONICs, peerONIC(near, "A", "10:00.0", "20:00.0-20:00.7"), peerONIC(far, raid, "20:00.0", "10:00.0-10:00.7"))
		c.Circuits = append(c.Circuits, CircuitConfig{A: near + ".a", B: far + ".a"})
		c.Flows = append(c.Flows, FlowConfig{Name: raid + "->A", Group: "nvme->A", From: "A", Via: near, Op: "nvme-read",
			Size: 128 << 10, Depth: 32, NVMe: NVMeQueues{SQ: 0, CQ: 1 << 20, Data: 16 << 20}})
	}
	return c
}

// Pipeline is FLEET's NVMe -> GPU -> server A -> server C pipeline with an
// in-flight FPGA transform. A's driver has the NVMe RAID read 128 KiB
// blocks straight into the GPU's memory (the RAID's O-NIC: queues through
// port A to A, data through port B to the GPU); the GPU sends on what it
// receives to A; A sends on what it receives to C through a window into a
// kernel slot of its O-NIC, whose kernel converts it from fp32 to bf16
// (activations sent on at half the bytes) and streams it out to C.
// Every stage is a separate O-NIC hop through the MEMS.
func Pipeline() Config {
	nvmeONIC := peerONIC("onicN", "nvme", "20:00.0", "10:00.0-10:00.7")
	nvmeONIC.Manager.Translation.Windows = append(nvmeONIC.Manager.Translation.Windows,
		ntb.WindowConfig{Name: "gpu-memory", BAR: 2, Offset: 1 << 30, Size: 1 << 30, Egress: "port-b", Translated: 1 << 32})
	nvmeONIC.Manager.Access.Domains[0].Egress = []string{"port-a", "port-b"}
	gpuONIC := peerONIC("onicG", "gpu", "30:00.0", "20:00.0-20:00.7")
	gpuONIC.Manager.Translation.Windows[0].Egress = "port-b"
	gpuONIC.Manager.Access.Domains[0].Egress = []string{"port-b"}
	fromGPU := peerONIC("onicA2", "A", "10:00.0", "30:00.0-30:00.7")
	toC := peerONIC("onicA3", "A", "10:00.0", "40:00.0-40:00.7")
	toC.Manager.Translation.Windows[0] = ntb.WindowConfig{Name: "transform", BAR: 2, Size: 1 << 30, Egress: "kernel:1"}
	toC.Manager.Access.Domains[0].Egress = []string{"kernel:1"}
	toC.Manager.Access.Domains[0].Ranges[0].Base = 0
	toC.Kernels = []KernelConfig{{Slot: 1, Name: "fp32-to-bf16", Egress: "port-a", Translated: 1 << 32}}
	return Config{
		Name:     "pipeline",
		Duration: 600 * time.Microsecond,
		Hosts: []HostConfig{{Name: "A"}, {Name: "C"}, {Name: "nvme", Kind: "nvme", NVMe: NVMeConfig{MediaGbps: 100}},
			{Name: "gpu", Kind: "gpu"}},
		ONICs: []ONICConfig{peerONIC("onicA1", "A", "10:00.0", "20:00.0-20:00.7"), fromGPU, toC,
			peerONIC("onicC", "C", "40:00.0", "10:00.0-10:00.7"), nvmeONIC, gpuONIC},
		Circuits: []CircuitConfig{{A: "onicA1.a", B: "onicN.a"}, {A: "onicN.b", B: "onicG.a"},
			{A: "onicG.b", B: "onicA2.a"}, {A: "onicA3.a", B: "onicC.a"}},
		Flows: []FlowConfig{
			{Name: "nvme->gpu", From: "A", Via: "onicA1", Op: "nvme-read", Size: 128 << 10, Depth: 32,
				NVMe: NVMeQueues{SQ: 0, CQ: 1 << 20, Data: 1 << 30}},
			{Name: "gpu->A", From: "gpu", Op: "write", Size: 128 << 10, Forward: true},
			{Name: "A->C", From: "A", Via: "onicA3", Op: "write", Size: 128 << 10, Forward: true},
		},
	}
}

// Allreduce is one step of an allreduce across an O-NIC's two ports (as
// SwitchML and ATP aggregate gradients in the network, here in FLEET's
// O-NIC): hosts A and B each write 64 KiB blocks of int32 gradients to C;
// A's arrive on port A of C's O-NIC, B's on port B, both into its
// kernel_in range, where the sum-int32 kernel in slot 0 adds them element
// by element and writes the sums into C's memory. Each write ends when
// the sum it went into is in C's memory, so the faster sender waits for
// the slower one, as in any synchronous allreduce.
func Allreduce() Config {
	// A's O-NIC is behind port A, B's behind port B: each peer's IDs are
	// trusted only on its own port.
	onicC := peerONIC("onicC", "C", "30:00.0", "10:00.0-10:00.7")
	peerB := onicC.Manager.Access.Domains[1]
	peerB.Name, peerB.Requesters, peerB.Ingress = "peer-b", []string{"20:00.0-20:00.7"}, []string{"port-b"}
	onicC.Manager.Access.Domains = append(onicC.Manager.Access.Domains, peerB)
	onicC.Manager.Access.Domains[1].Name = "peer-a"
	for i := 1; i <= 2; i++ {
		onicC.Manager.Access.Domains[i].Egress = []string{"kernel:0"}
	}
	onicC.Manager.KernelIn = []manager.KernelInConfig{
		{From: "port-a", Base: 1 << 32, Size: 1 << 30, Slot: 0},
		{From: "port-b", Base: 1 << 32, Size: 1 << 30, Slot: 0},
	}
	onicC.Kernels = []KernelConfig{{Slot: 0, Name: "sum-int32", Egress: "host", Translated: 2 << 32}}
	return Config{
		Name:     "allreduce",
		Duration: 200 * time.Microsecond,
		Hosts:    []HostConfig{{Name: "A"}, {Name: "B"}, {Name: "C"}},
		ONICs: []ONICConfig{peerONIC("onicA", "A", "10:00.0", "30:00.0-30:00.7"),
			peerONIC("onicB", "B", "20:00.0", "30:00.0-30:00.7"), onicC},
		Circuits: []CircuitConfig{{A: "onicA.a", B: "onicC.a"}, {A: "onicB.a", B: "onicC.b"}},
		Flows: []FlowConfig{
			{Name: "A->C", From: "A", Op: "write", Size: 64 << 10},
			{Name: "B->C", From: "B", Op: "write", Size: 64 << 10},
		},
	}
}

// Offload is a host using its O-NIC's FPGA as an accelerator, the way
// FLEET's runtime drives an FPGA processor: A's driver runs tasks of 256
// KiB on the fp32-to-bf16 kernel in slot 1 — ARG0 and a doorbell written
// to the slot's task shell, the fp32 data written through a window into
// the slot, the bf16 result written back into A's memory, then the
// shell's completion record and an MSI-X interrupt. One task at a time.
func Offload() Config {
	o := peerONIC("onicA", "A", "10:00.0")
	o.Manager.Translation.Windows[0] = ntb.WindowConfig{Name: "offload", BAR: 2, Size: 1 << 30, Egress: "kernel:1"}
	o.Manager.Access.Domains = o.Manager.Access.Domains[:1]
	o.Manager.Access.Domains[0].Egress = []string{"kernel:1", "local"}
	o.Manager.Access.Domains[0].Ranges = []acl.RangeConfig{{Base: 0, Size: 1 << 30, Read: true, Write: true}}
	o.Kernels = []KernelConfig{{Slot: 1, Name: "fp32-to-bf16", Egress: "host", Translated: 2 << 32}}
	return Config{
		Name:     "offload",
		Duration: 200 * time.Microsecond,
		Hosts:    []HostConfig{{Name: "A"}},
		ONICs:    []ONICConfig{o},
		Flows:    []FlowConfig{{Name: "A tasks", From: "A", Op: "task", Size: 256 << 10, Task: TaskFlowConfig{Slot: 1}}},
	}
}

// Scenario is a built-in scenario.
type Scenario struct {
	Name, Description string
	Config            func() Config
}

// Scenarios lists the built-in scenarios, the default first.
func Scenarios() []Scenario {
	return []Scenario{
		{"two-party", "FLEET's two-party exchange: hosts A and B write 64 KiB transfers into each other's memory through their O-NICs and one MEMS circuit", TwoParty},
		{"phased", "FLEET's phased exchange: A writes to B, the MEMS moves A's circuit to C (10 ms dark, 1 ms bring-up), A writes to C", Phased},
		{"three-party", "FLEET's three-party exchange: A exchanges 2 Tb/s with B and 10 Tb/s with C over 16 and 80 O-NIC pairs (192 O-NICs, 384 MEMS ports)", func() Config { return ThreeParty(16, 80) }},
		{"direct-gathering", "FLEET's direct data gathering: 8 radar acquisition cards, each with an O-NIC, stream 100 Gb/s each into server A's memory", func() Config { return DirectGathering(8, 100) }},
		{"nvme-gathering", "FLEET's direct data gathering from storage: server A reads 128 KiB blocks from two NVMe RAIDs (100 Gb/s media each, 80 us latency), each behind its own O-NIC", func() Config { return NVMeGathering(2, 100) }},
		{"pipeline", "FLEET's NVMe -> GPU -> server A -> server C pipeline: an NVMe RAID reads into the GPU, which sends on to A, which sends on to C through its O-NIC's fp32-to-bf16 kernel", Pipeline},
		{"allreduce", "an allreduce step across an O-NIC's two ports: A's and B's int32 gradients meet in C's O-NIC, whose sum-int32 kernel writes their sum into C's memory", Allreduce},
		{"offload", "a host drives its O-NIC's fp32-to-bf16 kernel as an accelerator: tasks launched by doorbell, data in and out over the host link, a completion record and an MSI-X interrupt per task", Offload},
		{"ring-multicast", "FLEET's ring multicast: S writes 64 KiB transfers that O-NICs R1 and R2 keep and relay, so R1, R2 and R3 each receive every byte", RingMulticast},
		{"host-interface", "the two-party cluster with no traffic generators, for onic emu serve: the hosts' software is its clients", HostInterface},
		{"two-party-read", "the two-party exchange with DMA reads instead of writes", func() Config {
			c := TwoParty()
			c.Name = "two-party-read"
			for i := range c.Flows {
				c.Flows[i].Op = "read"
			}
			return c
		}},
	}
}

// Lookup returns the built-in scenario name.
func Lookup(name string) (Config, error) {
	var names []string
	for _, s := range Scenarios() {
		if s.Name == name {
			return s.Config(), nil
		}
		names = append(names, s.Name)
	}
	return Config{}, fmt.Errorf("no scenario %q (built in: %s)", name, strings.Join(names, ", "))
}
