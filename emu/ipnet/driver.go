// Package ipnet carries IP over the emulated fabric: FLEET's "IP over
// PCIe" network driver, modelled as a real driver for the O-NIC would be
// written, with each host's frames crossing the emulator as PCIe TLPs —
// through its host link, its O-NIC's access check and translation, the
// optical ports and the MEMS switch — into the peer host's memory.
//
// The ring format (docs/emu.md, "IP over the fabric"): each host's memory
// at MemBase (where the peers' windows lead) holds, for each peer that
// can reach it, a receive ring of Slots slots of SlotBytes each at
// RingsOffset + peer*RingBytes. A slot is a 16-byte header — the
// frame's length, the slot's sequence number (1 for the ring's first
// frame, counting up, never 0) and the frame's CRC-32C, 4 bytes each,
// little-endian — and the Ethernet frame. The sender writes the frame,
// then the header: posted writes stay in order (PCIe Base §2.4.1), so a
// header with the expected sequence number means the whole frame was
// sent before it. The receiver takes frames in sequence and returns
// credits: the count of frames it has taken, an 8-byte word it writes
// through its own window into the sender's memory at CreditsOffset +
// receiver*8. A sender never has more than Slots frames outstanding, so a
// full ring holds the sender back (its queue, QueueFrames deep, then
// drops and counts) instead of overwriting frames. After writing frames
// the sender rings the receiver's doorbell — an MSI-X message written
// through a window to the receiver's interrupt range — and the receiver
// rings the sender's after returning credits; a host some peer cannot
// ring polls.
//
// PCIe does not lose TLPs, but a circuit that goes dark does (the MEMS
// switch reconfiguring, a cut fibre): what was queued on the link is gone,
// while what the O-NIC holds for the dark port goes later. So the receiver
// checks each frame's CRC (a header that arrived after its frame's data
// was lost is dropped and counted, never delivered), takes a later
// header's arrival as the loss of the frames before it whose headers never
// came (headers arrive in order), and writes its credits again while a
// sender may be waiting for a credit write that was lost.
//
// Frames go to peers by Ethernet destination: a host's MAC is
// 02:6f:6e:00:00:NN (NN its index + 1); broadcast and multicast frames
// (ARP, IPv6 neighbour discovery) go to every peer the host's windows
// reach: once through a multicast window, whose copies land in the
// peers' broadcast rings, where the host's O-NIC has one.
package ipnet

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
)

// The driver's memory layout in each host (offsets from MemBase).
const (
	MemBase            = 1 << 32  // where the scenarios' windows translate to
	CreditsOffset      = 0        // 8 bytes per peer: frames that peer has taken from our unicast ring
	BcastCreditsOffset = 8 << 10  // 8 bytes per peer: frames that peer has taken from our broadcast ring
	RingsOffset        = 1 << 20  // the receive rings: one per peer, then one per multicasting peer
	Slots              = 64       // frames a ring holds
	SlotBytes          = 16 << 10 // a slot: 16-byte header and the frame
	RingBytes          = Slots * SlotBytes
	slotHeader         = 16
	// MaxMTU is the largest IP MTU the slots carry (an Ethernet frame of
	// MTU + 14 bytes after the slot's header).
	MaxMTU = SlotBytes - slotHeader - 14
	// QueueFrames is how many frames a host's driver queues per peer
	// while that peer's ring is full; more are dropped and counted.
	QueueFrames = 1024
)

// The doorbells: an MSI-X message is a 4-byte write of its data to its
// address, which on x86 lies in 0xFEE00000-0xFEEFFFFF (Intel SDM vol. 3,
// 11.11.1); a window of the O-NIC translated there carries a peer's
// write to the host's interrupt controller (SmartIO's "MSI window" over
// an NTB). Each host's driver has two vectors, programmed with the same
// address and data in every host.
const (
	MSIWindow  = 0xFEE00000 // what a doorbell window translates to
	MSIAddress = 0xFEE00000 // the vectors' message address (APIC 0)
	RXVector   = 0x61       // message data: frames are in the host's rings
	TXVector   = 0x62       // message data: a peer returned credits
	// Watchdog is how often a driver with doorbells looks at its rings
	// and credits without one: a doorbell a dark circuit lost is late by
	// at most this much.
	Watchdog = time.Millisecond
)

// bcastRings is where the broadcast rings start in a host's memory, for
// a cluster of n hosts; memBytes is the memory a host's rings take.
func bcastRings(n int) uint64 { return RingsOffset + uint64(n)*RingBytes }
func memBytes(n int) uint64   { return bcastRings(n) + uint64(n)*RingBytes }

// MAC is host i's Ethernet address.
func MAC(i int) [6]byte { return [6]byte{0x02, 0x6f, 0x6e, 0, 0, byte(i + 1)} }

// peer is a host's way into one peer's ring — or, for a multicast window,
// into the broadcast ring of every peer the window's copies reach: where
// it writes, where the peers' credits for it arrive and how it rings
// their doorbells.
type peer struct {
	to      []int    // the peers' indices
	win     uint64   // the host's window address that leads to MemBase in each
	ring    uint64   // the ring's offset from MemBase in each peer
	credits []uint64 // where in this host's memory each peer's credits arrive
	bells   []uint64 // each peer's doorbell: the host's window address to its MSIAddress (0: none)
	sent    uint32   // frames written to the ring
	queue   [][]byte
	rang    bool // frames written since the last doorbell
}

// ring is one receive ring in a host's memory: from sender host.
type ring struct {
	from     int
	off      uint64        // in the host's memory
	taken    uint32        // frames taken
	credits  uint32        // frames taken when the last credit write went out
	back     uint64        // where the credit write goes: the host's window address to the sender's credit word
	bell     uint64        // the sender's doorbell (0: none)
	creditAt time.Duration // when the last credit write went out
	activeAt time.Duration // when the ring last took a frame
}

// Host is one host's driver.
type Host struct {
	Name  string
	Index int
	MAC   [6]byte
	sw    *cluster.Software
	mem   []byte
	peers []*peer       // unicast, by destination
	mcast *peer         // the multicast window, if the host's O-NIC has one
	byMAC map[int]*peer // peer host index -> its direction
	rings []*ring
	// Doorbells: whether every peer can interrupt the host (else it
	// polls), the interrupts not yet serviced and when it last looked
	// at its rings and credits.
	bells     bool
	rx, tx    bool
	serviceAt time.Duration
	Stats     Stats
}

// Stats count a host driver's frames.
type Stats struct {
	SentFrames, SentBytes         uint64 // frames written into peers' rings
	ReceivedFrames, ReceivedBytes uint64 // frames taken from its rings
	Queued                        uint64 // frames that waited for a full ring
	Dropped                       uint64 // frames dropped: the queue for a full ring was full
	Lost                          uint64 // frames a dark circuit lost (their header never came)
	Corrupt                       uint64 // frames whose bytes were not all there (CRC), dropped
	NoPeer                        uint64 // unicast frames for a MAC no window reaches
	TooLong                       uint64 // frames longer than a slot carries
	Doorbells                     uint64 // MSI-X doorbells rung at peers
	Interrupts                    uint64 // MSI-X doorbells its peers rang
	Multicast                     uint64 // broadcast frames written once through the multicast window
}

// Driver is the IP-over-PCIe driver of every host of a cluster.
type Driver struct {
	cl    *cluster.Cluster
	Hosts []*Host
	err   error
}

// New attaches a driver to every server host of cfg, built as cl: each
// gets memory for its rings at MemBase, and finds its peers by following
// its O-NICs' windows (egress port-a or port-b) over the scenario's
// circuits to the O-NIC and host at the other end: windows translated to
// MemBase carry frames, windows translated to MSIWindow doorbells, and a
// multicast window to MemBase out of both ports broadcast frames.
func New(cl *cluster.Cluster, cfg scenario.Config) (*Driver, error) {
	d := &Driver{cl: cl}
	idx := map[string]int{}
	for i, h := range cfg.Hosts {
		idx[h.Name] = i
	}
	if len(cfg.Hosts) > 250 {
		return nil, fmt.Errorf("ipnet: %d hosts; at most 250 (one MAC byte)", len(cfg.Hosts))
	}
	n := len(cfg.Hosts)
	for i, hc := range cfg.Hosts {
		mem := make([]byte, memBytes(n))
		sw, err := cl.Attach(hc.Name, MemBase, mem)
		if err != nil {
			return nil, fmt.Errorf("ipnet: %v", err)
		}
		h := &Host{Name: hc.Name, Index: i, MAC: MAC(i), sw: sw, mem: mem, byMAC: map[int]*peer{}}
		sw.OnInterrupt = h.interrupt
		d.Hosts = append(d.Hosts, h)
	}
	// Where each port's circuit leads.
	far := map[string]string{}
	for _, c := range cfg.Circuits {
		far[c.A], far[c.B] = c.B, c.A
	}
	onicHost := map[string]int{}
	for _, o := range cfg.ONICs {
		onicHost[o.Name] = idx[o.Host]
	}
	farHost := func(onic, egress string) (int, bool) {
		if egress != "port-a" && egress != "port-b" {
			return 0, false
		}
		other, ok := far[onic+"."+egress[len(egress)-1:]]
		if !ok {
			return 0, false
		}
		on, _, _ := cutDot(other)
		ph, ok := onicHost[on]
		return ph, ok
	}
	bells := map[[2]int]uint64{}
	for _, o := range cfg.ONICs {
		h := d.Hosts[idx[o.Host]]
		fn := h.sw.ONICFunction(o.Name)
		for _, w := range o.Manager.Translation.Windows {
			ph, ok := farHost(o.Name, w.Egress)
			if w.Disabled || !ok || ph == h.Index {
				continue
			}
			addr := fn.BARAddress(w.BAR) + w.Offset
			switch {
			case w.Multicast:
				ph2, ok := farHost(o.Name, w.FailoverEgress)
				if h.mcast != nil || !ok || ph2 == h.Index || ph2 == ph || w.Translated != MemBase || w.FailoverTranslated != MemBase || w.Size < memBytes(n) {
					continue
				}
				h.mcast = &peer{to: []int{ph, ph2}, win: addr, ring: bcastRings(n) + uint64(h.Index)*RingBytes,
					credits: []uint64{MemBase + BcastCreditsOffset + 8*uint64(ph), MemBase + BcastCreditsOffset + 8*uint64(ph2)}}
			case w.Translated == MSIWindow && w.Size >= 4<<10:
				if bells[[2]int{h.Index, ph}] == 0 {
					bells[[2]int{h.Index, ph}] = addr
				}
			case w.Translated == MemBase && w.Size >= memBytes(n) && h.byMAC[ph] == nil:
				p := &peer{to: []int{ph}, win: addr, ring: RingsOffset + uint64(h.Index)*RingBytes, credits: []uint64{MemBase + CreditsOffset + 8*uint64(ph)}}
				h.peers = append(h.peers, p)
				h.byMAC[ph] = p
			}
		}
	}
	for _, h := range d.Hosts {
		for _, p := range append(h.peers[:len(h.peers):len(h.peers)], h.mcast) {
			if p == nil {
				continue
			}
			for _, to := range p.to {
				p.bells = append(p.bells, bells[[2]int{h.Index, to}])
			}
		}
		// The multicast window is for broadcast frames to peers the
		// host also reaches one by one (their credits come back that way).
		if m := h.mcast; m != nil && (h.byMAC[m.to[0]] == nil || h.byMAC[m.to[1]] == nil) {
			h.mcast = nil
		}
	}
	// Each host's rings: one per sender that reaches it, one more per
	// sender whose multicast window reaches it, each with the way back
	// for its credits and the sender's doorbell.
	for _, h := range d.Hosts {
		h.bells = true
		for _, s := range d.Hosts {
			p := s.byMAC[h.Index]
			if p == nil {
				continue
			}
			back := h.byMAC[s.Index]
			if back == nil {
				return nil, fmt.Errorf("ipnet: host %s reaches %s, but %s has no window back for its credits", s.Name, h.Name, h.Name)
			}
			h.bells = h.bells && p.bells[0] != 0
			h.rings = append(h.rings, &ring{from: s.Index, off: p.ring, back: back.win + CreditsOffset + 8*uint64(h.Index), bell: back.bells[0]})
			if m := s.mcast; m != nil && (m.to[0] == h.Index || m.to[1] == h.Index) {
				h.rings = append(h.rings, &ring{from: s.Index, off: m.ring, back: back.win + BcastCreditsOffset + 8*uint64(h.Index), bell: back.bells[0]})
			}
		}
	}
	return d, nil
}

// interrupt takes an MSI-X message the host's root complex raised.
func (h *Host) interrupt(in cluster.Interrupt) {
	if in.Address != MSIAddress {
		return
	}
	switch in.Data {
	case RXVector:
		h.rx = true
	case TXVector:
		h.tx = true
	default:
		return
	}
	h.Stats.Interrupts++
}

func cutDot(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Peers names the hosts host i's windows reach.
func (d *Driver) Peers(i int) []string {
	var names []string
	for _, p := range d.Hosts[i].peers {
		names = append(names, d.Hosts[p.to[0]].Name)
	}
	return names
}

// Doorbells reports whether host i takes MSI-X doorbells from all its
// peers (else its driver polls its rings and credits).
func (d *Driver) Doorbells(i int) bool { return d.Hosts[i].bells }

// Send hands an Ethernet frame to host i's driver: written at once into
// the ring of each peer it is for when that ring has room, queued
// otherwise (Pump writes it when credits come back). A broadcast or
// multicast frame goes once through the multicast window if the host's
// O-NIC has one, and one by one to the peers it does not reach.
func (d *Driver) Send(i int, frame []byte) {
	h := d.Hosts[i]
	if len(frame) > SlotBytes-slotHeader {
		h.Stats.TooLong++
		return
	}
	if len(frame) < 14 {
		return
	}
	if frame[0]&1 != 0 { // broadcast or multicast
		m := h.mcast
		if m != nil {
			h.Stats.Multicast++
			d.enqueue(h, m, frame)
		}
		for _, p := range h.peers {
			if m == nil || (p.to[0] != m.to[0] && p.to[0] != m.to[1]) {
				d.enqueue(h, p, frame)
			}
		}
		return
	}
	if frame[0] != 0x02 || frame[1] != 0x6f || frame[2] != 0x6e || frame[5] == 0 {
		h.Stats.NoPeer++
		return
	}
	p := h.byMAC[int(frame[5])-1]
	if p == nil {
		h.Stats.NoPeer++
		return
	}
	d.enqueue(h, p, frame)
}

func (d *Driver) enqueue(h *Host, p *peer, frame []byte) {
	if len(p.queue) == 0 && d.room(h, p) {
		d.write(h, p, frame)
		return
	}
	if len(p.queue) >= QueueFrames {
		h.Stats.Dropped++
		return
	}
	h.Stats.Queued++
	p.queue = append(p.queue, append([]byte(nil), frame...))
}

// room reports whether the ring has a free slot in every peer by the
// credits they have returned.
func (d *Driver) room(h *Host, p *peer) bool {
	for _, c := range p.credits {
		taken := uint32(binary.LittleEndian.Uint64(h.mem[c-MemBase:]))
		if p.sent-taken >= Slots {
			return false
		}
	}
	return true
}

// write puts frame into the ring's next slot: the frame's bytes (cut at
// 4 KiB pages, as a CPU's or DMA engine's stores are), then the header.
func (d *Driver) write(h *Host, p *peer, frame []byte) {
	seq := p.sent + 1
	slot := uint64(p.sent % Slots)
	base := p.win + p.ring + slot*SlotBytes
	at, rest := base+slotHeader, frame
	for len(rest) > 0 {
		n := min(len(rest), int(at&^0xFFF+0x1000-at))
		d.store(h, at, rest[:n])
		at, rest = at+uint64(n), rest[n:]
	}
	var hdr [12]byte
	binary.LittleEndian.PutUint32(hdr[0:], uint32(len(frame)))
	binary.LittleEndian.PutUint32(hdr[4:], seq)
	binary.LittleEndian.PutUint32(hdr[8:], crc32.Checksum(frame, castagnoli))
	d.store(h, base, hdr[:])
	p.sent = seq
	p.rang = true
	h.Stats.SentFrames++
	h.Stats.SentBytes += uint64(len(frame))
}

// store is a posted write of the host's; the first error is kept.
func (d *Driver) store(h *Host, at uint64, b []byte) {
	if err := h.sw.Write(at, b); err != nil && d.err == nil {
		d.err = err
	}
}

// ring writes an MSI-X doorbell (vector) through window address bell.
// Posted writes stay in order (PCIe Base §2.4.1), so it reaches the
// peer after the frames or credits it announces.
func (d *Driver) ring(h *Host, bell uint64, vector uint32) {
	if bell == 0 {
		return
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], vector)
	d.store(h, bell+MSIAddress-MSIWindow, b[:])
	h.Stats.Doorbells++
}

// Ring rings, for every ring a host wrote frames into since, the
// receivers' RX doorbells: one per peer however many frames went.
func (d *Driver) Ring() {
	for _, h := range d.Hosts {
		for _, p := range append(h.peers[:len(h.peers):len(h.peers)], h.mcast) {
			if p == nil || !p.rang {
				continue
			}
			p.rang = false
			for _, b := range p.bells {
				d.ring(h, b, RXVector)
			}
		}
	}
}

// Pump writes queued frames into rings that have room again.
func (d *Driver) Pump() {
	for _, h := range d.Hosts {
		d.pump(h)
	}
}

func (d *Driver) pump(h *Host) {
	for _, p := range append(h.peers[:len(h.peers):len(h.peers)], h.mcast) {
		if p == nil {
			continue
		}
		n := 0
		for n < len(p.queue) && d.room(h, p) {
			d.write(h, p, p.queue[n])
			n++
		}
		if n > 0 {
			p.queue = p.queue[:copy(p.queue, p.queue[n:])]
		}
	}
}

// Service is what host i's driver does when it runs: with doorbells,
// on an RX interrupt it takes the frames in its rings (calling deliver
// for each), on a TX interrupt it writes what waited for credits, and
// every Watchdog it does both whatever came; without, it does both every
// time. Then it rings the doorbells of the peers it wrote to.
func (d *Driver) Service(i int, deliver func(frame []byte)) {
	h := d.Hosts[i]
	now := d.cl.Now()
	dog := now-h.serviceAt >= Watchdog
	if dog {
		h.serviceAt = now
	}
	if !h.bells || h.rx || dog {
		h.rx = false
		d.Receive(i, deliver)
	}
	if !h.bells || h.tx || dog {
		h.tx = false
		d.pump(h)
	}
}

// Receive calls deliver for every whole frame that has arrived in host
// i's rings, in order per ring, and returns credits to the senders.
// The frame is valid only during the call.
func (d *Driver) Receive(i int, deliver func(frame []byte)) {
	h := d.Hosts[i]
	now := d.cl.Now()
	for _, r := range h.rings {
		for {
			n, seq, sum := r.header(h.mem, r.taken)
			if seq != r.taken+1 {
				// Not there yet — or lost: if a later frame's header
				// came, this one's never will.
				later := uint32(0)
				for k := uint32(1); k < Slots; k++ {
					if _, s2, _ := r.header(h.mem, r.taken+k); s2 == r.taken+k+1 {
						later = k
						break
					}
				}
				if later == 0 {
					break
				}
				r.taken += later
				h.Stats.Lost += uint64(later)
				continue
			}
			r.taken++
			r.activeAt = now
			slot := r.off + uint64((seq-1)%Slots)*SlotBytes
			if n > SlotBytes-slotHeader || crc32.Checksum(h.mem[slot+slotHeader:slot+slotHeader+uint64(n)], castagnoli) != sum {
				h.Stats.Corrupt++
				continue
			}
			deliver(h.mem[slot+slotHeader : slot+slotHeader+uint64(n)])
			h.Stats.ReceivedFrames++
			h.Stats.ReceivedBytes += uint64(n)
		}
		// Credits: when frames were taken, and again now and then while
		// the ring has been in use lately (a credit write a dark circuit
		// lost would otherwise leave its sender waiting for good).
		if r.taken != r.credits || now-r.creditAt >= creditRefresh && now-r.activeAt <= creditActive && r.taken > 0 {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], uint64(r.taken))
			d.store(h, r.back, b[:])
			d.ring(h, r.bell, TXVector)
			r.credits, r.creditAt = r.taken, now
		}
	}
}

// header reads the header of the slot the ring's k-th frame (from 0)
// goes in: its length, sequence number and CRC.
func (r *ring) header(mem []byte, k uint32) (n, seq, sum uint32) {
	slot := r.off + uint64(k%Slots)*SlotBytes
	return binary.LittleEndian.Uint32(mem[slot:]), binary.LittleEndian.Uint32(mem[slot+4:]), binary.LittleEndian.Uint32(mem[slot+8:])
}

// castagnoli is CRC-32C's table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// A receiver writes its credits again every creditRefresh while its ring
// has taken a frame within creditActive.
const (
	creditRefresh = time.Millisecond
	creditActive  = 100 * time.Millisecond
)

// Err is the first error an access gave (a driver bug or a scenario
// whose windows do not lead where the driver assumes).
func (d *Driver) Err() error { return d.err }

// Pending reports whether any frame waits in a queue for ring space or
// a doorbell waits to be serviced.
func (d *Driver) Pending() bool {
	for _, h := range d.Hosts {
		if h.rx || h.tx {
			return true
		}
		for _, p := range append(h.peers[:len(h.peers):len(h.peers)], h.mcast) {
			if p != nil && len(p.queue) > 0 {
				return true
			}
		}
	}
	return false
}
