package cluster

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"onic/desc"
	"onic/emu/link"
	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/pcie"
	"onic/pcie/manager"
	"onic/tlp"
)

const (
	// FibreNsPerMetre is light's flight time in fibre (shared/REFERENCE.md).
	FibreNsPerMetre = 4.9
	// hostLinkPropagation is the flight time on a host's PCIe link (board
	// traces and a riser, a few tens of centimetres).
	hostLinkPropagation = 2 * sim.Nanosecond
)

// Durations past MaxTime saturate at sim.Forever.
func ps(d time.Duration) sim.Time {
	if d >= scenario.MaxTime {
		return sim.Forever
	}
	return sim.Time(d.Nanoseconds()) * sim.Nanosecond
}

// Build checks c and wires the cluster. Errors name the field path.
//
// Long: it checks and wires a scenario's parts in the order they depend
// on each other (hosts, O-NICs, circuits, flows, phases), each step a
// few lines.
func Build(c scenario.Config) (*Cluster, error) {
	if c.Duration <= 0 {
		return nil, fmt.Errorf("duration: %v must be positive", c.Duration)
	}
	if c.Duration > scenario.MaxTime {
		return nil, fmt.Errorf("duration: %v is past the end of simulated time (%v)", c.Duration, scenario.MaxTime)
	}
	if len(c.Hosts) == 0 {
		return nil, fmt.Errorf("hosts: a cluster needs at least one host")
	}
	for _, n := range []struct {
		field    string
		got, max int
	}{{"hosts", len(c.Hosts), scenario.MaxHosts}, {"onics", len(c.ONICs), scenario.MaxONICs}, {"flows", len(c.Flows), scenario.MaxFlows}, {"phases", len(c.Phases), scenario.MaxPhases}} {
		if n.got > n.max {
			return nil, fmt.Errorf("%s: %d of them, more than the %d allowed", n.field, n.got, n.max)
		}
	}
	cl := &Cluster{s: sim.New(4096), cfg: c, why: map[string]uint64{}}
	hosts := map[string]*hostNode{}
	addrs := map[netip.Addr]string{}
	for i, hc := range c.Hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		hc.Defaults()
		if hc.Name == "" {
			return nil, fmt.Errorf("%s.name: every host needs a name", p)
		}
		if _, dup := hosts[hc.Name]; dup {
			return nil, fmt.Errorf("%s.name: %q is already a host", p, hc.Name)
		}
		if err := hc.Check(p); err != nil {
			return nil, err
		}
		as, _ := hc.Addresses()
		for _, a := range as {
			if o, dup := addrs[a.Addr()]; dup {
				field := "ipv4"
				if a.Addr().Is6() {
					field = "ipv6"
				}
				return nil, fmt.Errorf("%s.%s: %s is host %s's address already", p, field, a.Addr(), o)
			}
			addrs[a.Addr()] = hc.Name
		}
		h := &hostNode{c: cl, cfg: hc, idx: i, id: tlp.NewID(0, 0, 0)}
		h.tags.h = h
		if mk := deviceKinds[hc.Kind]; mk != nil {
			h.dev = mk(h)
		}
		hosts[hc.Name] = h
		cl.hosts = append(cl.hosts, h)
	}
	onics := map[string]*onicNode{}
	for i, oc := range c.ONICs {
		p := fmt.Sprintf("onics[%d]", i)
		oc.Defaults()
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
		d, err := desc.FromScenario(oc, p)
		if err != nil {
			return nil, err
		}
		o := &onicNode{c: cl, cfg: oc, d: d, host: h, idx: i, hw: -1}
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
	pl, err := planSwitches(c)
	if err != nil {
		return nil, err
	}
	cl.switches, cl.trunks = pl.switches, pl.trunks
	for _, o := range cl.onics {
		o.sw = pl.onic[o.cfg.Name]
	}
	cl.cfg.MEMS = c.MEMS
	cl.bucket = max(ps(cl.cfg.Duration)/TraceBuckets, 1)
	fid, err := newFidelity(c.Fidelity)
	if err != nil {
		return nil, err
	}
	cl.fid = fid
	for _, o := range cl.onics {
		for i := range o.ports {
			// Dark until a circuit lights it: the manager knows.
			o.ports[i] = &port{o: o, idx: i, states: []portChange{{0, portDown, ""}}, wire: make([]uint64, TraceBuckets+1)}
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
	// (The faults first: a circuit's link takes its ends' errors as it
	// lights.)
	if err := cl.faults(c.Faults, onics); err != nil {
		return nil, err
	}
	for _, pr := range initial {
		pr[0].circuit, pr[1].circuit = pr[1], pr[0]
		cl.light(pr)
	}
	last := time.Duration(0)
	for i, ph := range c.Phases {
		p := fmt.Sprintf("phases[%d]", i)
		if ph.At <= last {
			return nil, fmt.Errorf("%s.at: %v must be after the previous phase (%v)", p, ph.At, last)
		}
		if ph.At > scenario.MaxTime {
			return nil, fmt.Errorf("%s.at: %v is past the end of simulated time (%v)", p, ph.At, scenario.MaxTime)
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
		if fc.Depth < 1 || fc.Depth > scenario.MaxDepth {
			return nil, fmt.Errorf("%s.depth: %d must be 1 to %d", p, fc.Depth, scenario.MaxDepth)
		}
		if fc.Transfers < 0 || fc.Start < 0 || fc.Stop < 0 || fc.Stop != 0 && fc.Stop <= fc.Start || fc.Start > scenario.MaxTime || fc.Stop > scenario.MaxTime {
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
		if fc.RateGbps != 0 && !(fc.RateGbps >= scenario.MinRateGbps && fc.RateGbps <= scenario.MaxRateGbps) {
			return nil, fmt.Errorf("%s.rate_gbps: %g must be %g to %g (or left out: unpaced)", p, fc.RateGbps, scenario.MinRateGbps, scenario.MaxRateGbps)
		}
		if fc.Forward && fc.Op != "write" {
			return nil, fmt.Errorf("%s.forward: only a write flow can send on what its host receives", p)
		}
		if fc.Op == "task" {
			if err := o.taskFlow(fc.Task, p+".task"); err != nil {
				return nil, err
			}
		}
		fs := &flowState{c: cl, idx: i, cfg: fc, host: h, onic: o, base: o.fn.BARAddress(2) + fc.Offset, delivered: make([]uint64, TraceBuckets+1)}
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
func (cl *Cluster) circuits(cs []scenario.CircuitConfig, path string, onics map[string]*onicNode) ([][2]*port, error) {
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
		if a, b := ends[0].o.d.Lanes, ends[1].o.d.Lanes; a != b {
			return nil, fmt.Errorf("%s: %s's lane plan %v and %s's %v differ: the ports could never train (lane_plan)",
				p, ends[0].o.cfg.Name, a, ends[1].o.cfg.Name, b)
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
			o.seg = len(h.hiers) - 1
			n := hier.Find(o.cfg.Name)
			// System software sets the sizes the host's configuration
			// gives into the O-NIC's and its root port's Device Control
			// and Link Control (PCIe Base §7.5.3.4, §7.5.3.7): what
			// configuration space says is what the links and the root
			// complex do.
			sz := pcie.DeviceSizes{MPS: h.cfg.MPS, MRRS: h.cfg.MRRS, RCB: h.cfg.RCB}
			for _, f := range []*pcie.Function{n.Parent.Funcs[0], n.Funcs[0]} {
				if err := f.SetSizes(sz); err != nil {
					return fmt.Errorf("hosts %q: %v", h.cfg.Name, err)
				}
			}
			if err := buildONIC(cl, h, o, n); err != nil {
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
	o.pl.set(o.d.PipelineCycles, o.d.ClockMHz, o.d.DataWidth)
	o.resetRegs()
	o.resetMSIX()
	for _, k := range o.d.Kernels {
		if err := o.loadKernel(k); err != nil {
			return err
		}
	}
	sz, _ := o.fn.Sizes() // (SetSizes found its PCI Express capability)
	o.link, err = link.New(cl.s, link.Config{Gen: tlp.Gen(h.cfg.Gen), Lanes: h.cfg.Lanes, MPS: sz.MPS,
		Propagation: hostLinkPropagation}, hostEnd{h, o}, onicEnd{o, manager.FromHost})
	if err != nil {
		return fmt.Errorf("hosts %q: %v", h.cfg.Name, err)
	}
	return nil
}
