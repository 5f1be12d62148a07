package manager

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"onic/designs/internal/tlpstim"
	"onic/emu/scenario"
	"onic/hdlgen/sim"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// portConfig is the two-party scenario's onicA with a ring domain that
// may arrive on either port, a relayed range from port A and a range
// from port B steered into kernel slot 1.
func portConfig() pmgr.Config {
	c := scenario.TwoParty().ONICs[0].Manager
	c.Access.Domains = append(c.Access.Domains, acl.DomainConfig{
		Name: "ring", Requesters: []string{"30:00.0-30:00.7"}, Ingress: []string{"port-a", "port-b"},
		Egress: []string{"host", "port-b", "kernel:1"}, // relays from port A go out of port B
		Ranges: []acl.RangeConfig{{Base: 0x100000000, Size: 0x400000, Read: true, Write: true}},
	})
	c.Relay = []pmgr.RelayConfig{{From: "port-a", Base: 0x100000000, Size: 0x100000}}
	c.KernelIn = []pmgr.KernelInConfig{{From: "port-b", Base: 0x100200000, Size: 0x100000, Slot: 1}}
	return c
}

// portTLP is a random TLP as a port would deliver it
// (tlpstim.PortTLP): by the peer domain (20:00.x), the ring domain
// (30:00.x) or a stranger (40:00.0).
func portTLP(r *rand.Rand, i int) tlp.TLP {
	reqs := []tlp.ID{tlp.NewID(0x20, 0, uint8(r.IntN(8))), tlp.NewID(0x30, 0, uint8(r.IntN(8))), tlp.NewID(0x40, 0, 0)}
	return tlpstim.PortTLP(r, i, reqs, tlp.NewID(0x20, 0, 0))
}

func raw(t testing.TB, x *tlp.TLP) []byte {
	b, err := x.MarshalBinary()
	if err != nil {
		t.Fatalf("%v: %v", x, err)
	}
	return b
}

// TestPortInAgainstModel: random TLPs arriving on both ports at once,
// under backpressure on every output, leave the port-ingress pipeline
// exactly as pcie/manager decides them for FromPortA and FromPortB: the
// same TLPs on the same outputs with the same headers (local requester
// back on completions, slot offsets on steered writes), relay copies out
// of the other port, UR/CA completions back out of the ingress port, and
// the same counts by reason and by denial rule — with the host's Bus
// Master Enable set, and clear (no request goes to the host).
func TestPortInAgainstModel(t *testing.T) {
	for _, bme := range []bool{true, false} {
		t.Run(fmt.Sprintf("bus-master-%v", bme), func(t *testing.T) { portInAgainstModel(t, bme) })
	}
}

func portInAgainstModel(t *testing.T, busMaster bool) {
	cfg := portConfig()
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	f.Space.Write(0x04, 2, 0x0006) // memory space and bus master enabled, as enumeration leaves them
	pi, err := BuildPortIn(Config{Manager: cfg, BARs: f.MemorySizes()})
	if err != nil {
		t.Fatal(err)
	}
	self := tlp.NewID(0x42, 0, 0)
	model, err := pmgr.New(cfg, f, self)
	if err != nil {
		t.Fatal(err)
	}
	model.BusMasterOff = !busMaster
	r := rand.New(rand.NewPCG(21, 22))
	const n = 600
	type pending struct {
		x  tlp.TLP
		in pmgr.Ingress
	}
	var queues [2][]pending
	want := map[string][]string{}
	origin := map[string]pending{} // an expected TLP's input (the tags make them unique)
	record := func(name string, v string, p pending) {
		want[name] = append(want[name], v)
		origin[v] = p
	}
	for i := range n {
		x := portTLP(r, i)
		for x.Kind().Class() == tlp.ClassCompletion && x.Status == tlp.StatusSC && !x.Kind().HasData() {
			x = portTLP(r, i) // the port's tag table drops these before the pipeline (PortTagsModule)
		}
		in := pmgr.Ingress(1 + r.IntN(2))
		queues[in-1] = append(queues[in-1], pending{x, in})
		var o pmgr.Outcome
		xm := x
		if x.Kind().Class() == tlp.ClassCompletion {
			// The pipeline sees a completion after the port's tag table
			// matched it to a request that left by that port and gave it
			// its own tag back: the model is told of such a request, and
			// sees the completion as it arrived, with the port's tag.
			y := tlp.TLP{RequesterID: x.RequesterID, Tag: x.Tag, Length: 1, FirstBE: 0xF}
			y.Fmt, y.Type, _ = tlp.FmtType(tlp.MRd, false, 0)
			if !model.Issue(&y, int(in)-1) {
				t.Fatalf("TLP %d: the model's port tags ran out", i)
			}
			xm.Tag = y.Tag
		}
		model.Process(&xm, in, &o)
		port := map[pmgr.Ingress]string{pmgr.FromPortA: "m_port_a", pmgr.FromPortB: "m_port_b"}
		other := map[pmgr.Ingress]string{pmgr.FromPortA: "m_port_b", pmgr.FromPortB: "m_port_a"}
		switch o.Action {
		case pmgr.Forward:
			u := x
			switch {
			case x.Kind().Class() == tlp.ClassCompletion:
				o.Apply(&u)
			case o.Egress.Kind == ntb.EgressKernel:
				u.Address = o.Address
				u.Fmt, u.Type, _ = tlp.FmtType(x.Kind(), o.Address >= 1<<32, 0)
			}
			name := map[ntb.EgressKind]string{ntb.EgressHost: "m_host", ntb.EgressKernel: "m_kernel", ntb.EgressLocal: "m_local"}[o.Egress.Kind]
			if name == "" {
				t.Fatalf("TLP %d: the model sends it to %v", i, o.Egress)
			}
			if name == "m_kernel" {
				name = fmt.Sprintf("m_kernel%d", o.Egress.Slot)
			}
			record(name, fmt.Sprintf("%x", raw(t, &u)), pending{x, in})
			if o.Second.Kind != ntb.EgressNone {
				record(other[in], fmt.Sprintf("%x", raw(t, &x)), pending{x, in})
			}
		case pmgr.Complete:
			c := pcie.Completion(&x, self, o.Status, nil)
			record(port[in], fmt.Sprintf("%x", raw(t, &c)), pending{x, in})
		}
	}

	s, err := sim.New(pi.Module)
	if err != nil {
		t.Fatal(err)
	}
	drive := func(name string, v ...uint64) {
		if err := s.Drive(name, v); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) []uint64 {
		v, err := s.GetWords(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	drive("self_id", uint64(self))
	drive("bus_master", b2u(busMaster))
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	var beats [2][]beatIn
	for k, q := range queues {
		for _, p := range q {
			beats[k] = append(beats[k], tlpBeats(t, &p.x)...)
		}
	}
	outs := []string{"m_host", "m_kernel", "m_local", "m_port_a", "m_port_b"}
	got := map[string][]string{}
	cur := map[string][]byte{}
	next := [2]int{}
	for cyc := 0; cyc < 40*(len(beats[0])+len(beats[1]))+100; cyc++ {
		offered := [2]bool{}
		for k, name := range []string{"s_port_a_tlp_", "s_port_b_tlp_"} {
			offered[k] = next[k] < len(beats[k]) && r.IntN(4) != 0
			drive(name+"valid", b2u(offered[k]))
			if offered[k] {
				b := beats[k][next[k]]
				drive(name+"hdr", b.Hdr...)
				drive(name+"data", b.Data...)
				drive(name+"keep", b.Keep)
				drive(name+"sop", b2u(b.SOP))
				drive(name+"eop", b2u(b.EOP))
			}
		}
		ready := map[string]bool{}
		for _, o := range outs {
			ready[o] = r.IntN(3) != 0
			drive(o+"_tlp_ready", b2u(ready[o]))
		}
		s.Settle()
		for k, name := range []string{"s_port_a_tlp_", "s_port_b_tlp_"} {
			if offered[k] && get(name + "ready")[0] == 1 {
				next[k]++
			}
		}
		for _, o := range outs {
			if !ready[o] || get(o + "_tlp_valid")[0] != 1 {
				continue
			}
			key := o
			if o == "m_kernel" {
				key = fmt.Sprintf("m_kernel%d", get("m_kernel_slot")[0])
			}
			if get(o + "_tlp_sop")[0] == 1 {
				hw := get(o + "_tlp_hdr")
				var hb [16]byte
				binary.BigEndian.PutUint64(hb[:], hw[1])
				binary.BigEndian.PutUint64(hb[8:], hw[0])
				cur[key] = append([]byte(nil), hb[:tlp.Header(hb[:]).HeaderLen()]...)
			}
			keep, d := get(o + "_tlp_keep")[0], get(o+"_tlp_data")
			for w := range 16 {
				if keep>>w&1 == 1 {
					cur[key] = binary.LittleEndian.AppendUint32(cur[key], uint32(d[w/2]>>(32*(w%2))))
				}
			}
			if get(o + "_tlp_eop")[0] == 1 {
				got[key] = append(got[key], fmt.Sprintf("%x", cur[key]))
				cur[key] = nil
			}
		}
		s.Step()
	}
	if next[0] != len(beats[0]) || next[1] != len(beats[1]) {
		t.Fatalf("took %d and %d of %d and %d beats", next[0], next[1], len(beats[0]), len(beats[1]))
	}
	// The ports' TLPs interleave in an order the test does not know, but
	// each output keeps each port's order and the outcomes do not depend
	// on the interleaving: compare each output's TLPs as sets of counts
	// and in order per originating tag's port.
	total := 0
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Errorf("%s: %d TLPs, the model %d", name, len(g), len(w))
			continue
		}
		count := map[string]int{}
		for _, x := range w {
			count[x]++
		}
		for _, x := range g {
			count[x]--
		}
		for x, c := range count {
			if c != 0 {
				t.Errorf("%s: %s %+d times against the model", name, x, -c)
			}
		}
		// Each port's TLPs keep their order (tags count up per run).
		last := map[pmgr.Ingress]int{}
		for _, x := range g {
			p, ok := origin[x]
			if !ok {
				continue
			}
			if tag := int(p.x.Tag); tag < last[p.in] {
				t.Errorf("%s: TLP with tag %d from %v after tag %d", name, tag, p.in, last[p.in])
			} else {
				last[p.in] = tag
			}
		}
		total += len(w)
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %d TLPs the model does not send", name, len(got[name]))
		}
	}
	var counts []string
	for _, rs := range pi.Reasons {
		name := "count_" + strings.ReplaceAll(rs.String(), "-", "_") + "_total"
		if g, w := get(name)[0], model.Count(rs); g != w {
			t.Errorf("%s: %d, the model %d", name, g, w)
		}
		counts = append(counts, fmt.Sprintf("%s %d", rs, model.Count(rs)))
	}
	for rule := acl.Rule(1); rule < acl.NumRules; rule++ {
		name := "deny_" + strings.ReplaceAll(rule.String(), "-", "_") + "_total"
		if g, w := get(name)[0], model.Denials(rule); g != w {
			t.Errorf("%s: %d, the model %d", name, g, w)
		}
	}
	t.Logf("%d TLPs out of %d in; counts: %s", total, n, strings.Join(counts, ", "))
	musts := []string{"m_kernel1", "m_local", "m_port_a", "m_port_b"}
	if busMaster {
		musts = append(musts, "m_host")
	}
	for _, must := range musts {
		if len(want[must]) == 0 {
			t.Errorf("nothing went to %s: the stimulus misses a path", must)
		}
	}
	reasons := []pmgr.Reason{pmgr.Malformed, pmgr.Unsupported}
	if !busMaster {
		reasons = append(reasons, pmgr.BusMasterDisabled)
	}
	for _, r := range reasons {
		if model.Count(r) == 0 {
			t.Errorf("no TLP was %s: the stimulus misses it", r)
		}
	}
}

func TestPortInLint(t *testing.T) {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	f.Space.Write(0x04, 2, 0x0006) // memory space and bus master enabled, as enumeration leaves them
	pi, err := BuildPortIn(Config{Manager: portConfig(), BARs: f.MemorySizes()})
	if err != nil {
		t.Fatal(err)
	}
	verilator.Lint(t, pi.Module)
}

// beatIn is one beat of a TLP in the manager's stream format.
type beatIn = tlpstim.Beat

// tlpBeats splits x into the manager's stream beats (512-bit data).
func tlpBeats(t testing.TB, x *tlp.TLP) []beatIn {
	bs, err := tlpstim.Beats(x)
	if err != nil {
		t.Fatalf("%v: %v", x, err)
	}
	return bs
}

// TestRemoteCompletions: peers' reads, from both ports, pass the model's
// tag table on their way to the host; the host's completions for them,
// routed to the O-NIC by its own ID, reach the manager as the card's tag
// table hands them on — requester ID and tag put back, the port the read
// came from on the BAR sideband — and leave by that port as pcie/manager
// routes them. Completions the tag table found no request for (sideband
// 0), or with a sideband naming no port, are dropped as unexpected.
func TestRemoteCompletions(t *testing.T) {
	cfg := portConfig()
	cfg.Relay, cfg.KernelIn = nil, nil // the host pipeline does not take them
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	f.Space.Write(0x04, 2, 0x0006) // memory space and bus master enabled, as enumeration leaves them
	d, err := Build(Config{Manager: cfg, BARs: f.MemorySizes()})
	if err != nil {
		t.Fatal(err)
	}
	self := tlp.NewID(0x42, 0, 0)
	model, err := pmgr.New(cfg, f, self)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := sim.New(d.Module)
	if err != nil {
		t.Fatal(err)
	}
	if err := ms.Drive("self_id", []uint64{uint64(self)}); err != nil {
		t.Fatal(err)
	}

	ms.SetReset(true)
	ms.Step()
	ms.SetReset(false)
	r := rand.New(rand.NewPCG(31, 32))
	// The peers' reads, through the model: each gets a tag of the O-NIC's.
	type read struct {
		req  tlp.TLP // as the host gets it
		port uint64  // 1 A, 2 B
	}
	var reads []read
	for i := range 40 {
		in := pmgr.Ingress(1 + r.IntN(2))
		req := tlp.NewID(0x30, 0, uint8(r.IntN(8)))
		f, typ, _ := tlp.FmtType(tlp.MRd, true, 0)
		x := tlp.TLP{Fmt: f, Type: typ, Length: 4, FirstBE: 0xF, LastBE: 0xF, Tag: uint16(i % 4), RequesterID: req,
			Address: 0x100000000 + uint64(r.IntN(0x1000))&^3}
		var o pmgr.Outcome
		model.Process(&x, in, &o)
		if o.Action != pmgr.Forward || o.Egress.Kind != ntb.EgressHost || o.Requester != self {
			t.Fatalf("read %d: %+v", i, o)
		}
		o.Apply(&x)
		reads = append(reads, read{x, uint64(in)})
	}
	// The host's completions, in a random order, and strangers.
	r.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
	type hostBeat struct {
		b   beatIn
		bar uint64
	}
	want := map[string][]string{}
	var hostBeats []hostBeat
	for i, rd := range reads {
		f, typ, _ := tlp.FmtType(tlp.CplD, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, Length: 4, Tag: rd.req.Tag, RequesterID: self, CompleterID: tlp.NewID(0, 0, 0), ByteCount: 16,
			Data: make([]byte, 16)}
		var o pmgr.Outcome
		model.Process(&x, pmgr.FromHost, &o)
		name := map[ntb.EgressKind]string{ntb.EgressPortA: "m_port_a", ntb.EgressPortB: "m_port_b"}[o.Egress.Kind]
		if o.Action != pmgr.Forward || name == "" || o.Egress.Kind != [3]ntb.EgressKind{0, ntb.EgressPortA, ntb.EgressPortB}[rd.port] {
			t.Fatalf("completion %d: %+v", i, o)
		}
		o.Apply(&x) // as the card's tag table hands it to the manager
		want[name] = append(want[name], fmt.Sprintf("%x", raw(t, &x)))
		for _, b := range tlpBeats(t, &x) {
			hostBeats = append(hostBeats, hostBeat{b, rd.port})
		}
		if i%8 == 0 {
			// One the tag table holds nothing for, and one whose sideband
			// names no port.
			model.Process(&x, pmgr.FromHost, &o)
			if o.Action != pmgr.Drop || o.Reason != pmgr.UnexpectedCompletion {
				t.Fatalf("completion %d again: %+v", i, o)
			}
			for _, bar := range []uint64{0, 3} {
				for _, b := range tlpBeats(t, &x) {
					hostBeats = append(hostBeats, hostBeat{b, bar})
				}
			}
		}
	}
	drive := func(name string, v ...uint64) {
		if err := ms.Drive(name, v); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) []uint64 {
		v, err := ms.GetWords(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got := map[string][]string{}
	hi := 0
	for cyc := 0; cyc < 3000; cyc++ {
		hostOn := cyc > 20 && hi < len(hostBeats) && r.IntN(3) != 0
		drive("s_host_tlp_valid", b2u(hostOn))
		if hostOn {
			b := hostBeats[hi].b
			drive("s_host_tlp_hdr", b.Hdr...)
			drive("s_host_tlp_data", b.Data...)
			drive("s_host_tlp_keep", b.Keep)
			drive("s_host_tlp_sop", b2u(b.SOP))
			drive("s_host_tlp_eop", b2u(b.EOP))
			drive("s_host_tlp_bar", hostBeats[hi].bar)
		}
		for _, o := range []string{"m_port_a", "m_port_b", "m_kernel", "m_local", "m_cpl"} {
			drive(o+"_tlp_ready", 1)
		}
		ms.Settle()
		if hostOn && get("s_host_tlp_ready")[0] == 1 {
			hi++
		}
		for _, o := range []string{"m_port_a", "m_port_b", "m_local"} {
			if get(o + "_tlp_valid")[0] == 1 && get(o + "_tlp_sop")[0] == 1 {
				hw := get(o + "_tlp_hdr")
				var hb [16]byte
				binary.BigEndian.PutUint64(hb[:], hw[1])
				binary.BigEndian.PutUint64(hb[8:], hw[0])
				b := append([]byte(nil), hb[:12]...)
				dw := get(o + "_tlp_data")
				for w := range 4 {
					b = binary.LittleEndian.AppendUint32(b, uint32(dw[w/2]>>(32*(w%2))))
				}
				got[o] = append(got[o], fmt.Sprintf("%x", b))
			}
		}
		ms.Step()
	}
	if hi != len(hostBeats) {
		t.Fatalf("the manager took %d of %d completions", hi, len(hostBeats))
	}
	for _, o := range []string{"m_port_a", "m_port_b", "m_local"} {
		if fmt.Sprint(got[o]) != fmt.Sprint(want[o]) {
			t.Errorf("%s: %d completions, the model %d:\n got  %v\n want %v", o, len(got[o]), len(want[o]), got[o], want[o])
		}
	}
	if len(want["m_port_a"]) == 0 || len(want["m_port_b"]) == 0 {
		t.Fatal("the stimulus sends no completion back to a port")
	}
	t.Logf("%d to port A, %d to port B; %d unexpected left by no output", len(want["m_port_a"]), len(want["m_port_b"]), 2*((len(reads)+7)/8))
}

// TestPortInRuleSlots: a run-time access rule software writes through the
// manager's AXI-Lite registers (here: 16 more pages for the peer domain)
// reaches the port pipeline through acl_slot<i>_*, so writes from port A
// into those pages are passed to the host and writes beyond them denied,
// as pcie/manager decides with the same rule set.
func TestPortInRuleSlots(t *testing.T) {
	cfg := scenario.HostInterface().ONICs[0].Manager
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	f.Space.Write(0x04, 2, 0x0006) // memory space and bus master enabled, as enumeration leaves them
	d, err := Build(Config{Manager: cfg, BARs: f.MemorySizes()})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := BuildPortIn(Config{Manager: cfg, BARs: f.MemorySizes()})
	if err != nil {
		t.Fatal(err)
	}
	if pi.RuleSlots == 0 {
		t.Fatal("the host-interface O-NIC has no rule slots")
	}
	self := tlp.NewID(0x42, 0, 0)
	model, err := pmgr.New(cfg, f, self)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := sim.New(d.Module)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := sim.New(pi.Module)
	if err != nil {
		t.Fatal(err)
	}
	drive := func(s *sim.Sim, name string, v ...uint64) {
		if err := s.Drive(name, v); err != nil {
			t.Fatal(err)
		}
	}
	get := func(s *sim.Sim, name string) []uint64 {
		v, err := s.GetWords(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var slotPorts []string
	for _, p := range d.Module.Ports() {
		if p.Output && strings.HasPrefix(p.Name, "acl_slot") {
			slotPorts = append(slotPorts, p.Name)
		}
	}
	if len(slotPorts) != 6*pi.RuleSlots {
		t.Fatalf("the manager outputs %d rule slot signals for %d slots", len(slotPorts), pi.RuleSlots)
	}
	// One cycle of both, the manager's rule slots feeding the port pipeline.
	cycle := func() {
		ms.Settle()
		for _, n := range slotPorts {
			drive(ps, n, get(ms, n)...)
		}
		ps.Settle()
	}
	drive(ps, "bus_master", 1)
	for _, s := range []*sim.Sim{ms, ps} {
		drive(s, "self_id", uint64(self))
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
	}
	for _, o := range []string{"m_host", "m_kernel", "m_local", "m_port_a", "m_port_b"} {
		drive(ps, o+"_tlp_ready", 1)
	}
	for range 600 { // the manager's LUT fill, if any
		cycle()
		ms.Step()
		ps.Step()
	}
	write := func(addr, data uint32) {
		drive(ms, "s_axil_awaddr", uint64(addr))
		drive(ms, "s_axil_wdata", uint64(data))
		drive(ms, "s_axil_wstrb", 0xF)
		drive(ms, "s_axil_awvalid", 1)
		drive(ms, "s_axil_wvalid", 1)
		drive(ms, "s_axil_bready", 1)
		for k := 0; ; k++ {
			cycle()
			done := get(ms, "s_axil_awready")[0] == 1
			ms.Step()
			ps.Step()
			if done {
				break
			}
			if k > 20 {
				t.Fatalf("register write to %#x not taken", addr)
			}
		}
		drive(ms, "s_axil_awvalid", 0)
		drive(ms, "s_axil_wvalid", 0)
	}
	peer := -1
	a, err := acl.Build(cfg.Access, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, dom := range a.Domains() {
		if dom.Name == "peer" {
			peer = i
		}
	}
	rs := acl.RuleSlot{Enabled: true, Read: true, Write: true, Domain: uint16(peer), Base: 0x100100000, Pages: 16}
	if err := model.Access().SetRuleSlot(0, rs); err != nil {
		t.Fatal(err)
	}
	write(pmgr.RegACLIndex, 0)
	write(pmgr.RegACLBaseLo, uint32(rs.Base))
	write(pmgr.RegACLBaseHi, uint32(rs.Base>>32))
	write(pmgr.RegACLPages, rs.Pages)
	write(pmgr.RegACLCtrl, 1|1<<1|1<<2|uint32(peer)<<16)
	write(pmgr.RegACLCommit, 0)

	// Writes from the peer on port A: in the static range, in the rule's
	// pages, and past them.
	var want, got []string
	addrs := []uint64{0x100000100, 0x100100000, 0x10010f000, 0x100110000, 0x100200000}
	for i, addr := range addrs {
		fm, typ, _ := tlp.FmtType(tlp.MWr, true, 0)
		x := tlp.TLP{Fmt: fm, Type: typ, Length: 1, FirstBE: 0xF, Tag: uint16(i), RequesterID: tlp.NewID(0x20, 0, 1), Address: addr, Data: make([]byte, 4)}
		var o pmgr.Outcome
		model.Process(&x, pmgr.FromPortA, &o)
		if o.Action == pmgr.Forward {
			want = append(want, fmt.Sprintf("%x", raw(t, &x)))
		}
		b := tlpBeats(t, &x)[0]
		drive(ps, "s_port_a_tlp_hdr", b.Hdr...)
		drive(ps, "s_port_a_tlp_data", b.Data...)
		drive(ps, "s_port_a_tlp_keep", b.Keep)
		drive(ps, "s_port_a_tlp_sop", 1)
		drive(ps, "s_port_a_tlp_eop", 1)
		drive(ps, "s_port_a_tlp_valid", 1)
		for k := 0; ; k++ {
			cycle()
			taken := get(ps, "s_port_a_tlp_ready")[0] == 1
			ms.Step()
			ps.Step()
			if taken {
				break
			}
			if k > 20 {
				t.Fatal("the port pipeline does not take the write")
			}
		}
		drive(ps, "s_port_a_tlp_valid", 0)
	}
	for range 30 {
		cycle()
		if get(ps, "m_host_tlp_valid")[0] == 1 {
			hw := get(ps, "m_host_tlp_hdr")
			var hb [16]byte
			binary.BigEndian.PutUint64(hb[:], hw[1])
			binary.BigEndian.PutUint64(hb[8:], hw[0])
			b := append([]byte(nil), hb[:16]...)
			b = binary.LittleEndian.AppendUint32(b, uint32(get(ps, "m_host_tlp_data")[0]))
			got = append(got, fmt.Sprintf("%x", b))
		}
		ms.Step()
		ps.Step()
	}
	if len(want) != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("to the host:\n got  %v\n want %v (the model passes %d of %d)", got, want, len(want), len(addrs))
	}
	if g, w := get(ps, "deny_no_range_total")[0], model.Denials(acl.NoRange); g != w || w != 2 {
		t.Fatalf("no-range denials: %d, the model %d", g, w)
	}
}
