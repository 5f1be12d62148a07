package ipnet

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// MaxConns is how many connections a network's report follows; frames of
// more are counted under one "other" entry.
const MaxConns = 4096

// Conn is what one connection (TCP or UDP, one direction) delivered to
// the receiving host's interface: its frames, and its payload bytes —
// for TCP the sequence space its data covered, so a retransmitted byte
// counts once, which is what the receiving application reads.
type Conn struct {
	Proto  string `json:"proto"` // tcp, udp or other
	From   string `json:"from"`  // address:port
	To     string `json:"to"`
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// TCP: the first payload byte's sequence number and the highest end
	// seen, relative to it (wrapping in sequence space, RFC 9293 §3.4).
	seq0    uint32
	end     uint32
	started bool
}

type connKey struct {
	tcp      bool
	src, dst netip.AddrPort
}

// conns follows the connections whose frames the driver delivers,
// decoding each frame's headers with gopacket's allocation-free parser.
type conns struct {
	by     map[connKey]*Conn
	other  Conn
	parser *gopacket.DecodingLayerParser
	eth    layers.Ethernet
	ip4    layers.IPv4
	ip6    layers.IPv6
	tcp    layers.TCP
	udp    layers.UDP
	found  []gopacket.LayerType
}

func newConns() *conns {
	c := &conns{by: map[connKey]*Conn{}, other: Conn{Proto: "other"}}
	c.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &c.eth, &c.ip4, &c.ip6, &c.tcp, &c.udp)
	c.parser.IgnoreUnsupported = true
	return c
}

// add counts a frame delivered.
func (c *conns) add(frame []byte) {
	c.found = c.found[:0]
	_ = c.parser.DecodeLayers(frame, &c.found) // what it could not decode counts as other
	var k connKey
	var src, dst netip.Addr
	var sp, dp uint16
	var payload int
	ok := false
	for _, t := range c.found {
		switch t {
		case layers.LayerTypeIPv4:
			src, _ = netip.AddrFromSlice(c.ip4.SrcIP.To4())
			dst, _ = netip.AddrFromSlice(c.ip4.DstIP.To4())
		case layers.LayerTypeIPv6:
			src, _ = netip.AddrFromSlice(c.ip6.SrcIP)
			dst, _ = netip.AddrFromSlice(c.ip6.DstIP)
		case layers.LayerTypeTCP:
			k.tcp, sp, dp, payload, ok = true, uint16(c.tcp.SrcPort), uint16(c.tcp.DstPort), len(c.tcp.Payload), src.IsValid()
		case layers.LayerTypeUDP:
			sp, dp, payload, ok = uint16(c.udp.SrcPort), uint16(c.udp.DstPort), len(c.udp.Payload), src.IsValid()
		}
	}
	if !ok {
		c.other.Frames++
		c.other.Bytes += uint64(len(frame))
		return
	}
	k.src, k.dst = netip.AddrPortFrom(src, sp), netip.AddrPortFrom(dst, dp)
	e := c.by[k]
	if e == nil {
		if len(c.by) >= MaxConns {
			c.other.Frames++
			c.other.Bytes += uint64(payload)
			return
		}
		proto := "udp"
		if k.tcp {
			proto = "tcp"
		}
		e = &Conn{Proto: proto, From: k.src.String(), To: k.dst.String()}
		c.by[k] = e
	}
	e.Frames++
	if !k.tcp {
		e.Bytes += uint64(payload)
		return
	}
	seq := c.tcp.Seq
	if c.tcp.SYN {
		seq++
	}
	if !e.started {
		e.seq0, e.started = seq, true
	}
	if payload == 0 {
		return
	}
	if end := seq + uint32(payload) - e.seq0; int32(end-e.end) > 0 {
		e.end = end
		e.Bytes = uint64(end)
	}
}

// list is the connections, the most bytes first, then "other" if any.
func (c *conns) list() []Conn {
	out := make([]Conn, 0, len(c.by)+1)
	for _, e := range c.by {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b Conn) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Proto, b.Proto), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	if c.other.Frames > 0 {
		out = append(out, c.other)
	}
	return out
}

func (e Conn) String() string {
	return fmt.Sprintf("%s %s -> %s: %d frames, %d bytes", e.Proto, e.From, e.To, e.Frames, e.Bytes)
}
