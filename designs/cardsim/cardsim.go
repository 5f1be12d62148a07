// Package cardsim runs the generated O-NIC card cycle by cycle behind the
// interfaces the emulator speaks: TLPs on the host side, which it carries
// in and out of AMD's PCIe block's user interface (CQ and RC in, RQ and CC
// out, as pcie/pg213 models them), and 64-byte lane words on each optical
// port. It is the emulator's RTL backend: `onic emu serve --rtl` puts a
// Card where the scenario's O-NIC would be the Go model.
//
// The card is the one `onic hdl gen` writes for the same scenario O-NIC
// (designs/onic.Build), simulated by hdlgen/sim in one clock: the user
// clock and the transceivers' clocks are one here, so the clock-domain
// crossings of onic_top are not in the simulation (docs/hostif.md, "The
// RTL backend").
package cardsim

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"

	"onic/desc"
	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/designs/onic"
	"onic/emu/scenario"
	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/pcie/lanes"
	pmgr "onic/pcie/manager"
	"onic/pcie/pg213"
	"onic/tlp"
)

// Ports is how many optical ports a card has.
const Ports = 2

// LaneWords is how many 64-bit words a lane word of a port carries (the
// link layer's 512-bit interface).
const LaneWords = 8

// Word is what one optical port sends or receives in one cycle: 512 bits
// of its link layer's interface, a control word or a frame's, or nothing.
type Word struct {
	Data  [LaneWords]uint64
	Ctl   bool
	Valid bool
}

// Config is a card to simulate.
type Config struct {
	// ONIC is the scenario's O-NIC: the card is the one `onic hdl gen`
	// writes for it (its tables, down policy, kernels).
	ONIC scenario.ONICConfig
	// ID is the card's own requester ID (the block's cfg_bus_number; the
	// device and function are 0).
	ID tlp.ID
	// Where names the O-NIC in errors.
	Where string
}

// Card is one simulated card.
type Card struct {
	s    *sim.Sim
	top  *ir.Module
	id   tlp.ID
	bars [6]int // each BAR's aperture (log2 of its size), 0 if absent

	cq, rc []beat    // beats waiting to go in
	rqAt   []byte    // the RQ packet in progress
	rqUser [2]uint64 // its first beat's tuser (the low 128 bits)
	ccAt   []byte
	out    []tlp.TLP // RQ and CC TLPs not yet taken
	// rqPipe are the RQ requests in the block's transmit pipeline, which
	// leave pg213.RQLatency cycles after their last beat, and seqBack the
	// sequence numbers of those that left, to return on pcie_rq_seq_num0
	// a cycle each.
	rqPipe  []rqInFlight
	seqBack []uint64
	// msix is the block's MSI-X interface, fn what it knows of the
	// function (SetMSIX).
	msix pg213.MSIX
	fn   pg213.FunctionState

	// reads are the card's read requests toward the host, by tag: the
	// address the block gives each completion's RC descriptor.
	reads map[uint16]uint64

	cycles uint64
	// pace is each port's transceiver wrapper taking words at its lane
	// plan's rate (its tx_ready), when the plan is slower than the
	// clock; nil when it takes a word every cycle.
	pace [Ports]*lanes.Pacer
	// takes, when set, is what takes the port's words instead of a
	// pacer: a GTY wrapper (LaneFibre), asked each cycle.
	takes [Ports]func() bool
	ready [Ports]bool // the pacers' (or takes') tx_ready this cycle
	in    ports       // the ports the cycle drives and reads, resolved once
	lanes [Ports]Word
	phy   [Ports]bool
	tx    [Ports]Word
	// quiet counts the cycles since anything but control words crossed a
	// lane or the host interface, or a port's link changed state (Quiet);
	// state is each port's link state in the cycle before.
	quiet uint64
	state [Ports]uint64
	// tx follows each port's frames as they leave, to count the TLPs sent
	// (PortTLPs).
	txFrames [Ports]txFrames
	// rxFrames follows the frames each port receives, keeping their TLPs
	// while Capture is on (Received).
	rxFrames [Ports]txFrames
	capture  bool
	// drops are the TLPs with a payload the ports' hold buffers and down
	// gates dropped since the last Drops (the card's drop taps).
	drops []Drop
}

// Drop is a TLP with a payload that the card dropped: a port's, whole
// before its link — its hold buffer, full while the port did not admit
// (Hold), or its down gate (fail policy, the port down) — or the
// manager's (Port -1), a host TLP it failed for Reason.
type Drop struct {
	Port   int
	Hold   bool
	Reason pmgr.Reason
	// Word is the first 64 bits of its payload, least significant byte
	// first (the emulator's own writes carry their number there).
	Word uint64
}

// Drops returns the TLPs the card's ports dropped since the last call
// (valid until the next Cycle).
func (k *Card) Drops() []Drop {
	d := k.drops
	k.drops = k.drops[:0]
	return d
}

// rqInFlight is a request in the block's transmit pipeline: it leaves at
// cycle at, and its sequence number (seq_num0) comes back then.
type rqInFlight struct {
	t   tlp.TLP
	at  uint64
	seq uint64
}

// txFrames follows the frames one port sends: the words left of the
// frame under way, the last sequence number sent first time, and the
// TLPs sent (a frame sent again, or one an up link's partner already
// has, is not counted twice).
type txFrames struct {
	left int
	seq  uint16
	any  bool
	tlps uint64
	// keep: decode each new frame's TLP into got (words gathers it).
	keep  bool
	words []optlink.Word
	isNew bool
	got   []tlp.TLP
}

// track counts w, the word port i sent, toward its TLPs.
func (f *txFrames) track(w *Word, up bool) {
	if !up {
		f.any = false // a retrained link numbers its frames afresh
	}
	if !w.Valid || w.Ctl {
		return
	}
	if f.left == 0 {
		tok := uint32(w.Data[0])
		if tok>>24 != optlink.Marker {
			return
		}
		f.left = optlink.Words(int(tok >> 12 & 0x7ff))
		f.isNew = false
		if seq := uint16(tok & optlink.SeqMask); !f.any || seq == (f.seq+1)&optlink.SeqMask {
			f.seq, f.any, f.isNew = seq, true, true
			f.tlps++
		}
		f.words = f.words[:0]
	}
	f.left--
	if !f.keep || !f.isNew {
		return
	}
	if f.words = append(f.words, w.optlink()); f.left > 0 {
		return
	}
	if fr, _, err := optlink.DecodeFrame(f.words); err == nil {
		if t, err := frameTLP(fr); err == nil {
			f.got = append(f.got, t)
		}
	}
}

// Capture makes the card keep the TLPs each port receives, for Received.
func (k *Card) Capture(on bool) {
	k.capture = on
	for i := range k.rxFrames {
		k.rxFrames[i].keep = on
	}
}

// Received returns the TLPs port i received since the last call, each
// once however often the far end sent it (while Capture is on).
func (k *Card) Received(i int) []tlp.TLP {
	g := k.rxFrames[i].got
	k.rxFrames[i].got = nil
	return g
}

// PortTLPs is how many TLPs port i has sent, each once however often
// its link layer sent it again.
func (k *Card) PortTLPs(i int) uint64 { return k.txFrames[i].tlps }

// beat is a beat of an AXI4-Stream packet: up to 64 bytes.
type beat struct {
	data [8]uint64
	keep uint64
	last bool
	user uint64
}

// ports are the card's ports the cycle uses, resolved by name once.
type ports struct {
	cqValid, cqData, cqKeep, cqLast, cqUser, cqReady sim.Port
	rcValid, rcData, rcKeep, rcLast, rcUser, rcReady sim.Port
	rqValid, rqData, rqKeep, rqLast, rqUser          sim.Port
	ccValid, ccData, ccKeep, ccLast                  sim.Port
	seqNum, seqValid, msixSent, msixFail             sim.Port
	msixInt, msixAddr, msixData, msixFn              sim.Port
	phyUp, rxData, rxCtl, rxValid                    [Ports]sim.Port
	txData, txCtl, txValid, txReady, state           [Ports]sim.Port
	// taps are each port's drop taps (hold buffer or down gate: the one
	// the card has) and tapWord their payload words.
	taps, tapWord [Ports]sim.Port
	tapHold       bool
	// hostTap, hostWord and hostReason are the manager's drop tap.
	hostTap, hostWord, hostReason sim.Port
}

// New builds and resets the card for c.
func New(c Config) (*Card, error) {
	if c.Where == "" {
		c.Where = "onics[" + c.ONIC.Name + "]"
	}
	o, err := desc.FromScenario(c.ONIC, c.Where)
	if err != nil {
		return nil, err
	}
	if o.DataWidth != 512 {
		return nil, fmt.Errorf("%s.data_width: %d bits; the card's PCIE4 adapters take 512", c.Where, o.DataWidth)
	}
	mc := onic.ManagerConfig(o)
	mc.DropTap = true
	d, err := manager.Build(mc)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Where, err)
	}
	ds, err := onic.Build(d, onic.Options{Card: true, Function: o.Function, Kernels: o.Kernels, DropTaps: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Where, err)
	}
	top := ds.Top
	s, err := sim.New(top)
	if err != nil {
		return nil, err
	}
	k := &Card{s: s, top: top, id: c.ID, reads: map[uint16]uint64{}, fn: pg213.FunctionState{BusMaster: true}}
	for i, size := range o.BARs {
		if i < len(k.bars) && size > 0 {
			k.bars[i] = bits.Len64(size) - 1
		}
	}
	if err := k.resolve(); err != nil {
		return nil, err
	}
	if o.Lanes.WordPS64(o.ClockMHz) > int64(math.Round(64e6/o.ClockMHz)) {
		for i := range k.pace {
			k.pace[i] = o.Lanes.NewPacer(o.ClockMHz)
		}
	}
	for name, v := range map[string]uint64{
		"cfg_bus_number":      uint64(c.ID.Bus()),
		"cfg_function_status": 0x6, // PF0: Memory Space and Bus Master Enable set
		"pcie_tfc_nph_av":     15,  // the block has non-posted credit: 15 or more
		"pcie_tfc_npd_av":     15,
		"cfg_max_payload":     1, // MPS 256, as the scenarios' hosts set it
		"s_axis_cc_tready":    1,
		"s_axis_rq_tready":    1,
		"port_a_tx_ready":     1,
		"port_b_tx_ready":     1,
	} {
		if top.HasInput(name) {
			if err := s.Set(name, v); err != nil {
				return nil, err
			}
		}
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	return k, nil
}

// resolve finds the ports the cycle uses.
func (k *Card) resolve() error {
	var err error
	port := func(name string) sim.Port {
		p, e := k.s.Port(name)
		if e != nil && err == nil {
			err = e
		}
		return p
	}
	p := &k.in
	p.cqValid, p.cqData, p.cqKeep, p.cqLast, p.cqUser, p.cqReady = port("m_axis_cq_tvalid"), port("m_axis_cq_tdata"), port("m_axis_cq_tkeep"), port("m_axis_cq_tlast"), port("m_axis_cq_tuser"), port("m_axis_cq_tready")
	p.rcValid, p.rcData, p.rcKeep, p.rcLast, p.rcUser, p.rcReady = port("m_axis_rc_tvalid"), port("m_axis_rc_tdata"), port("m_axis_rc_tkeep"), port("m_axis_rc_tlast"), port("m_axis_rc_tuser"), port("m_axis_rc_tready")
	p.rqValid, p.rqData, p.rqKeep, p.rqLast, p.rqUser = port("s_axis_rq_tvalid"), port("s_axis_rq_tdata"), port("s_axis_rq_tkeep"), port("s_axis_rq_tlast"), port("s_axis_rq_tuser")
	p.ccValid, p.ccData, p.ccKeep, p.ccLast = port("s_axis_cc_tvalid"), port("s_axis_cc_tdata"), port("s_axis_cc_tkeep"), port("s_axis_cc_tlast")
	p.seqNum, p.seqValid = port("pcie_rq_seq_num0"), port("pcie_rq_seq_num_vld0")
	p.msixSent, p.msixFail = port("cfg_interrupt_msi_sent"), port("cfg_interrupt_msi_fail")
	p.msixInt, p.msixAddr = port("cfg_interrupt_msix_int"), port("cfg_interrupt_msix_address")
	p.msixData, p.msixFn = port("cfg_interrupt_msix_data"), port("cfg_interrupt_msi_function_number")
	for i, pre := range [Ports]string{"port_a_", "port_b_"} {
		p.phyUp[i], p.rxData[i], p.rxCtl[i], p.rxValid[i] = port(pre+"phy_up"), port(pre+"rx_data"), port(pre+"rx_ctl"), port(pre+"rx_valid")
		p.txData[i], p.txCtl[i], p.txValid[i], p.state[i] = port(pre+"tx_data"), port(pre+"tx_ctl"), port(pre+"tx_valid"), port(pre+"state")
		p.txReady[i] = port(pre + "tx_ready")
		tap := pre + "down_tap"
		if _, e := k.s.Port(pre + "hold_tap"); e == nil {
			p.tapHold = true
			tap = pre + "hold_tap"
		}
		p.taps[i], p.tapWord[i] = port(tap), port(tap+"_word")
	}
	p.hostTap, p.hostWord, p.hostReason = port("host_drop_tap"), port("host_drop_tap_word"), port("host_drop_tap_reason")
	return err
}

// Module is the simulated card's module (for names in waveforms).
func (k *Card) Module() *ir.Module { return k.top }

// Cycles is how many clock cycles the card has run since reset.
func (k *Card) Cycles() uint64 { return k.cycles }

// Request queues a request the host sends the card (a memory or message
// request that hit BAR bar): the block's CQ interface delivers it.
func (k *Card) Request(t *tlp.TLP, bar int) error {
	if bar < 0 || bar >= len(k.bars) || k.bars[bar] == 0 {
		return fmt.Errorf("cardsim: BAR %d: the card has no such BAR", bar)
	}
	c, err := pg213.ToCQ(t, bar, k.bars[bar], 0)
	if err != nil {
		return err
	}
	// tuser: the byte enables (first_be [3:0], last_be [11:8]).
	k.cq = appendBeats(k.cq, append(c.Descriptor[:], c.Payload...), uint64(c.FirstBE)|uint64(c.LastBE)<<8)
	return nil
}

// Complete queues a completion the host returns for one of the card's
// read requests: the block's RC interface delivers it, with the address
// of the read it answers. A completion for no read of the card's is an
// error (an Unexpected Completion, PCIe §2.3.2, which the block would
// not pass on).
func (k *Card) Complete(t *tlp.TLP) error {
	addr, ok := k.reads[t.Tag]
	if !ok || t.RequesterID != k.id {
		return fmt.Errorf("cardsim: an unexpected completion (requester %v, tag %d; PCIe §2.3.2)", t.RequesterID, t.Tag)
	}
	n := 4*int(t.Length) - int(t.LowerAddress&3)
	done := t.Status != tlp.StatusSC || n >= int(t.ByteCount) || t.ByteCount == 0 && n >= 4096
	if done {
		delete(k.reads, t.Tag)
	}
	rc, err := pg213.ToRC(t, addr, done)
	if err != nil {
		return err
	}
	k.rc = appendBeats(k.rc, append(rc.Descriptor[:], rc.Payload...), 0)
	return nil
}

// appendBeats cuts pkt into beats, each with tuser's low word user.
func appendBeats(q []beat, pkt []byte, user uint64) []beat {
	for o := 0; o < len(pkt); o += 64 {
		var b beat
		var buf [64]byte
		n := copy(buf[:], pkt[o:])
		for i := range b.data {
			b.data[i] = binary.LittleEndian.Uint64(buf[8*i:])
		}
		b.keep, b.last, b.user = 1<<((n+3)/4)-1, o+64 >= len(pkt), user
		q = append(q, b)
	}
	return q
}

// Queued is how many beats wait to go into the card's CQ and RC.
func (k *Card) Queued() int { return len(k.cq) + len(k.rc) }

// SetMSIX gives the card its function's MSI-X Enable and Function Mask
// bits (the host's configuration writes set them; the block shows them
// on cfg_interrupt_msix_enable and _mask, physical function 0's bit).
func (k *Card) SetMSIX(enable, mask bool) error {
	k.fn.Enable, k.fn.Mask = enable, mask
	if err := k.s.Set("cfg_interrupt_msix_enable", b2u(enable)); err != nil {
		return err
	}
	return k.s.Set("cfg_interrupt_msix_mask", b2u(mask))
}

// SetPHY says whether port i's transceivers are up (a circuit is lit).
func (k *Card) SetPHY(i int, up bool) { k.phy[i] = up }

// SetLane is what port i receives in the next cycle.
func (k *Card) SetLane(i int, w Word) { k.lanes[i] = w }

// Lane is what port i sent in the last cycle.
func (k *Card) Lane(i int) Word { return k.tx[i] }

// PortState is port i's link state: 0 down, 1 training, 2 up
// (optlink's states).
func (k *Card) PortState(i int) int {
	return int(k.s.Read(k.in.state[i])[0])
}

// Out returns the TLPs the card has sent its host (on RQ and CC) since
// the last call, in the order they finished.
func (k *Card) Out() []tlp.TLP {
	o := k.out
	k.out = nil
	return o
}

// Quiet is how many cycles have passed since anything but a control
// word crossed a lane, a beat the host interface, or a port's link
// changed state: a card quiet for longer than its link's Ack and replay
// timers has nothing in flight. (A link that has just come up counts as
// activity: what its hold buffer kept for it leaves a few cycles later.)
func (k *Card) Quiet() uint64 { return k.quiet }

// Cycle runs the card one clock cycle.
func (k *Card) Cycle() error {
	s, p := k.s, &k.in
	offer := func(q []beat, valid, data, keep, last, user sim.Port) bool {
		if len(q) == 0 {
			s.DrivePort(valid, []uint64{0})
			return false
		}
		b := &q[0]
		s.DrivePort(valid, []uint64{1})
		s.DrivePort(data, b.data[:])
		s.DrivePort(keep, []uint64{b.keep})
		s.DrivePort(last, []uint64{b2u(b.last)})
		s.DrivePort(user, []uint64{b.user, 0, 0})
		return true
	}
	active := k.blockCycle()
	cq := offer(k.cq, p.cqValid, p.cqData, p.cqKeep, p.cqLast, p.cqUser)
	rc := offer(k.rc, p.rcValid, p.rcData, p.rcKeep, p.rcLast, p.rcUser)
	for i := range Ports {
		w := &k.lanes[i]
		s.DrivePort(p.phyUp[i], []uint64{b2u(k.phy[i])})
		s.DrivePort(p.rxData[i], w.Data[:])
		s.DrivePort(p.rxCtl[i], []uint64{b2u(w.Ctl)})
		s.DrivePort(p.rxValid[i], []uint64{b2u(w.Valid && k.phy[i])})
		if w.Valid && !w.Ctl {
			active = true
		}
		switch {
		case k.takes[i] != nil:
			k.ready[i] = k.takes[i]()
			s.DrivePort(p.txReady[i], []uint64{b2u(k.ready[i])})
		case k.pace[i] != nil:
			k.ready[i] = k.pace[i].Ready()
			s.DrivePort(p.txReady[i], []uint64{b2u(k.ready[i])})
		}
	}
	s.Settle()
	if cq && s.Read(p.cqReady)[0]&1 == 1 {
		k.cq, active = k.cq[1:], true
	}
	if rc && s.Read(p.rcReady)[0]&1 == 1 {
		k.rc, active = k.rc[1:], true
	}
	if s.Read(p.rqValid)[0]&1 == 1 {
		active = true
		if len(k.rqAt) == 0 {
			u := s.Read(p.rqUser)
			k.rqUser = [2]uint64{u[0], u[1]}
		}
		k.rqAt = keptDWs(k.rqAt, s.Read(p.rqData), s.Read(p.rqKeep)[0])
		if s.Read(p.rqLast)[0]&1 == 1 {
			if err := k.finishRQ(); err != nil {
				return err
			}
		}
	}
	if s.Read(p.ccValid)[0]&1 == 1 {
		active = true
		k.ccAt = keptDWs(k.ccAt, s.Read(p.ccData), s.Read(p.ccKeep)[0])
		if s.Read(p.ccLast)[0]&1 == 1 {
			var c pg213.CC
			if len(k.ccAt) < len(c.Descriptor) {
				return fmt.Errorf("cardsim: a CC packet of %d bytes is shorter than its descriptor", len(k.ccAt))
			}
			copy(c.Descriptor[:], k.ccAt)
			c.Payload = k.ccAt[len(c.Descriptor):]
			x, err := c.TLP(k.id)
			if err != nil {
				return fmt.Errorf("cardsim: CC: %v", err)
			}
			k.out, k.ccAt = append(k.out, x), nil
		}
	}
	if s.Read(p.msixInt)[0]&1 == 1 {
		active = true
		r := pg213.MSIXRequest{Address: s.Read(p.msixAddr)[0], Data: uint32(s.Read(p.msixData)[0]), Function: uint8(s.Read(p.msixFn)[0])}
		if err := k.msix.Signal(r, k.fn); err != nil {
			return fmt.Errorf("cardsim: %v", err)
		}
	}
	for i := range Ports {
		w := &k.tx[i]
		copy(w.Data[:], s.Read(p.txData[i]))
		w.Ctl = s.Read(p.txCtl[i])[0]&1 == 1
		w.Valid = s.Read(p.txValid[i])[0]&1 == 1 && (k.pace[i] == nil && k.takes[i] == nil || k.ready[i])
		if w.Valid && !w.Ctl {
			active = true
		}
		st := s.Read(p.state[i])[0]
		if st != k.state[i] {
			k.state[i], active = st, true
		}
		up := st == optlink.StateUp
		if i == 0 && s.Read(p.hostTap)[0]&1 == 1 {
			k.drops = append(k.drops, Drop{Port: -1, Reason: pmgr.Reason(s.Read(p.hostReason)[0]), Word: s.Read(p.hostWord)[0]})
		}
		if s.Read(p.taps[i])[0]&1 == 1 {
			k.drops = append(k.drops, Drop{Port: i, Hold: p.tapHold, Word: s.Read(p.tapWord[i])[0]})
		}
		k.txFrames[i].track(w, up)
		if k.capture {
			k.rxFrames[i].track(&k.lanes[i], up && k.phy[i])
		}
	}
	s.Step()
	k.cycles++
	if active || len(k.cq)+len(k.rc)+len(k.rqPipe)+len(k.seqBack) > 0 || k.msix.Busy() {
		k.quiet = 0
	} else {
		k.quiet++
	}
	return nil
}

// blockCycle is the PCIe block's side of a cycle: the requests leaving
// its transmit pipeline (their sequence numbers returned on
// pcie_rq_seq_num0 a cycle each) and its MSI-X interface's answer. It
// says whether anything left.
func (k *Card) blockCycle() bool {
	s, p := k.s, &k.in
	active := false
	for len(k.rqPipe) > 0 && k.rqPipe[0].at <= k.cycles {
		k.out = append(k.out, k.rqPipe[0].t)
		if k.rqPipe[0].t.Kind().Class() == tlp.ClassMemory && k.rqPipe[0].t.Kind().HasData() {
			k.seqBack = append(k.seqBack, k.rqPipe[0].seq)
		}
		k.rqPipe, active = k.rqPipe[1:], true
	}
	if len(k.seqBack) > 0 {
		s.DrivePort(p.seqNum, []uint64{k.seqBack[0]})
		s.DrivePort(p.seqValid, []uint64{1})
		k.seqBack = k.seqBack[1:]
	} else {
		s.DrivePort(p.seqValid, []uint64{0})
	}
	r := k.msix.Cycle(k.id)
	s.DrivePort(p.msixSent, []uint64{b2u(r.Sent)})
	s.DrivePort(p.msixFail, []uint64{b2u(r.Fail)})
	if r.Message != nil {
		k.out, active = append(k.out, *r.Message), true
	}
	return active
}

// finishRQ turns the RQ packet collected into a TLP, remembering a read's
// address by its tag for the completions.
func (k *Card) finishRQ() error {
	var q pg213.RQ
	if len(k.rqAt) < len(q.Descriptor) {
		return fmt.Errorf("cardsim: an RQ packet of %d bytes is shorter than its descriptor", len(k.rqAt))
	}
	copy(q.Descriptor[:], k.rqAt)
	q.FirstBE, q.LastBE, q.Payload = uint8(k.rqUser[0]&15), uint8(k.rqUser[0]>>8&15), k.rqAt[len(q.Descriptor):]
	x, err := q.TLP(k.id)
	if err != nil {
		return fmt.Errorf("cardsim: RQ: %v", err)
	}
	k.rqAt = nil
	if !x.Kind().HasData() && x.Kind().Class() == tlp.ClassMemory {
		if _, dup := k.reads[x.Tag]; dup {
			return fmt.Errorf("cardsim: the card reused tag %d while its read was outstanding", x.Tag)
		}
		k.reads[x.Tag] = x.Address
	}
	// (seq_num0 straddles tuser's first two words.)
	sq := pg213.SeqNum0
	seq := (k.rqUser[0]>>sq.Lo | k.rqUser[1]<<(64-sq.Lo)) & (1<<sq.W - 1)
	k.rqPipe = append(k.rqPipe, rqInFlight{t: x, at: k.cycles + pg213.RQLatency, seq: seq})
	return nil
}

// keptDWs appends the DWs of a 512-bit beat that keep marks.
func keptDWs(p []byte, data []uint64, keep uint64) []byte {
	for i := range 16 {
		if keep>>i&1 == 1 {
			p = binary.LittleEndian.AppendUint32(p, uint32(data[i/2]>>(32*(i%2))))
		}
	}
	return p
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TraceVCD starts writing the card's waveform to w from this cycle on
// (every port, wire and register, named as in the generated Verilog), a
// cycle of periodNs each; StopVCD ends it.
func (k *Card) TraceVCD(w io.Writer, periodNs uint64) error { return k.s.TraceVCD(w, periodNs) }

// StopVCD ends the waveform and writes out what it holds.
func (k *Card) StopVCD() error { return k.s.StopVCD() }

// Counter reads one of the card's status outputs by its port name
// (port_a_replays, say), for reports and tests.
func (k *Card) Counter(name string) (uint64, error) {
	v, err := k.s.GetWords(name)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// Fibre joins port PA of card A to port PB of card B through a lit
// circuit: what one sends in a cycle reaches the other delay cycles
// later.
type Fibre struct {
	A, B   *Card
	PA, PB int
	wires  [2][]Word // A to B, B to A: rings of delay words
	at     int
}

// NewFibre lights a circuit between port pa of a and port pb of b, delay
// cycles (at least 1) each way, and tells both ports' PHYs it is up.
func NewFibre(a *Card, pa int, b *Card, pb int, delay int) *Fibre {
	delay = max(delay, 1)
	f := &Fibre{A: a, B: b, PA: pa, PB: pb, wires: [2][]Word{make([]Word, delay), make([]Word, delay)}}
	a.SetPHY(pa, true)
	b.SetPHY(pb, true)
	return f
}

// Carry moves one cycle's words along the fibre: call it after both
// cards' Cycle, before the next.
func (f *Fibre) Carry() {
	f.B.SetLane(f.PB, f.wires[0][f.at])
	f.A.SetLane(f.PA, f.wires[1][f.at])
	f.wires[0][f.at] = f.A.Lane(f.PA)
	f.wires[1][f.at] = f.B.Lane(f.PB)
	f.at = (f.at + 1) % len(f.wires[0])
}

// Cut darkens the circuit: both PHYs go down and the words on the way
// are lost.
func (f *Fibre) Cut() {
	f.A.SetPHY(f.PA, false)
	f.B.SetPHY(f.PB, false)
	f.A.SetLane(f.PA, Word{})
	f.B.SetLane(f.PB, Word{})
	clear(f.wires[0])
	clear(f.wires[1])
}

// SetID gives the card its requester ID (the block's cfg_bus_number:
// its bus; device and function are 0).
func (k *Card) SetID(id tlp.ID) error {
	k.id = id
	return k.s.Set("cfg_bus_number", uint64(id.Bus()))
}

// Compiled reports whether the card runs on generated code (a compiled
// model of its module was registered with hdlgen/sim) rather than on the
// interpreter.
func (k *Card) Compiled() bool { return k.s.Compiled() }
