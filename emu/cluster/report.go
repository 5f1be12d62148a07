package cluster

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/pcie/acl"
	"onic/pcie/manager"
)

// Report is what a run produced. Everything but Speed is a function of the
// configuration alone: the same configuration gives the same report.
type Report struct {
	Scenario   string  `json:"scenario"`
	SimulatedS float64 `json:"simulated_seconds"`
	// Reconfigurations of the MEMS and the time circuits spent dark or
	// training because of them.
	Reconfigurations int          `json:"reconfigurations"`
	StallS           float64      `json:"reconfiguration_stall_seconds"`
	Flows            []FlowReport `json:"flows"`
	// Groups sums the flows of each group (FlowConfig.Group): throughput
	// added up, latency percentiles over all their transfers.
	Groups     []FlowReport `json:"groups,omitempty"`
	Hosts      []HostReport `json:"hosts"`
	ONICs      []ONICReport `json:"onics"`
	Accounting Accounting   `json:"accounting"`
	// Taps names the capture points by tap number, when TLPs were captured.
	Taps  []string `json:"taps,omitempty"`
	Speed Speed    `json:"speed"`
	// RTL is the run's hardware O-NICs (UseHardware), if it had any.
	RTL *RTLReport `json:"rtl,omitempty"`
	// Fidelity is the run's fidelity when not the packet level;
	// TransferShare is the share of its O-NICs' time (simulated time
	// times O-NICs) carried at the transfer level, in TransferWindows
	// steady stretches, the rest simulated TLP by TLP.
	Fidelity        string  `json:"fidelity,omitempty"`
	TransferShare   float64 `json:"transfer_share,omitempty"`
	TransferWindows int     `json:"transfer_windows,omitempty"`
	// TransferHeld says why the run kept the packet level throughout,
	// when something in it needs every TLP (a capture, hardware O-NICs,
	// software clients).
	TransferHeld string `json:"transfer_held,omitempty"`
}

// RTLReport is what the cards of the RTL backend did.
type RTLReport struct {
	ONICs  []string `json:"onics"`  // the O-NICs that ran as their generated cards
	Cycles uint64   `json:"cycles"` // clock cycles the cards ran (the clock stops while they are quiet)
	// UnseenWrites are host writes a card took whose bytes never landed
	// in a host's memory: the cards dropped them (their counters, in
	// BAR0, say why) or they are still on their way.
	UnseenWrites int `json:"unseen_writes"`
	// RegisterWrites are host writes to the cards' register BARs, which
	// the accounting counts delivered when the block hands them to the
	// card (one the card refuses is in its COUNT_DENIED).
	RegisterWrites uint64 `json:"register_writes"`
	// Refused is why a card's interface refused the first TLP it
	// refused (rtl-refused in the accounting).
	Refused string `json:"refused,omitempty"`
	// Error is the first error a card gave, which stopped the run.
	Error string `json:"error,omitempty"`
}

// FlowReport is one flow's throughput and transfer latency.
type FlowReport struct {
	Name      string  `json:"name"`
	Op        string  `json:"op"`
	Transfers int     `json:"transfers"` // finished whole
	Failed    int     `json:"failed"`    // finished with a failed request
	Gbps      float64 `json:"gbps"`      // payload delivered over the flow's active time (start to the end, or to its last transfer's end if it stops)
	P50Ns     float64 `json:"latency_p50_ns"`
	P99Ns     float64 `json:"latency_p99_ns"`
	P999Ns    float64 `json:"latency_p999_ns"`
	MaxNs     float64 `json:"latency_max_ns"`
}

// HostReport is what reached one host's memory from other hosts.
type HostReport struct {
	Name          string  `json:"name"`
	Kind          string  `json:"kind"`
	ReceivedBytes uint64  `json:"received_bytes"` // remote writes into its memory
	ReceivedGbps  float64 `json:"received_gbps"`  // over the whole run
	Interrupts    uint64  `json:"interrupts"`     // MSIs received
	// MasterAborts are the host software's accesses (emu serve) to
	// addresses no device claimed: the root complex answered them with
	// all-ones, and no O-NIC's counter saw them.
	MasterAborts uint64 `json:"master_aborts,omitempty"`
	// UnexpectedCompletions are reads of its memory whose requester ID
	// its root complex could route to no root port (PCIe §2.3.2): their
	// completions went nowhere, and each such read is dropped in the
	// accounting as unexpected-completion.
	UnexpectedCompletions uint64 `json:"unexpected_completions,omitempty"`
	// OutsideMemory are devices' writes and reads outside the memory its
	// software attached with: Unsupported Requests at its root complex
	// (writes dropped, reads completed with UR).
	OutsideMemory uint64 `json:"outside_memory,omitempty"`
	// WritesWithoutSoftware are devices' writes to it while no software
	// was attached, under SoftwareOnly (dropped).
	WritesWithoutSoftware uint64 `json:"writes_without_software,omitempty"`
}

// ONICReport is one O-NIC's counters: its manager's decisions by reason
// (only those that occurred) and the TLPs sent out of each optical port.
type ONICReport struct {
	Name     string            `json:"name"`
	Manager  map[string]uint64 `json:"manager"`
	PortTLPs [2]uint64         `json:"port_tlps"` // sent out of port A, port B
	// Card: the O-NIC ran as its generated card (UseHardware): Manager is
	// empty, the card's decisions being in its COUNT_* registers.
	Card bool `json:"card,omitempty"`
	// Kernels is what each loaded kernel did, by slot: first those a
	// reflash replaced, then those loaded at the end.
	Kernels []KernelReport `json:"kernels,omitempty"`
	// Deploys are the firmware loads tried (deploy.go); ReflashNs is the
	// time the whole O-NIC spent in full reflashes and SlotReflashNs each
	// slot's in partial ones, up to the end of the run.
	Deploys       []DeployReport `json:"deploys,omitempty"`
	Replays       []ReplayReport `json:"replays,omitempty"` // residency plans replayed (replay.go)
	ReflashNs     float64        `json:"reflash_ns,omitempty"`
	SlotReflashNs []float64      `json:"slot_reflash_ns,omitempty"`
	// Pipeline is present when the manager's data path, or an adapter in
	// front of it, held TLPs back: it was a bottleneck somewhere in the
	// run.
	Pipeline *PipelineReport `json:"pipeline,omitempty"`
	// Stalls is present when a port's link stopped making progress
	// (stall.go): how often each port (A, B) counted as stalled, and how
	// often its link went down for want of credits and retrained.
	Stalls *StallReport `json:"stalls,omitempty"`
	// LinkErrors is present when a port's link received damaged TLPs
	// (a fault of kind errors): per port (A, B), what its data link
	// layer did about them, the counts the card keeps as <port>_crc_errors,
	// <port>_naks and <port>_replays.
	LinkErrors *[2]LinkErrors `json:"link_errors,omitempty"`
}

// errorReports is st and le as a report has them: nil where all zero.
func errorReports(st StallReport, le [2]LinkErrors) (*StallReport, *[2]LinkErrors) {
	var stp *StallReport
	var lep *[2]LinkErrors
	if st != (StallReport{}) {
		stp = &st
	}
	if le != [2]LinkErrors{} {
		lep = &le
	}
	return stp, lep
}

// LinkErrors is what one port's data link layer did about damaged TLPs
// (PCIe Base §3.6): the TLPs it received damaged and discarded, the Naks
// it sent, the replays of its replay buffer it started (for a Nak or its
// replay timer), those its replay timer started and the times REPLAY_NUM
// rolled over (its link then retrained). A card's receiver skips to the
// next control word after a damaged frame, so its crc_errors leaves out
// damaged frames behind the first; a card's link counts neither replay
// timeouts nor rollovers apart (its <port>_stalls has the rollovers).
type LinkErrors struct {
	CRCErrors      uint64 `json:"crc_errors"`
	Naks           uint64 `json:"naks"`
	Replays        uint64 `json:"replays"`
	ReplayTimeouts uint64 `json:"replay_timeouts"`
	Rollovers      uint64 `json:"rollovers"`
}

// StallReport is what an O-NIC's egress watchdogs did, per port (A, B):
// the counts the card keeps as <port>_egress_stalls and its link's
// stalls.
type StallReport struct {
	EgressStalls [2]uint64 `json:"egress_stalls"`
	Retrains     [2]uint64 `json:"retrains"`
}

// PipelineReport is how busy an O-NIC's manager pipeline was: its data
// path (at the end of the run), how many TLPs waited for it or the
// adapter in front of their ingress (the PCIe block's CQ or RC, a port's
// deframer) and how long, and the fraction of the run each ingress (host,
// port A, port B) was busy, each TLP counting the longer of its adapter's
// time and the pipeline's.
type PipelineReport struct {
	DataWidth  int        `json:"data_width"`
	ClockMHz   float64    `json:"clock_mhz"`
	Waited     uint64     `json:"waited"`
	MeanWaitNs float64    `json:"mean_wait_ns"`
	MaxWaitNs  float64    `json:"max_wait_ns"`
	Busy       [3]float64 `json:"busy"`
}

// Accounting is where every injected request ended. Injected equals the
// sum of the others; Run fails if it does not.
type Accounting struct {
	Injected    uint64            `json:"injected"`
	Delivered   uint64            `json:"delivered"`
	ErrorStatus uint64            `json:"completed_with_error"`
	Denied      uint64            `json:"denied"`
	Unsupported uint64            `json:"unsupported"`
	Dropped     uint64            `json:"dropped"`
	InFlight    uint64            `json:"in_flight"`
	Reasons     map[string]uint64 `json:"reasons,omitempty"`
}

// Speed is how fast the emulator ran (wall clock, so it varies).
type Speed struct {
	WallSeconds    float64 `json:"wall_seconds"`
	Events         uint64  `json:"events"`
	TLPs           uint64  `json:"tlps"`
	TLPsPerSecond  float64 `json:"tlps_per_wall_second"`
	SimulatedRatio float64 `json:"simulated_per_wall"`
}

// Run builds c, runs it for its duration and reports.
func Run(c scenario.Config) (Report, error) {
	cl, err := Build(c)
	if err != nil {
		return Report{}, err
	}
	return cl.Run()
}

// ProgressSteps is how many times a run with a progress function reports.
const ProgressSteps = 1000

// OnProgress makes Run call f, ProgressSteps times in all (at most, at
// the transfer level, whose carried stretches it reports once each), with
// the simulated time reached and the run's length. The run's results do
// not depend on it.
func (cl *Cluster) OnProgress(f func(done, total time.Duration)) { cl.progress = f }

// Run runs a built cluster for its configured duration and reports. It
// fails if the accounting does not add up.
//
// Anything scheduled at or after the end of the run — a MEMS phase, a
// flow's start, a deployment — would silently not happen, so Run refuses
// it.
func (cl *Cluster) Run() (Report, error) {
	if err := cl.afterEnd(); err != nil {
		return Report{}, err
	}
	cl.Start()
	start := time.Now()
	end := ps(cl.cfg.Duration)
	switch {
	case cl.carries():
		var told sim.Time
		cl.runCarried(end, func(t sim.Time) {
			if cl.progress != nil && (t-told >= end/ProgressSteps || t == end) {
				told = t
				cl.progress(time.Duration(t/sim.Nanosecond), cl.cfg.Duration)
			}
		})
	case cl.progress == nil:
		cl.s.Run(end)
	default:
		// Run in steps so the caller can show how far the run is.
		step := max(end/ProgressSteps, 1)
		for t := step; ; t += step {
			t = min(t, end)
			cl.s.Run(t)
			cl.progress(time.Duration(t/sim.Nanosecond), cl.cfg.Duration)
			if t == end {
				break
			}
		}
	}
	return cl.report(cl.cfg.Duration, time.Since(start).Seconds())
}

// Start schedules what the configuration starts: flows, MEMS phases and
// deployments. Run calls it; a caller stepping the cluster itself
// (Advance) calls it once first. Later calls do nothing.
func (cl *Cluster) Start() {
	if cl.started {
		return
	}
	cl.started = true
	for _, f := range cl.flows {
		if f.soft {
			continue
		}
		if f.cfg.Start == 0 {
			f.feed()
		} else {
			cl.s.At(ps(f.cfg.Start), f, flowStarts)
		}
	}
	for i, ph := range cl.phases {
		cl.s.At(ph.at, memsSwitch{cl}, memsPhase|uint64(i)<<1)
	}
	for i, d := range cl.deploys {
		cl.s.At(d.at, d.o, onicDeploy|uint64(i)<<2)
	}
}

// afterEnd names the first thing the configuration schedules at or after
// the end of the run.
func (cl *Cluster) afterEnd() error {
	d := cl.cfg.Duration
	for i, ph := range cl.cfg.Phases {
		if ph.At >= d {
			return fmt.Errorf("phases[%d].at: %v is not before the end of the run (duration %v): the phase would never happen", i, ph.At, d)
		}
	}
	for i, f := range cl.flows {
		if !f.soft && f.cfg.Start >= d {
			return fmt.Errorf("flows[%d].start: %v is not before the end of the run (duration %v): the flow would never start", i, f.cfg.Start, d)
		}
	}
	for _, dp := range cl.deploys {
		if dp.at >= ps(d) {
			return fmt.Errorf("deploy %s: at %v, not before the end of the run (duration %v): it would never load", dp.name, time.Duration(dp.at/sim.Nanosecond), d)
		}
	}
	return nil
}

// Advance runs the events up to simulated time until (Start first); a
// time past MaxTime is taken as MaxTime.
func (cl *Cluster) Advance(until time.Duration) {
	cl.Start()
	cl.s.Run(ps(until))
}

// AdvanceLimit is Advance that returns after at most n events; it reports
// whether it reached until (or a callback stopped it), so a caller can
// check for other work and call again.
func (cl *Cluster) AdvanceLimit(until time.Duration, n int) bool {
	cl.Start()
	return cl.s.RunLimit(ps(until), n)
}

// Now is the simulated time reached.
func (cl *Cluster) Now() time.Duration { return time.Duration(cl.scn() / sim.Nanosecond) }

// Report reports a stepped cluster up to now; wall is the wall-clock
// seconds it ran, for the speed figures.
func (cl *Cluster) Report(wall float64) (Report, error) { return cl.report(cl.Now(), wall) }

// report is the report of a run of length d (at least 1 ns).
//
// Long: it reads every part of the cluster into its section of the
// report in turn — flows, groups, hosts, O-NICs, the accounting — each a
// few lines.
func (cl *Cluster) report(d time.Duration, wall float64) (Report, error) {
	d = max(d, time.Nanosecond)
	if cl.capture != nil && cl.capture.err != nil {
		return Report{}, cl.capture.err
	}

	dur := float64(d) / float64(time.Second)
	rep := Report{Scenario: cl.cfg.Name, SimulatedS: dur, Reconfigurations: cl.reconf,
		StallS: float64(cl.stall) / float64(sim.Second)}
	if h := cl.hw; h != nil {
		rep.RTL = &RTLReport{ONICs: h.x.ONICs(), Cycles: h.cycles, RegisterWrites: h.regWrites, Refused: h.refused}
		for _, q := range h.posted {
			rep.RTL.UnseenWrites += len(q)
		}
		if h.err != nil {
			rep.RTL.Error = h.err.Error()
		}
	}
	for _, f := range cl.flows {
		p := f.percentiles()
		rep.Flows = append(rep.Flows, FlowReport{Name: f.cfg.Name, Op: f.cfg.Op, Transfers: f.ok, Failed: f.bad,
			Gbps:  float64(f.bytes) * 8 / f.activeSeconds(d) / 1e9,
			P50Ns: ns(p[0]), P99Ns: ns(p[1]), P999Ns: ns(p[2]), MaxNs: ns(p[3])})
	}
	var groups []string
	members := map[string][]*flowState{}
	for _, f := range cl.flows {
		if g := f.cfg.Group; g != "" {
			if members[g] == nil {
				groups = append(groups, g)
			}
			members[g] = append(members[g], f)
		}
	}
	for _, g := range groups {
		gr := FlowReport{Name: g, Op: members[g][0].cfg.Op}
		var lat latencyHist
		for _, f := range members[g] {
			if f.cfg.Op != gr.Op {
				gr.Op = "mixed"
			}
			gr.Transfers += f.ok
			gr.Failed += f.bad
			gr.Gbps += rep.Flows[slices.Index(cl.flows, f)].Gbps
			lat.merge(&f.hist)
		}
		p := lat.percentiles()
		gr.P50Ns, gr.P99Ns, gr.P999Ns, gr.MaxNs = ns(p[0]), ns(p[1]), ns(p[2]), ns(p[3])
		rep.Groups = append(rep.Groups, gr)
	}
	for _, h := range cl.hosts {
		rep.Hosts = append(rep.Hosts, HostReport{Name: h.cfg.Name, Kind: h.cfg.Kind, ReceivedBytes: h.written,
			ReceivedGbps: float64(h.written) * 8 / dur / 1e9, Interrupts: h.interrupts, MasterAborts: h.masterAborts,
			UnexpectedCompletions: h.unexpected, OutsideMemory: h.outsideMemory, WritesWithoutSoftware: h.absent})
	}
	for _, o := range cl.onics {
		or := ONICReport{Name: o.cfg.Name, Manager: map[string]uint64{}, PortTLPs: [2]uint64{o.ports[0].sent, o.ports[1].sent}}
		for _, r := range manager.Reasons() {
			if n := o.mgr.Count(r) + o.pastCounts[r]; n > 0 {
				or.Manager[r.String()] = n
			}
		}
		for _, r := range acl.Denials() { // denied, by the rule that refused
			if n := o.mgr.Denials(r) + o.pastDenials[r]; n > 0 {
				or.Manager["denied:"+r.String()] = n
			}
		}
		or.Kernels = append(or.Kernels, o.pastKernels...)
		or.Deploys, or.Replays, or.ReflashNs = o.deploys, o.replays, ns(o.reflashing(-1))
		for n := range o.slotTime {
			if t := o.reflashing(n); t > 0 {
				for len(or.SlotReflashNs) <= n {
					or.SlotReflashNs = append(or.SlotReflashNs, 0)
				}
				or.SlotReflashNs[n] = ns(t)
			}
		}
		for _, k := range o.kernels {
			if k != nil {
				or.Kernels = append(or.Kernels, k.report())
			}
		}
		or.Pipeline = o.pl.report(d)
		or.Stalls, or.LinkErrors = errorReports(StallReport{[2]uint64{o.ports[0].w.stalls, o.ports[1].w.stalls},
			[2]uint64{o.ports[0].w.retrain, o.ports[1].w.retrain}}, [2]LinkErrors{o.ports[0].linkErrors(), o.ports[1].linkErrors()})
		if o.hw >= 0 {
			// A card: its ports' TLPs from its lanes; its decisions are
			// in its own COUNT_* registers, not the model's.
			or.Card = true
			or.Manager = nil
			or.Kernels = nil // (the model's, which took nothing: the card's kernels are in its slots)
			or.PortTLPs = [2]uint64{cl.hw.x.PortTLPs(o.hw, 0), cl.hw.x.PortTLPs(o.hw, 1)}
			or.Stalls, or.LinkErrors = cl.cardErrors(o.hw)
		}
		rep.ONICs = append(rep.ONICs, or)
	}
	if cl.capture != nil {
		rep.Taps = cl.Taps()
	}
	a := &rep.Accounting
	a.Injected = cl.injected
	for _, r := range cl.recs {
		if r.outcome == InFlight {
			a.InFlight++
		}
	}
	a.Delivered, a.ErrorStatus, a.Denied = cl.counts[Delivered], cl.counts[ErrorStatus], cl.counts[Denied]
	a.Unsupported, a.Dropped = cl.counts[Unsupported], cl.counts[Dropped]
	if len(cl.why) > 0 {
		a.Reasons = cl.why
	}
	if sum := a.Delivered + a.ErrorStatus + a.Denied + a.Unsupported + a.Dropped + a.InFlight; sum != a.Injected {
		return rep, fmt.Errorf("accounting does not add up: %d requests injected, %d accounted for", a.Injected, sum)
	}
	cl.fid.report(&rep, d)
	rep.Speed = Speed{WallSeconds: wall, Events: cl.s.Events(), TLPs: cl.tlps}
	if wall > 0 {
		rep.Speed.TLPsPerSecond = float64(cl.tlps) / wall
		rep.Speed.SimulatedRatio = dur / wall
	}
	return rep, nil
}

func ns(t sim.Time) float64 { return float64(t) / float64(sim.Nanosecond) }

// WriteText prints the report as tables.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "scenario %s: %s simulated", r.Scenario, sim.Time(r.SimulatedS*float64(sim.Second)))
	if r.Reconfigurations > 0 {
		fmt.Fprintf(w, ", %d MEMS reconfiguration(s) stalling circuits for %s", r.Reconfigurations, sim.Time(r.StallS*float64(sim.Second)))
	}
	if r.Fidelity != "" {
		fmt.Fprintf(w, "\nfidelity %s: %.1f%% of the O-NICs' time carried at the transfer level, in %d steady stretch(es)",
			r.Fidelity, 100*r.TransferShare, r.TransferWindows)
		if r.TransferHeld != "" {
			fmt.Fprintf(w, " (%s)", r.TransferHeld)
		}
	}
	fmt.Fprintf(w, "\n\n")
	table := func(title string, fs []FlowReport) {
		fmt.Fprintf(w, "%-12s %-9s %9s %7s %10s %10s %10s %10s %10s\n", title, "op", "transfers", "failed", "Gb/s", "p50", "p99", "p99.9", "max")
		for _, f := range fs {
			fmt.Fprintf(w, "%-12s %-9s %9d %7d %10.2f %10s %10s %10s %10s\n", f.Name, f.Op, f.Transfers, f.Failed, f.Gbps,
				nsString(f.P50Ns), nsString(f.P99Ns), nsString(f.P999Ns), nsString(f.MaxNs))
		}
	}
	if len(r.Groups) > 0 {
		table("flow group", r.Groups)
		fmt.Fprintln(w)
	}
	if len(r.Flows) <= TextRows {
		table("flow", r.Flows)
	} else {
		fmt.Fprintf(w, "(%d flows: --json lists each)\n", len(r.Flows))
	}
	fmt.Fprintf(w, "\n%-12s %-6s %14s %10s %10s\n", "host", "kind", "received B", "Gb/s", "MSIs")
	for _, h := range r.Hosts {
		fmt.Fprintf(w, "%-12s %-6s %14d %10.2f %10d\n", h.Name, h.Kind, h.ReceivedBytes, h.ReceivedGbps, h.Interrupts)
	}
	for _, h := range r.Hosts {
		if h.WritesWithoutSoftware > 0 {
			fmt.Fprintf(w, "  host %s: %d device writes while no software was attached (dropped)\n", h.Name, h.WritesWithoutSoftware)
		}
		if h.OutsideMemory > 0 {
			fmt.Fprintf(w, "  host %s: %d device accesses outside its memory (unsupported requests: writes dropped, reads completed with UR)\n", h.Name, h.OutsideMemory)
		}
		if h.UnexpectedCompletions > 0 {
			fmt.Fprintf(w, "  host %s: %d reads from requester IDs its root complex routes nowhere (unexpected completions)\n", h.Name, h.UnexpectedCompletions)
		}
		if h.MasterAborts > 0 {
			fmt.Fprintf(w, "  host %s's software: %d accesses to addresses no device claimed (master aborts: all-ones, no O-NIC counted them)\n", h.Name, h.MasterAborts)
		}
	}
	if len(r.ONICs) > TextRows {
		fmt.Fprintf(w, "\n(%d O-NICs: --json lists each one's counters)\n", len(r.ONICs))
	} else {
		r.writeONICs(w)
	}
	a := r.Accounting
	fmt.Fprintf(w, "\naccounting: %d requests injected = %d delivered + %d completed with error + %d denied + %d unsupported + %d dropped + %d in flight\n",
		a.Injected, a.Delivered, a.ErrorStatus, a.Denied, a.Unsupported, a.Dropped, a.InFlight)
	if len(a.Reasons) > 0 {
		var ks []string
		for k := range a.Reasons {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		fmt.Fprintf(w, "  failure reasons:")
		for _, k := range ks {
			fmt.Fprintf(w, " %s %d", k, a.Reasons[k])
		}
		fmt.Fprintln(w)
	}
	if h := r.RTL; h != nil {
		fmt.Fprintf(w, "\nrtl: %s as generated cards, %d cycles; %d register writes delivered to the cards (refusals are in their COUNT_* registers), %d other writes taken but not seen landing\n",
			strings.Join(h.ONICs, ", "), h.Cycles, h.RegisterWrites, h.UnseenWrites)
		if h.Refused != "" {
			fmt.Fprintf(w, "rtl: refused first: %s\n", h.Refused)
		}
		if h.Error != "" {
			fmt.Fprintf(w, "rtl: stopped: %s\n", h.Error)
		}
	}
	s := r.Speed
	fmt.Fprintf(w, "\nspeed: %d TLPs and %d events in %.3f s wall: %.2f M TLPs/s, %.4g simulated s per wall s\n",
		s.TLPs, s.Events, s.WallSeconds, s.TLPsPerSecond/1e6, s.SimulatedRatio)
}

func nsString(v float64) string {
	return sim.Time(v * float64(sim.Nanosecond)).String()
}

// activeSeconds is how long the flow was active: from its start to the
// end of the run or, if it stops, to when the last transfer it issued
// finished (at least its stop time).
func (f *flowState) activeSeconds(d time.Duration) float64 {
	end := d
	if f.cfg.Stop != 0 && f.cfg.Stop < end {
		end = max(f.cfg.Stop, time.Duration(f.lastEnd/sim.Nanosecond))
		end = min(end, d)
	}
	if end <= f.cfg.Start {
		return float64(d) / float64(time.Second)
	}
	return float64(end-f.cfg.Start) / float64(time.Second)
}

// TextRows is the most flows or O-NICs the text report lists one by one;
// beyond it, the JSON report has them.
const TextRows = 16

// writeONICs prints the O-NIC counters table.
func (r *Report) writeONICs(w io.Writer) {
	fmt.Fprintf(w, "\n%-12s %10s %10s  %s\n", "O-NIC", "port A out", "port B out", "manager decisions")
	for _, o := range r.ONICs {
		var ks []string
		for k := range o.Manager {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		fmt.Fprintf(w, "%-12s %10d %10d ", o.Name, o.PortTLPs[0], o.PortTLPs[1])
		if o.Card {
			fmt.Fprint(w, " (its generated card: decisions in its COUNT_* registers)")
		}
		for _, k := range ks {
			fmt.Fprintf(w, " %s %d", k, o.Manager[k])
		}
		fmt.Fprintln(w)
	}
	for _, o := range r.ONICs {
		if p := o.Pipeline; p != nil {
			fmt.Fprintf(w, "  manager of %s (%d-bit data path at %g MHz) and its adapters held %d TLPs back: mean wait %.1f ns, longest %.1f ns; busy %.1f%% from the host, %.1f%% from port A, %.1f%% from port B\n",
				o.Name, p.DataWidth, p.ClockMHz, p.Waited, p.MeanWaitNs, p.MaxWaitNs, 100*p.Busy[0], 100*p.Busy[1], 100*p.Busy[2])
		}
	}
	for _, o := range r.ONICs {
		if st := o.Stalls; st != nil {
			fmt.Fprintf(w, "  %s's ports stopped making progress: port A stalled %d, link retrained %d; port B stalled %d, link retrained %d\n",
				o.Name, st.EgressStalls[0], st.Retrains[0], st.EgressStalls[1], st.Retrains[1])
		}
	}
	for _, o := range r.ONICs {
		if le := o.LinkErrors; le != nil {
			for p, e := range le {
				if e != (LinkErrors{}) {
					fmt.Fprintf(w, "  %s's port %c's data link layer: %d damaged TLPs received, %d Naks sent; %d replays, %d of them on timeouts, %d rollovers\n",
						o.Name, 'A'+p, e.CRCErrors, e.Naks, e.Replays, e.ReplayTimeouts, e.Rollovers)
				}
			}
		}
	}
	for _, o := range r.ONICs {
		for _, k := range o.Kernels {
			how := "opaque: configured timing"
			if k.Simulated {
				how = "timed by its cycle simulation"
			}
			what := "TLPs"
			if k.Inputs == 2 {
				what = "pairs of TLPs"
			}
			fmt.Fprintf(w, "  kernel %s in %s slot %d (%s): %d %s, %d B in, %d B out, %.1f Gb/s in, %.1f Gb/s out, pipeline %d cycles, mean latency %.1f ns, manager stalled %.1f ns",
				k.Name, o.Name, k.Slot, how, k.TLPs, what, k.BytesIn, k.BytesOut, k.GbpsIn, k.GbpsOut, k.LatencyCycles, k.MeanLatencyNs, k.StallNs)
			if k.Inputs == 2 {
				fmt.Fprintf(w, ", mean pair wait %.1f ns, pair buffer peak %d B", k.MeanPairWaitNs, k.PairPeakBytes)
			}
			if k.Tasks > 0 {
				fmt.Fprintf(w, ", %d tasks (mean %.1f ns doorbell to completion record, manager stalled %.1f ns per task, %d doorbells refused)",
					k.Tasks, k.MeanTaskNs, k.MeanTaskStallNs, k.TasksRefused)
			}
			for _, d := range slices.Sorted(maps.Keys(k.Dropped)) {
				fmt.Fprintf(w, ", dropped %s %d", d, k.Dropped[d])
			}
			fmt.Fprintln(w)
		}
		for _, d := range o.Deploys {
			if d.Outcome != "loaded" {
				fmt.Fprintf(w, "  deploy %s at %s: refused: %s\n", d.File, nsString(d.AtNs), d.Error)
				continue
			}
			where := "whole O-NIC"
			if d.Kind == "partial" {
				where = fmt.Sprintf("slot %d", d.Slot)
			}
			fmt.Fprintf(w, "  deploy %s at %s: %s signed by %s, %s reflash of the %s, %d B, out %s; %d TLPs held, %d failed\n",
				d.File, nsString(d.AtNs), d.Image, d.Signer, d.Kind, where, d.Bytes, nsString(d.ReflashNs), d.Held, d.Failed)
			for _, g := range d.Downgrade {
				fmt.Fprintf(w, "    downgrade allowed by the operator: %s\n", g)
			}
		}
		for _, r := range o.Replays {
			fmt.Fprintf(w, "  replayed %s plan (%d tasks) from %s: %d of %d loads taken, %d refused; reflash %s (planned %s); last load ready %s after the plan\n",
				r.Policy, r.Tasks, nsString(r.AtNs), r.Loaded, r.Loads, r.Refused, nsString(r.ReflashNs), nsString(r.PlanReflashNs), nsString(r.LateNs))
		}
		if o.ReflashNs > 0 || len(o.SlotReflashNs) > 0 {
			fmt.Fprintf(w, "  %s reflashing: whole O-NIC %s", o.Name, nsString(o.ReflashNs))
			for n, t := range o.SlotReflashNs {
				if t > 0 {
					fmt.Fprintf(w, ", slot %d %s", n, nsString(t))
				}
			}
			fmt.Fprintln(w)
		}
	}
}
