package card

import (
	"math/rand/v2"
	"onic/testbenches/replay"
	"testing"

	"onic/designs/internal/optlink"
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/tlp"
)

// pair is simulated cards whose optical ports are joined by fibres, with
// a host behind each: what the test queues on each card's CQ and RC goes
// in a beat per cycle when the card takes it, and what leaves each card's
// RQ and CC is collected as TLPs. (Two cards joined port A to port A,
// newPair, or any other net, newNet.)
type pair struct {
	t     testing.TB
	top   []*ir.Module
	cards []*dut
	ids   []tlp.ID
	phy   bool    // the joined ports' PHYs up
	links []fibre // the fibres
	// cq and rc are each card's beats waiting to go in.
	cq, rc [][]axisBeat
	// rq and cc are the TLPs each card has sent its host.
	rq, cc     [][]tlp.TLP
	rqAt, ccAt [][]byte // the packet in progress
	rqUser     []uint64 // tuser of the RQ packet's first beat (its byte enables)
	rqCycle    [][]int  // the cycle each RQ packet's last beat left
	// The block's MSI-X interface of each card (pg213.MSIX), what it
	// knows of the function (setMSIX), and the RQ sequence numbers it
	// returns, the cycle after the packet's last beat: MSI-X messages go
	// to rq with the requests (the host's view), as they leave.
	msix    []pg213.MSIX
	fn      []pg213.FunctionState
	seqBack [][]uint64
	rqSeq   []uint64 // seq_num0 of the RQ packet in progress
	cycles  int      // cycles run
	// ber is the chance a word on a fibre gets one bit flipped (the link
	// layers then replay it); flips counts the flipped words.
	ber   float64
	flips int
	// flipData, if not 0, also flips a bit in one frame word in about
	// every flipData (dataWords counts them; nextFlip is the next one's
	// number, drawn from flipData/2 to 3*flipData/2 words on), so that
	// frames are damaged however the random flips fall. The spacing is
	// random: a fixed one can match the length of what a link replays,
	// so that every replay damages the same frame, which no real error
	// process does.
	flipData, dataWords, nextFlip int
	// lie, if not nil, may change each word on the first fibre's way
	// from its b end to its a end (card 1 to card 0 for newPair) after
	// the flips: a link partner that lies (TestHostileCards).
	lie func(w *word)
	r   *rand.Rand
	// rec records card 0's first recLimit cycles for a replay in the
	// HDL simulators (newNetRecorded).
	rec      *replay.Recorder
	recLimit int
}

// end is one end of a fibre: a card and its port's prefix (port_a).
type end struct {
	card int
	port string
}

// fibre joins two ports; wires hold the words on their way, each way.
type fibre struct {
	a, b  end
	wires [2][]word // a to b, b to a
}

// axisBeat is a beat of an AXI4-Stream packet: up to 64 bytes, and
// whether it is the packet's last.
type axisBeat struct {
	data  []byte
	last  bool
	user  uint64    // tuser's low word
	taken func(int) // called with the cycle the beat is taken (when not nil)
}

// beatsOf cuts pkt into beats, each with tuser's low word user.
func beatsOf(pkt []byte, user uint64) []axisBeat {
	var bs []axisBeat
	for o := 0; o < len(pkt); o += 64 {
		bs = append(bs, axisBeat{data: pkt[o:min(o+64, len(pkt))], last: o+64 >= len(pkt), user: user})
	}
	return bs
}

type word struct {
	data       []uint64
	ctl, valid bool
}

// newPair builds the cards from top[0] and top[1], joins their port A
// lanes over 5 words of fibre and resets them.
func newPair(t testing.TB, top [2]*ir.Module) *pair {
	return newNet(t, top[:], []fibre{{a: end{0, "port_a"}, b: end{1, "port_a"}}})
}

// newNet builds the cards from top (each card gets 01:00.0 as its ID, the
// first bus of its own host's hierarchy, as the emulator enumerates), joins
// them by links (5 words of fibre each) and resets them.
func newNet(t testing.TB, top []*ir.Module, links []fibre) *pair {
	return newNetRecorded(t, top, links, 0)
}

// newNetRecorded is newNet, recording card 0's reset and its next
// record cycles (p.rec) for a replay in the HDL simulators
// (replay.Verify).
func newNetRecorded(t testing.TB, top []*ir.Module, links []fibre, record int) *pair {
	n := len(top)
	p := &pair{t: t, top: top, phy: true, links: links, r: rand.New(rand.NewPCG(17, 18)), cards: make([]*dut, n), ids: make([]tlp.ID, n),
		cq: make([][]axisBeat, n), rc: make([][]axisBeat, n), rq: make([][]tlp.TLP, n), cc: make([][]tlp.TLP, n),
		rqAt: make([][]byte, n), ccAt: make([][]byte, n), rqUser: make([]uint64, n), rqCycle: make([][]int, n),
		msix: make([]pg213.MSIX, n), fn: make([]pg213.FunctionState, n), seqBack: make([][]uint64, n), rqSeq: make([]uint64, n)}
	for k := range p.cards {
		p.ids[k] = tlp.NewID(1, 0, 0) // each host's O-NIC is bus 1 of its own hierarchy, as in the emulator
		s := newDUT(t, top[k])
		p.cards[k] = s
		s.drive("cfg_bus_number", uint64(p.ids[k].Bus()))
		s.SetReset(true)
		if k == 0 && record > 0 {
			p.rec, p.recLimit = replay.New(top[0], s.Sim), record
			p.rec.Reset(true)
			s.Settle()
			if err := p.rec.Cycle(); err != nil {
				t.Fatal(err)
			}
			p.rec.Reset(false)
		}
		s.Step()
		s.SetReset(false)
		for _, in := range []string{"s_axis_cc_tready", "s_axis_rq_tready", "m_kernel_tlp_ready", "port_a_tx_ready", "port_b_tx_ready"} {
			if top[k].HasInput(in) { // a card with its kernel slots has no m_kernel_tlp_ready
				s.drive(in, 1)
			}
		}
	}
	p.setDelay(5)
	for k := range p.fn {
		p.fn[k].BusMaster = true // as newDUT's cfg_function_status says
	}
	return p
}

// setMSIX sets card k's function's MSI-X Enable and Function Mask, as
// the host's configuration writes would and the block shows them.
func (p *pair) setMSIX(k int, enable, mask bool) {
	p.fn[k].Enable, p.fn[k].Mask = enable, mask
	p.cards[k].drive("cfg_interrupt_msix_enable", b2u(enable))
	p.cards[k].drive("cfg_interrupt_msix_mask", b2u(mask))
}

// request queues x on card k's CQ, as the PCIE4 block delivers it for
// BAR bar.
func (p *pair) request(k int, x *tlp.TLP, bar int) {
	c, err := pg213.ToCQ(x, bar, 20, 0)
	if err != nil {
		p.t.Fatal(err)
	}
	// tuser: the byte enables (first_be [3:0], last_be [11:8]).
	p.cq[k] = append(p.cq[k], beatsOf(append(c.Descriptor[:], c.Payload...), uint64(c.FirstBE)|uint64(c.LastBE)<<8)...)
}

// requestAt is request, calling taken with the cycle the request's first
// beat is taken.
func (p *pair) requestAt(k int, x *tlp.TLP, bar int, taken func(int)) {
	at := len(p.cq[k])
	p.request(k, x, bar)
	p.cq[k][at].taken = taken
}

// setDelay makes every fibre d words long each way.
func (p *pair) setDelay(d int) {
	for i := range p.links {
		for w := range 2 {
			p.links[i].wires[w] = nil
			for range d {
				p.links[i].wires[w] = append(p.links[i].wires[w], word{data: make([]uint64, 8)})
			}
		}
	}
}

// complete queues host k's completion c (for a request to addr) on card
// k's RC, the block saying whether it finishes its request: when its
// data reaches the Byte Count (or its status is not SC).
func (p *pair) complete(k int, c *tlp.TLP, addr uint64) {
	n := 4*int(c.Length) - int(c.LowerAddress&3)
	done := c.Status != tlp.StatusSC || n >= int(c.ByteCount) || c.ByteCount == 0 && n >= 4096
	rc, err := pg213.ToRC(c, addr, done)
	if err != nil {
		p.t.Fatal(err)
	}
	p.rc[k] = append(p.rc[k], beatsOf(append(rc.Descriptor[:], rc.Payload...), 0)...)
}

// offer drives the head of q on s's prefix* inputs.
func offer(s *dut, q []axisBeat, prefix string) bool {
	if len(q) == 0 {
		s.drive(prefix+"tvalid", 0)
		return false
	}
	b := q[0]
	s.drive(prefix+"tvalid", 1)
	s.drive(prefix+"tdata", words(b.data, 512)...)
	s.drive(prefix+"tkeep", 1<<((len(b.data)+3)/4)-1)
	s.drive(prefix+"tlast", b2u(b.last))
	s.drive(prefix+"tuser", b.user, 0, 0)
	return true
}

// cycle runs every card a cycle.
func (p *pair) cycle() {
	offered := make([][2]bool, len(p.cards))
	for k, s := range p.cards {
		for _, port := range []string{"port_a", "port_b"} {
			s.drive(port+"_phy_up", 0)
			s.drive(port+"_rx_valid", 0)
		}
		offered[k] = [2]bool{offer(s, p.cq[k], "m_axis_cq_"), offer(s, p.rc[k], "m_axis_rc_")}
		if !p.top[k].HasInput("cfg_interrupt_msi_sent") {
			continue
		}
		seqValid := len(p.seqBack[k]) > 0
		if seqValid {
			s.drive("pcie_rq_seq_num0", p.seqBack[k][0])
			p.seqBack[k] = p.seqBack[k][1:]
		}
		s.drive("pcie_rq_seq_num_vld0", b2u(seqValid))
		r := p.msix[k].Cycle(p.ids[k])
		s.drive("cfg_interrupt_msi_sent", b2u(r.Sent))
		s.drive("cfg_interrupt_msi_fail", b2u(r.Fail))
		if r.Message != nil {
			p.rq[k] = append(p.rq[k], *r.Message)
			p.rqCycle[k] = append(p.rqCycle[k], p.cycles)
		}
	}
	for _, l := range p.links {
		for w, e := range []end{l.b, l.a} { // the a-to-b wire arrives at b
			in, s := l.wires[w][0], p.cards[e.card]
			s.drive(e.port+"_phy_up", b2u(p.phy))
			s.drive(e.port+"_rx_data", in.data...)
			s.drive(e.port+"_rx_ctl", b2u(in.ctl))
			s.drive(e.port+"_rx_valid", b2u(in.valid))
		}
	}
	for _, s := range p.cards {
		s.Settle()
	}
	for k, s := range p.cards {
		if offered[k][0] && s.bit("m_axis_cq_tready") {
			if p.cq[k][0].taken != nil {
				p.cq[k][0].taken(p.cycles)
			}
			p.cq[k] = p.cq[k][1:]
		}
		if offered[k][1] && s.bit("m_axis_rc_tready") {
			p.rc[k] = p.rc[k][1:]
		}
		if p.top[k].HasInput("cfg_interrupt_msi_sent") && s.bit("cfg_interrupt_msix_int") {
			r := pg213.MSIXRequest{Address: s.get("cfg_interrupt_msix_address")[0], Data: uint32(s.get("cfg_interrupt_msix_data")[0]),
				Function: uint8(s.get("cfg_interrupt_msi_function_number")[0])}
			if err := p.msix[k].Signal(r, p.fn[k]); err != nil {
				p.t.Fatalf("card %d: %v", k, err)
			}
		}
		if s.bit("s_axis_rq_tvalid") {
			if len(p.rqAt[k]) == 0 {
				u := s.get("s_axis_rq_tuser")
				p.rqUser[k] = u[0]
				sq := pg213.SeqNum0
				p.rqSeq[k] = (u[0]>>sq.Lo | u[1]<<(64-sq.Lo)) & (1<<sq.W - 1)
			}
			p.rqAt[k] = keptDWs(p.rqAt[k], s.get("s_axis_rq_tdata"), s.get("s_axis_rq_tkeep")[0])
			if s.bit("s_axis_rq_tlast") {
				var q pg213.RQ
				copy(q.Descriptor[:], p.rqAt[k][:16])
				u := p.rqUser[k]
				q.FirstBE, q.LastBE, q.Payload = uint8(u&15), uint8(u>>8&15), p.rqAt[k][16:]
				x, err := q.TLP(p.ids[k])
				if err != nil {
					p.t.Fatalf("RQ of card %d: %v", k, err)
				}
				p.rq[k], p.rqAt[k] = append(p.rq[k], x), nil
				p.seqBack[k] = append(p.seqBack[k], p.rqSeq[k])
				p.rqCycle[k] = append(p.rqCycle[k], p.cycles)
			}
		}
		if s.bit("s_axis_cc_tvalid") {
			p.ccAt[k] = keptDWs(p.ccAt[k], s.get("s_axis_cc_tdata"), s.get("s_axis_cc_tkeep")[0])
			if s.bit("s_axis_cc_tlast") {
				var c pg213.CC
				copy(c.Descriptor[:], p.ccAt[k][:12])
				c.Payload = p.ccAt[k][12:]
				x, err := c.TLP(p.ids[k])
				if err != nil {
					p.t.Fatalf("CC of card %d: %v", k, err)
				}
				p.cc[k], p.ccAt[k] = append(p.cc[k], x), nil
			}
		}
	}
	for i := range p.links {
		l := &p.links[i]
		for w, e := range []end{l.a, l.b} { // a sends on the a-to-b wire
			s := p.cards[e.card]
			wd := word{append([]uint64(nil), s.get(e.port+"_tx_data")...), s.bit(e.port + "_tx_ctl"), s.bit(e.port + "_tx_valid")}
			dataWord := wd.valid && !wd.ctl
			if dataWord {
				p.dataWords++
			}
			flipNow := dataWord && p.flipData > 0 && p.dataWords >= p.nextFlip
			if flipNow {
				p.nextFlip = p.dataWords + p.flipData/2 + p.r.IntN(p.flipData+1)
			}
			if wd.valid && p.ber > 0 && p.r.Float64() < p.ber || flipNow {
				wd.data[p.r.IntN(8)] ^= 1 << p.r.IntN(64)
				p.flips++
			}
			if p.lie != nil && i == 0 && w == 1 {
				p.lie(&wd)
			}
			l.wires[w] = append(l.wires[w][1:], wd)
		}
	}
	if p.rec != nil && p.cycles < p.recLimit {
		if err := p.rec.Cycle(); err != nil {
			p.t.Fatal(err)
		}
	}
	for _, s := range p.cards {
		s.Step()
	}
	p.cycles++
}

// run runs cycles until done, failing the test after limit of them.
func (p *pair) run(what string, limit int, done func() bool) {
	p.t.Helper()
	for i := 0; !done(); i++ {
		if i == limit {
			p.t.Fatalf("%s: not after %d cycles", what, limit)
		}
		p.cycle()
	}
}

// replays is how many frames the cards' links have sent again.
func (p *pair) replays() uint64 {
	n := uint64(0)
	for _, s := range p.cards {
		n += s.get("port_a_replays")[0] + s.get("port_b_replays")[0]
	}
	return n
}

// up says whether card k's port A link is up.
func (p *pair) up(k int) bool { return p.cards[k].get("port_a_state")[0] == optlink.StateUp }
