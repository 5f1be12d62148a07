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
// drops and counts) instead of overwriting frames.
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
// reach.
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
	MemBase       = 1 << 32  // where the scenarios' windows translate to
	CreditsOffset = 0        // 8 bytes per peer: frames that peer has taken from our ring
	RingsOffset   = 1 << 20  // the receive rings, one per peer
	Slots         = 64       // frames a ring holds
	SlotBytes     = 16 << 10 // a slot: 16-byte header and the frame
	RingBytes     = Slots * SlotBytes
	slotHeader    = 16
	// MaxMTU is the largest IP MTU the slots carry (an Ethernet frame of
	// MTU + 14 bytes after the slot's header).
	MaxMTU = SlotBytes - slotHeader - 14
	// QueueFrames is how many frames a host's driver queues per peer
	// while that peer's ring is full; more are dropped and counted.
	QueueFrames = 1024
)

// MAC is host i's Ethernet address.
func MAC(i int) [6]byte { return [6]byte{0x02, 0x6f, 0x6e, 0, 0, byte(i + 1)} }

// peer is one direction host -> peer: where the host writes the peer's
// ring and where the peer's credits for it arrive.
type peer struct {
	host   int    // the peer's index
	win    uint64 // the host's window address that leads to the peer's MemBase
	slot   int    // this host's index in the peer's rings (its sender number)
	sent   uint32 // frames written to the peer's ring
	queue  [][]byte
	credit uint64 // where in this host's memory the peer's credits arrive
}

// ring is one receive ring in a host's memory: from sender host.
type ring struct {
	from     int
	off      uint64        // in the host's memory
	taken    uint32        // frames taken
	credits  uint32        // frames taken when the last credit write went out
	back     uint64        // where the credit write goes: the host's window address to the sender's credit word
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
	peers []*peer       // by destination
	byMAC map[int]*peer // peer host index -> its direction
	rings []*ring
	Stats Stats
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
// circuits to the O-NIC and host at the other end.
func New(cl *cluster.Cluster, cfg scenario.Config) (*Driver, error) {
	d := &Driver{cl: cl}
	idx := map[string]int{}
	for i, h := range cfg.Hosts {
		idx[h.Name] = i
	}
	if len(cfg.Hosts) > 250 {
		return nil, fmt.Errorf("ipnet: %d hosts; at most 250 (one MAC byte)", len(cfg.Hosts))
	}
	memBytes := RingsOffset + len(cfg.Hosts)*RingBytes
	for i, hc := range cfg.Hosts {
		mem := make([]byte, memBytes)
		sw, err := cl.Attach(hc.Name, MemBase, mem)
		if err != nil {
			return nil, fmt.Errorf("ipnet: %v", err)
		}
		d.Hosts = append(d.Hosts, &Host{Name: hc.Name, Index: i, MAC: MAC(i), sw: sw, mem: mem, byMAC: map[int]*peer{}})
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
	for _, o := range cfg.ONICs {
		h := d.Hosts[idx[o.Host]]
		fn := h.sw.ONICFunction(o.Name)
		for _, w := range o.Manager.Translation.Windows {
			if w.Disabled || (w.Egress != "port-a" && w.Egress != "port-b") || w.Translated != MemBase || w.Size < uint64(memBytes) {
				continue
			}
			other, ok := far[o.Name+"."+w.Egress[len(w.Egress)-1:]]
			if !ok {
				continue
			}
			on, _, _ := cutDot(other)
			ph, ok := onicHost[on]
			if !ok || ph == h.Index || h.byMAC[ph] != nil {
				continue
			}
			p := &peer{host: ph, win: fn.BARAddress(w.BAR) + w.Offset, slot: h.Index, credit: MemBase + CreditsOffset + 8*uint64(ph)}
			h.peers = append(h.peers, p)
			h.byMAC[ph] = p
		}
	}
	// Each host's rings: one per sender that reaches it, with the way
	// back for its credits.
	for _, h := range d.Hosts {
		for _, s := range d.Hosts {
			p := s.byMAC[h.Index]
			if p == nil {
				continue
			}
			back := h.byMAC[s.Index]
			if back == nil {
				return nil, fmt.Errorf("ipnet: host %s reaches %s, but %s has no window back for its credits", s.Name, h.Name, h.Name)
			}
			h.rings = append(h.rings, &ring{from: s.Index, off: RingsOffset + uint64(s.Index)*RingBytes,
				back: back.win + CreditsOffset + 8*uint64(h.Index)})
		}
	}
	return d, nil
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
		names = append(names, d.Hosts[p.host].Name)
	}
	return names
}

// Send hands an Ethernet frame to host i's driver: written at once into
// the ring of each peer it is for when that ring has room, queued
// otherwise (Pump writes it when credits come back).
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
		for _, p := range h.peers {
			d.enqueue(h, p, frame)
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

// room reports whether the peer's ring has a free slot by the credits
// it has returned.
func (d *Driver) room(h *Host, p *peer) bool {
	off := p.credit - MemBase
	taken := uint32(binary.LittleEndian.Uint64(h.mem[off:]))
	return p.sent-taken < Slots
}

// write puts frame into the peer's next slot: the frame's bytes (cut at
// 4 KiB pages, as a CPU's or DMA engine's stores are), then the header.
func (d *Driver) write(h *Host, p *peer, frame []byte) {
	seq := p.sent + 1
	slot := uint64(p.sent % Slots)
	base := p.win + RingsOffset + uint64(p.slot)*RingBytes + slot*SlotBytes
	at, rest := base+slotHeader, frame
	for len(rest) > 0 {
		n := min(len(rest), int(at&^0xFFF+0x1000-at))
		if err := h.sw.Write(at, rest[:n]); err != nil && d.err == nil {
			d.err = err
		}
		at, rest = at+uint64(n), rest[n:]
	}
	var hdr [12]byte
	binary.LittleEndian.PutUint32(hdr[0:], uint32(len(frame)))
	binary.LittleEndian.PutUint32(hdr[4:], seq)
	binary.LittleEndian.PutUint32(hdr[8:], crc32.Checksum(frame, castagnoli))
	if err := h.sw.Write(base, hdr[:]); err != nil && d.err == nil {
		d.err = err
	}
	p.sent = seq
	h.Stats.SentFrames++
	h.Stats.SentBytes += uint64(len(frame))
}

// Pump writes queued frames into rings that have room again.
func (d *Driver) Pump() {
	for _, h := range d.Hosts {
		for _, p := range h.peers {
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
}

// Receive calls deliver for every whole frame that has arrived in host
// i's rings, in order per sender, and returns credits to the senders.
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
			if err := h.sw.Write(r.back, b[:]); err != nil && d.err == nil {
				d.err = err
			}
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

// Pending reports whether any frame waits in a queue for ring space.
func (d *Driver) Pending() bool {
	for _, h := range d.Hosts {
		for _, p := range h.peers {
			if len(p.queue) > 0 {
				return true
			}
		}
	}
	return false
}
