package card

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"onic/designs/internal/optlink"
	"onic/designs/internal/tlpstim"
	"onic/designs/manager"
	"onic/emu/scenario"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/pcie/pg213"
	"onic/testbenches/replay"
	"onic/testbenches/tools"
	"onic/tlp"
)

// ingressConfig is the two-party scenario's onicA with every path of the
// card in use: a second window, into port B; the host's domain reaching
// out of both ports and into the register BAR's first 64 KiB; and a ring
// domain (30:00.x, from either port, to the host, out of port B and into
// kernel slot 1) with writes from port A relayed out of port B and writes
// from port B steered into slot 1.
func ingressConfig() pmgr.Config {
	c := scenario.TwoParty().ONICs[0].Manager
	c.Translation.Windows = append(c.Translation.Windows,
		ntb.WindowConfig{Name: "b-side", BAR: 2, Offset: 0x40000000, Size: 0x40000000, Egress: "port-b", Translated: 0x200000000})
	h := &c.Access.Domains[0]
	h.Egress = append(append([]string(nil), h.Egress...), "port-b", "local")
	h.Ranges = append(append([]acl.RangeConfig(nil), h.Ranges...),
		acl.RangeConfig{Base: 0x200000000, Size: 0x40000000, Read: true, Write: true},
		acl.RangeConfig{Base: 0, Size: 0x10000, Read: true, Write: true})
	c.Access.Domains = append(append([]acl.DomainConfig(nil), c.Access.Domains...), acl.DomainConfig{
		Name: "ring", Requesters: []string{"30:00.0-30:00.7"}, Ingress: []string{"port-a", "port-b"},
		Egress: []string{"host", "port-b", "kernel:1"},
		Ranges: []acl.RangeConfig{{Base: 0x100000000, Size: 0x400000, Read: true, Write: true}},
	})
	c.Relay = []pmgr.RelayConfig{{From: "port-a", Base: 0x100000000, Size: 0x100000}}
	c.KernelIn = []pmgr.KernelInConfig{{From: "port-b", Base: 0x100200000, Size: 0x100000, Slot: 1}}
	return c
}

// ingressPortTLP is a random TLP as port p (0 A, 1 B) delivers it
// (tlpstim.PortTLP). The two ports' requesters that can pass the check
// are disjoint (30:00.0-3 behind A, 30:00.4-7 behind B; 20:00.x passes
// only from A), so a host completion's way back does not depend on which
// port's request the card saw last.
//
// Tags say where a TLP came from, so that TLPs of two ingresses that come
// out alike (a UR completion for the same local requester, say) cannot
// be taken for each other: a port's have bit 7 set and the port in bit 0
// (the host's have bit 7 clear), and bits 9:8 vary, to carry 10-bit tags
// to where the block's 8-bit descriptors cut them.
func ingressPortTLP(r *rand.Rand, p, i int) tlp.TLP {
	reqs := []tlp.ID{tlp.NewID(0x20, 0, uint8(r.IntN(8))), tlp.NewID(0x30, 0, uint8(4*p+r.IntN(4))), tlp.NewID(0x40+uint8(p), 0, 0)}
	x := tlpstim.PortTLP(r, i, reqs, tlp.NewID(0x20+0x10*uint8(p), 0, 0))
	x.Tag = uint16(i%4<<8 | 0x80 | i%64<<1 | p)
	if x.Kind().Class() == tlp.ClassCompletion {
		// No request the card sent has a tag with T8 set: a peer's stray
		// completion (for a proxy ID or not) never matches one, however
		// the card's traffic is timed, so the model's verdict (unexpected)
		// holds whenever it arrives.
		x.Tag |= 0x100
	}
	if x.Kind().IsNonPosted() {
		// On RQ the card's requests carry its own requester ID and tags,
		// so two reads from different ports could look alike there: the
		// traffic class's low bit says which port a request came from.
		x.TC = x.TC&^1 | uint8(p)
	}
	return x
}

// ingressHostTLP is a random request from the host as the PCIE4 block
// delivers it on CQ, and the BAR it matched: writes and reads through
// both windows, past them (no window), by the host's root complex and by
// a requester no domain has, AtomicOps, and reads of the register BAR's
// constant registers (ID, VERSION, CAPS).
func ingressHostTLP(r *rand.Rand, i int) (tlp.TLP, int) {
	x := tlp.TLP{Tag: uint16(i % 128), RequesterID: tlp.NewID(0, 0, 0), FirstBE: 0xF, LastBE: 0xF} // bit 7 clear: the host's (ingressPortTLP)
	if r.IntN(8) == 0 {
		x.RequesterID = tlp.NewID(0, 0, 1)
	}
	bar := 2
	off := []uint64{0, 0x40000000, 0x80000000}[r.IntN(3)] + uint64(r.IntN(1<<16))&^3
	n := 1 + r.IntN(24)
	var k tlp.Kind
	switch c := r.IntN(12); {
	case c < 5:
		k = tlp.MWr
	case c < 9:
		k = tlp.MRd
	case c < 10:
		k, n = tlp.FetchAdd, 1
	default:
		k, bar, off, n = tlp.MRd, 0, []uint64{pmgr.RegID, pmgr.RegVersion, pmgr.RegCaps}[r.IntN(3)], 1
		x.RequesterID = tlp.NewID(0, 0, 0)
	}
	x.Address = bases[bar] + off
	f, typ, _ := tlp.FmtType(k, true, 0)
	x.Fmt, x.Type, x.Length = f, typ, uint16(n)
	if n == 1 {
		x.LastBE = 0
	}
	if k.HasData() {
		x.Data = make([]byte, 4*n)
		for j := range x.Data {
			x.Data[j] = byte(r.Uint32())
		}
	}
	return x, bar
}

// origins are an egress's expected TLPs, one queue per ingress they came
// from: the egress keeps each ingress's order, except that a posted
// request or a completion may pass the non-posted requests ahead of it
// (PCIe §2.4.1, Table 2-39: a read waiting for a tag must not hold up
// the writes behind it), and interleaves the ingresses in an order the
// test does not predict.
type origins map[string][]string

// nonPosted says whether a TLP's description (str's: its kind first) is
// a non-posted request.
func nonPosted(what string) bool {
	for _, k := range []string{"MRd", "FetchAdd", "Swap", "CAS", "CfgRd", "CfgWr", "IORd", "IOWr"} {
		if strings.HasPrefix(what, k) {
			return true
		}
	}
	return false
}

// take removes got from whichever ingress's queue it leads, or follows
// only non-posted requests in when it may pass them, and says which; ""
// if none.
func (o origins) take(got string) string {
	for in, q := range o {
		for i, w := range q {
			if w == got {
				o[in] = slices.Delete(q, i, i+1)
				return in
			}
			if !nonPosted(w) || nonPosted(got) {
				break
			}
		}
	}
	return ""
}

func (o origins) left() int {
	n := 0
	for _, q := range o {
		n += len(q)
	}
	return n
}

// heads describes each queue's next expected TLP, for a failure.
func (o origins) heads() string {
	var b strings.Builder
	for in, q := range o {
		if len(q) > 0 {
			fmt.Fprintf(&b, "\n  from %s: %s (%d more)", in, q[0], len(q)-1)
		}
	}
	return b.String()
}

// tlpStream collects the TLPs of a stream in the card's format (header on
// the first beat, kept DWs of data) at a top-level prefix.
type tlpStream struct {
	hdr []uint64
	pay []byte
	in  bool
}

// beat takes one beat of s at prefix and returns the TLP it ends, if it
// does.
func (c *tlpStream) beat(t *testing.T, s *dut, prefix string) (tlp.TLP, bool) {
	if s.bit(prefix + "sop") {
		c.hdr, c.pay, c.in = append([]uint64(nil), s.get(prefix+"hdr")...), nil, true
	}
	if !c.in {
		t.Fatalf("%s: a beat with no start of packet", prefix)
	}
	c.pay = keptDWs(c.pay, s.get(prefix+"data"), s.get(prefix + "keep")[0])
	if !s.bit(prefix + "eop") {
		return tlp.TLP{}, false
	}
	c.in = false
	x, err := tlpstim.TLP(c.hdr, c.pay)
	if err != nil {
		t.Fatalf("%s: %v", prefix, err)
	}
	return x, true
}

// ingressFlag is how many TLPs each ingress gets in
// TestEveryIngressAgainstModel (make soak raises it).
var ingressFlag = flag.Int("ingress-tlps", 2000, "TLPs each of the host and the two peers send in TestEveryIngressAgainstModel")

// TestEveryIngressAgainstModel: the whole card with its host and two
// peers all sending at once. The host's requests arrive on CQ (through
// both windows, past them, into the register BAR, by a requester no domain
// has); the host answers every request the card sends it on RQ with a
// completion on RC, in its own order; each peer's link layer sends random
// TLPs into its port (remote DMA, relayed and steered writes, completions
// for the O-NIC's proxies and others, strangers, configuration requests,
// messages, I/O); the fibres flip bits, so the link layers replay. Every
// output is backpressured at random. Every TLP leaving on RQ, CC, the
// kernel stream and each port is the one pcie/manager, the emulator's
// model, sends there, each ingress's in its order; the requester tags on RQ are never two outstanding at once; and
// the counters (the manager's, read over BAR0 at the end, plus the port
// pipeline's) and the port pipeline's denials by rule equal the model's.
// The card's Verilog replays its first 1,500 cycles alike in Icarus and
// Verilator.
func TestEveryIngressAgainstModel(t *testing.T) {
	tools.Long(t)
	cfg := ingressConfig()
	mc := manager.Config{Manager: cfg, BARs: onicFunction(t).MemorySizes()}
	link := testLink(t)
	top := cardOf(t, "onic_card", mc, link)
	card := newDUT(t, top)
	peers := [2]*dut{newDUT(t, link), newDUT(t, link)}
	self := tlp.NewID(0x01, 0, 0)
	hostID := tlp.NewID(0, 0, 0)
	model, _ := modelOf(t, mc, self)
	regs := pmgr.NewRegs(model, 512)
	// The card's first recordCycles cycles, every input and output, for
	// the HDL replay at the end.
	const recordCycles = 1500
	rec := replay.New(top, card.Sim)
	card.drive("cfg_bus_number", uint64(self.Bus()))
	rec.Reset(true)
	card.Settle()
	if err := rec.Cycle(); err != nil {
		t.Fatal(err)
	}
	rec.Reset(false)
	for _, s := range append([]*dut{card}, peers[:]...) {
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
	}
	r := rand.New(rand.NewPCG(71, 72))
	n := *ingressFlag // TLPs from each of the host and the two peers

	// What each egress should carry, by ingress.
	want := map[string]origins{"rq": {}, "cc": {}, "kernel": {}, "port_a": {}, "port_b": {}}
	portOf := map[ntb.EgressKind]string{ntb.EgressPortA: "port_a", ntb.EgressPortB: "port_b"}
	str := func(x tlp.TLP) string { return x.String() + fmt.Sprintf(" data=%x", x.Data) }
	// The host's requests, decided first: no decision on the host side
	// reads what the ports' TLPs change, except a completion's way back,
	// which the host sends only after the port's request reached it.
	var cq []axisBeat
	// A peer answers each read the card sends it: the model sees the read
	// leave with a tag of its port's (Issue) and the answer come back on
	// that port at once; the card's port tag is only known when the read
	// leaves, so reads on the ports are compared with tag 0, and the
	// answer (peerAnswers, by the read's text) is sent with the card's
	// tag then.
	peerAnswers := [2]map[string][]tlp.TLP{{}, {}}
	peerID := [2]tlp.ID{tlp.NewID(0x20, 0, 0), tlp.NewID(0x30, 0, 0)}
	for i := range n {
		x, bar := ingressHostTLP(r, i)
		var o pmgr.Outcome
		model.Process(&x, pmgr.FromHost, &o)
		switch o.Action {
		case pmgr.Forward:
			switch o.Egress.Kind {
			case ntb.EgressPortA, ntb.EgressPortB:
				y := x
				o.Apply(&y)
				if y.Kind().IsNonPosted() {
					p := int(o.Egress.Kind - ntb.EgressPortA)
					if !model.Issue(&y, p) {
						t.Fatalf("host TLP %d: the model's tags for %s ran out", i, portOf[o.Egress.Kind])
					}
					c := hostAnswer(r, &y, peerID[p])
					var oc pmgr.Outcome
					model.Process(&c, pmgr.FromPortA+pmgr.Ingress(p), &oc)
					if oc.Action != pmgr.Forward || oc.Egress.Kind != ntb.EgressHost || !oc.Freed {
						t.Fatalf("host TLP %d: the model does not take the peer's answer %s: %+v", i, str(c), oc)
					}
					back := c
					oc.Apply(&back)
					// (Completer ID Enable clear: the block's own ID; the
					// CC descriptor's 8 tag bits: the host's requests came
					// on CQ with 8.)
					back.CompleterID, back.Tag = self, back.Tag&0xFF
					want["cc"]["answers from "+portOf[o.Egress.Kind]] = append(want["cc"]["answers from "+portOf[o.Egress.Kind]], str(back))
					y.Tag = 0
					peerAnswers[p][str(y)] = append(peerAnswers[p][str(y)], c)
				}
				want[portOf[o.Egress.Kind]]["host"] = append(want[portOf[o.Egress.Kind]]["host"], str(y))
			case ntb.EgressLocal:
				off := uint32(x.Address - bases[0])
				var data []byte
				for i := range uint32(x.Length) {
					data = binary.LittleEndian.AppendUint32(data, regs.Read(off&^3+4*i))
				}
				want["cc"]["regs"] = append(want["cc"]["regs"], str(readCompletion(&x, self, data)))
			default:
				t.Fatalf("host TLP %d: the model sends it to %v", i, o.Egress)
			}
		case pmgr.Complete:
			c := pcie.Completion(&x, self, o.Status, nil)
			want["cc"]["host"] = append(want["cc"]["host"], str(c))
		}
		c, err := pg213.ToCQ(&x, bar, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		cq = append(cq, beatsOf(append(c.Descriptor[:], c.Payload...), uint64(c.FirstBE)|uint64(c.LastBE)<<8)...)
	}
	var hostDenials [acl.NumRules]uint64
	for rule := acl.Rule(1); rule < acl.NumRules; rule++ {
		hostDenials[rule] = model.Denials(rule)
	}
	// The peers' TLPs.
	var peerBeats [2][]tlpstim.Beat
	// A non-posted request on RQ, by its text with tag 0: the host's
	// answers to those sent, in order.
	type answer struct {
		c      tlp.TLP // the host's completion, with the model's tag
		egress string  // where the model sends it
		want   string  // as it should leave
	}
	rqWant := map[string][]answer{}
	for p, in := range []pmgr.Ingress{pmgr.FromPortA, pmgr.FromPortB} {
		name := []string{"port_a", "port_b"}[p]
		other := []string{"port_b", "port_a"}[p]
		for i := range n {
			x := ingressPortTLP(r, p, i)
			peerBeats[p] = append(peerBeats[p], tlpBeatsOf(t, &x)...)
			var o pmgr.Outcome
			model.Process(&x, in, &o)
			switch o.Action {
			case pmgr.Forward:
				u := x
				switch o.Egress.Kind {
				case ntb.EgressHost:
					o.Apply(&u)
					if x.Kind().Class() == tlp.ClassCompletion {
						// The CC descriptor has 8 tag bits (PG213): the
						// host's requests came on CQ with 8, so a
						// completion for one has them too.
						u.CompleterID, u.Tag = self, u.Tag&0xFF
						want["cc"][name] = append(want["cc"][name], str(u))
						break
					}
					if x.Kind().IsNonPosted() {
						// The host answers it as the card's own request
						// (the model's tag, until the card's is known)
						// and the model sends the answer back to the port
						// with the peer's requester ID and tag: decided
						// now, so that no more than a few of the model's
						// tags are ever outstanding.
						c := hostAnswer(r, &u, hostID)
						var oc pmgr.Outcome
						model.Process(&c, pmgr.FromHost, &oc)
						if oc.Action != pmgr.Forward || !oc.Freed {
							t.Fatalf("the model does not forward the host's completion %s: %+v", str(c), oc)
						}
						back := c
						oc.Apply(&back)
						u.Tag = 0
						rqWant[str(u)] = append(rqWant[str(u)], answer{c, portOf[oc.Egress.Kind], str(back)})
					} else {
						// The RQ descriptor has 8 tag bits (PG213); a
						// posted request's tag means nothing to its
						// completer, so the card passes the low 8 on.
						u.Tag &= 0xFF
					}
					want["rq"][name] = append(want["rq"][name], str(u))
				case ntb.EgressKernel:
					u.Address = o.Address
					u.Fmt, u.Type, _ = tlp.FmtType(x.Kind(), o.Address >= 1<<32, 0)
					want["kernel"][name] = append(want["kernel"][name], fmt.Sprintf("slot %d %s", o.Egress.Slot, str(u)))
				case ntb.EgressLocal:
				default:
					t.Fatalf("%s TLP %d: the model sends it to %v", name, i, o.Egress)
				}
				if o.Second.Kind != ntb.EgressNone {
					want[other][name] = append(want[other][name], str(x))
				}
			case pmgr.Complete:
				c := pcie.Completion(&x, self, o.Status, nil)
				want[name][name] = append(want[name][name], str(c))
			}
		}
	}

	// The fibres, five words each way per port.
	type lane struct {
		data       []uint64
		ctl, valid bool
	}
	const delay = 5
	var toPeer, toCard [2][]lane
	for p := range 2 {
		for range delay {
			toPeer[p] = append(toPeer[p], lane{data: make([]uint64, 8)})
			toCard[p] = append(toCard[p], lane{data: make([]uint64, 8)})
		}
	}
	prefix := [2]string{"port_a_", "port_b_"}
	var rc []axisBeat
	var rqAt, ccAt []byte
	var rqUser uint64
	var kernel tlpStream
	var fromCard [2]tlpStream
	outstanding := map[uint16]bool{} // local tags of reads the host has not answered
	type later struct {
		c      tlp.TLP
		addr   uint64
		egress string // where the model sends it
		want   string // as it should leave
	}
	var toAnswer []later
	next := [2]int{}
	var answerBeats [2][]tlpstim.Beat // the peers' answers to the card's reads, to send
	// answering: the beat on offer is an answer's; inTLP: a TLP has
	// started and not ended (inAnswer: an answer).
	var answering, inTLP, inAnswer [2]bool
	var peerBeat [2]tlpstim.Beat // the beat on offer
	upAt := -1
	var cqTaken int
	got := map[string]int{}
	check := func(egress, what string) {
		if in := want[egress].take(what); in == "" {
			t.Fatalf("%s: %s\nwhich no ingress sends there next:%s", egress, what, want[egress].heads())
		}
		got[egress]++
	}
	done := func() bool {
		if cqTaken < len(cq) || next[0] < len(peerBeats[0]) || next[1] < len(peerBeats[1]) || len(rc) > 0 || len(toAnswer) > 0 ||
			len(answerBeats[0]) > 0 || len(answerBeats[1]) > 0 {
			return false
		}
		for _, o := range want {
			if o.left() > 0 {
				return false
			}
		}
		return true
	}
	var final *[]tlp.TLP // in the last phase, what CC carries
	flips := 0
	cyc := 0
	cycle := func() {
		// The card's inputs.
		for p := range 2 {
			in := toCard[p][cyc%delay]
			card.drive(prefix[p]+"phy_up", 1)
			card.drive(prefix[p]+"tx_ready", 1)
			card.drive(prefix[p]+"rx_data", in.data...)
			card.drive(prefix[p]+"rx_ctl", b2u(in.ctl))
			card.drive(prefix[p]+"rx_valid", b2u(in.valid))
		}
		rqReady, ccReady, kReady := r.IntN(4) != 0, r.IntN(4) != 0, r.IntN(3) != 0
		card.drive("s_axis_rq_tready", b2u(rqReady))
		card.drive("s_axis_cc_tready", b2u(ccReady))
		card.drive("m_kernel_tlp_ready", b2u(kReady))
		cqOffer := upAt >= 0 && r.IntN(3) != 0 && offer(card, cq[cqTaken:], "m_axis_cq_")
		if !cqOffer {
			card.drive("m_axis_cq_tvalid", 0)
		}
		// The host answers a read a while after it arrives, in its own
		// order.
		if len(toAnswer) > 0 && r.IntN(6) == 0 {
			j := r.IntN(len(toAnswer))
			a := toAnswer[j]
			toAnswer = append(toAnswer[:j], toAnswer[j+1:]...)
			pkt, err := pg213.ToRC(&a.c, a.addr, true)
			if err != nil {
				t.Fatal(err)
			}
			want[a.egress]["host completions"] = append(want[a.egress]["host completions"], a.want)
			bs := beatsOf(append(pkt.Descriptor[:], pkt.Payload...), 0)
			local := a.c.Tag
			bs[len(bs)-1].taken = func(int) { delete(outstanding, local) } // the completion finishes its request
			rc = append(rc, bs...)
		}
		rcOffer := r.IntN(2) == 0 && offer(card, rc, "m_axis_rc_")
		if !rcOffer {
			card.drive("m_axis_rc_tvalid", 0)
		}
		// The peers' inputs.
		peerReady := [2]bool{}
		peerOffer := [2]bool{}
		for p, s := range peers {
			in := toPeer[p][cyc%delay]
			s.drive("phy_up", 1)
			s.drive("tx_ready", 1)
			s.drive("rx_data", in.data...)
			s.drive("rx_ctl", b2u(in.ctl))
			s.drive("rx_valid", b2u(in.valid))
			peerReady[p] = r.IntN(4) != 0
			s.drive("m_tlp_ready", b2u(peerReady[p]))
			// Between TLPs a peer sends its answers to the card's reads
			// first, as a completer does: the card's port has 256 tags.
			answering[p] = inAnswer[p] || !inTLP[p] && len(answerBeats[p]) > 0
			have := answering[p] || next[p] < len(peerBeats[p])
			peerOffer[p] = upAt >= 0 && have && r.IntN(3) != 0
			s.drive("s_tlp_valid", b2u(peerOffer[p]))
			if peerOffer[p] {
				b := peerBeats[p][min(next[p], len(peerBeats[p])-1)]
				if answering[p] {
					b = answerBeats[p][0]
				}
				peerBeat[p] = b
				s.drive("s_tlp_hdr", b.Hdr...)
				s.drive("s_tlp_data", b.Data...)
				s.drive("s_tlp_keep", b.Keep)
				s.drive("s_tlp_sop", b2u(b.SOP))
				s.drive("s_tlp_eop", b2u(b.EOP))
			}
		}
		card.Settle()
		for _, s := range peers {
			s.Settle()
		}
		if cyc < recordCycles {
			if err := rec.Cycle(); err != nil {
				t.Fatal(err)
			}
		}
		if upAt < 0 && card.get("port_a_state")[0] == optlink.StateUp && card.get("port_b_state")[0] == optlink.StateUp {
			upAt = cyc
		}

		// What was taken and what left.
		if cqOffer && card.bit("m_axis_cq_tready") {
			cqTaken++
		}
		if rcOffer && card.bit("m_axis_rc_tready") {
			if rc[0].taken != nil {
				rc[0].taken(cyc)
			}
			rc = rc[1:]
		}
		for p, s := range peers {
			if peerOffer[p] && s.bit("s_tlp_ready") {
				if answering[p] {
					answerBeats[p] = answerBeats[p][1:]
				} else {
					next[p]++
				}
				inTLP[p] = !peerBeat[p].EOP
				inAnswer[p] = answering[p] && inTLP[p]
			}
			if peerReady[p] && s.bit("m_tlp_valid") {
				if x, ok := fromCard[p].beat(t, s, "m_tlp_"); ok {
					if !x.Kind().IsNonPosted() {
						check([]string{"port_a", "port_b"}[p], str(x))
						continue
					}
					// A read for the peer, with the card's tag: the peer
					// answers it with that tag.
					tag := x.Tag
					x.Tag = 0
					check([]string{"port_a", "port_b"}[p], str(x))
					a := peerAnswers[p][str(x)][0] // check found it: it is there
					peerAnswers[p][str(x)] = peerAnswers[p][str(x)][1:]
					a.Tag = tag
					answerBeats[p] = append(answerBeats[p], tlpBeatsOf(t, &a)...)
				}
			}
		}
		if kReady && card.bit("m_kernel_tlp_valid") {
			slot := card.get("m_kernel_slot")[0]
			if x, ok := kernel.beat(t, card, "m_kernel_tlp_"); ok {
				check("kernel", fmt.Sprintf("slot %d %s", slot, str(x)))
			}
		}
		if rqReady && card.bit("s_axis_rq_tvalid") {
			if len(rqAt) == 0 {
				rqUser = card.get("s_axis_rq_tuser")[0]
			}
			rqAt = keptDWs(rqAt, card.get("s_axis_rq_tdata"), card.get("s_axis_rq_tkeep")[0])
			if card.bit("s_axis_rq_tlast") {
				var q pg213.RQ
				copy(q.Descriptor[:], rqAt[:16])
				q.FirstBE, q.LastBE, q.Payload = uint8(rqUser&15), uint8(rqUser>>8&15), rqAt[16:]
				rqAt = nil
				x, err := q.TLP(self)
				if err != nil {
					t.Fatalf("RQ: %v", err)
				}
				if !x.Kind().IsNonPosted() {
					check("rq", str(x))
				} else {
					local := x.Tag
					if outstanding[local] {
						t.Fatalf("RQ: local tag %d given to a second outstanding request", local)
					}
					outstanding[local] = true
					x.Tag = 0
					check("rq", str(x))
					a := rqWant[str(x)][0] // check found it: it is there
					rqWant[str(x)] = rqWant[str(x)][1:]
					// The host's completion, with the card's local tag;
					// the card gives it the request's own requester ID
					// and tag back, as the model did.
					c := a.c
					c.Tag = local
					toAnswer = append(toAnswer, later{c, x.Address, a.egress, a.want})
				}
			}
		}
		if ccReady && card.bit("s_axis_cc_tvalid") {
			ccAt = keptDWs(ccAt, card.get("s_axis_cc_tdata"), card.get("s_axis_cc_tkeep")[0])
			if card.bit("s_axis_cc_tlast") {
				var c pg213.CC
				copy(c.Descriptor[:], ccAt[:12])
				c.Payload = ccAt[12:]
				ccAt = nil
				x, err := c.TLP(self)
				if err != nil {
					t.Fatalf("CC: %v", err)
				}
				if final != nil {
					*final = append(*final, x)
				} else {
					check("cc", str(x))
				}
			}
		}
		// The lanes, into the fibres, which now and then flip a bit: the
		// link layers replay what it damages.
		for p, s := range peers {
			toCard[p][cyc%delay] = lane{append([]uint64(nil), s.get("tx_data")...), s.bit("tx_ctl"), s.bit("tx_valid")}
			toPeer[p][cyc%delay] = lane{append([]uint64(nil), card.get(prefix[p]+"tx_data")...), card.bit(prefix[p] + "tx_ctl"), card.bit(prefix[p] + "tx_valid")}
			for _, l := range []*lane{&toCard[p][cyc%delay], &toPeer[p][cyc%delay]} {
				if l.valid && r.IntN(60) == 0 {
					l.data[r.IntN(8)] ^= 1 << r.IntN(64)
					flips++
				}
			}
		}
		card.Step()
		for _, s := range peers {
			s.Step()
		}
		cyc++
	}
	for cyc < 200000 && !done() {
		cycle()
	}
	if !done() {
		for e, o := range want {
			if o.left() > 0 {
				t.Errorf("%s: %d TLPs never came:%s", e, o.left(), o.heads())
			}
		}
		t.Fatalf("after %d cycles: CQ %d/%d beats taken, peers %d/%d and %d/%d", cyc, cqTaken, len(cq), next[0], len(peerBeats[0]), next[1], len(peerBeats[1]))
	}
	for _, e := range []string{"rq", "cc", "kernel", "port_a", "port_b"} {
		if got[e] == 0 {
			t.Errorf("nothing left on %s: the stimulus misses a path", e)
		}
	}
	replays := card.get("port_a_replays")[0] + card.get("port_b_replays")[0] + peers[0].get("replays")[0] + peers[1].get("replays")[0]
	t.Logf("%d cycles; TLPs out: %v; %d bits flipped, %d replays", cyc, got, flips, replays)
	if replays == 0 {
		t.Error("no frame was damaged and replayed: the test needs more flipped bits")
	}

	// The counters: the host reads the manager's over BAR0 (the read
	// counts itself, in the model as in the card); the port pipeline's
	// are outputs of the card. Together they are the model's.
	reasons := pmgr.Reasons()
	x := tlp.TLP{Tag: 1, RequesterID: hostID, Length: uint16(len(reasons)), FirstBE: 0xF, LastBE: 0xF, Address: bases[0] + pmgr.RegCount0}
	x.Fmt, x.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
	var o pmgr.Outcome
	model.Process(&x, pmgr.FromHost, &o)
	if o.Action != pmgr.Forward || o.Egress.Kind != ntb.EgressLocal {
		t.Fatalf("the model does not pass the counters' read to the registers: %+v", o)
	}
	c, err := pg213.ToCQ(&x, 0, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	cq = append(cq, beatsOf(append(c.Descriptor[:], c.Payload...), uint64(c.FirstBE)|uint64(c.LastBE)<<8)...)
	var answers []tlp.TLP
	final = &answers
	for limit := cyc + 2000; cyc < limit && len(answers) == 0; {
		cycle()
	}
	if len(answers) != 1 || len(answers[0].Data) != 4*len(reasons) {
		t.Fatalf("the counters' read was answered by %v", answers)
	}
	var line []string
	for i, rs := range reasons {
		name := "port_in_count_" + strings.ReplaceAll(rs.String(), "-", "_") + "_total"
		reg := binary.LittleEndian.Uint32(answers[0].Data[4*i:])
		port := card.get(name)[0]
		if uint64(reg)+port != model.Count(rs) {
			t.Errorf("%s: the manager's COUNT register %d and the port pipeline's %d, the model %d", rs, reg, port, model.Count(rs))
		}
		line = append(line, fmt.Sprintf("%s %d", rs, model.Count(rs)))
	}
	for rule := acl.Rule(1); rule < acl.NumRules; rule++ {
		name := "port_in_deny_" + strings.ReplaceAll(rule.String(), "-", "_") + "_total"
		if g, w := card.get(name)[0], model.Denials(rule)-hostDenials[rule]; g != w {
			t.Errorf("%s: %d, the model %d", name, g, w)
		}
	}
	t.Logf("counts: %s", strings.Join(line, ", "))
	// The card's Verilog, replayed with its first cycles' inputs (all
	// four sources sending by then), does what the IR simulation did, in
	// Icarus and in Verilator.
	replay.Verify(t, rec)
}

// hostAnswer is the host's successful completion of non-posted request
// x (as the host gets it), with random data: a read's bytes, with its
// Byte Count and Lower Address from the byte enables (PCIe §2.2.9), or an
// AtomicOp's original value (the operand size: half a CAS's payload).
func hostAnswer(r *rand.Rand, x *tlp.TLP, completer tlp.ID) tlp.TLP {
	n := 4 * int(x.Length)
	switch x.Kind() {
	case tlp.CAS:
		n /= 2
	case tlp.MRd, tlp.MRdLk:
		if x.Length == 0 {
			n = 4096
		}
	}
	data := make([]byte, max(n, 4))
	for j := range data {
		data[j] = byte(r.Uint32())
	}
	if x.Kind() == tlp.MRd || x.Kind() == tlp.MRdLk {
		return readCompletion(x, completer, data)
	}
	c := pcie.Completion(x, completer, tlp.StatusSC, data)
	c.ByteCount = uint16(n)
	return c
}

// tlpBeatsOf splits x into beats of the card's TLP stream.
func tlpBeatsOf(t testing.TB, x *tlp.TLP) []tlpstim.Beat {
	bs, err := tlpstim.Beats(x)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}
