package optlink

import (
	"fmt"
	"sync"

	"onic/designs/internal/realign"
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/pcie/dll"
	"onic/tlp"
)

// The GTY transceiver wrapper under a port's lane interface carries its
// 512-bit words over the port's lane plan (pcie/lanes; docs/hdl.md, "Lane
// plans"): FLEET's is 16 lanes at 8.25 Gb/s with 64b/66b, a word every
// 4 ns; a slower plan shows here only as tx_ready low in more cycles.

// Link states, as the state output and the emulator's ports have them.
const (
	StateDown     = 0 // no PHY, or lost: nothing admitted
	StateTraining = 1 // exchanging training words
	StateUp       = 2 // frames flow
)

// Config sizes a link layer and sets its timers, in 250 MHz user-clock
// cycles of 512 bits (4 ns, 4 symbol times of each of the 16 lanes at
// 8 GT/s).
type Config struct {
	// ReplayWords is the replay buffer in 64-byte words (a power of two,
	// 128 to 1024; default 256: 16 KiB, emu/link's default).
	ReplayWords int
	// RxWords is the receive buffer in 64-byte words, which the credits
	// advertise (a power of two, 128 to 1024; default 256).
	RxWords int
	// AckCycles is the longest a pending Ack or credit update waits while
	// frames flow (default: pcie/dll.AckLatency for Gen3 x16 at MPS 256,
	// 168 symbol times, over 4 symbol times a cycle: 42). An idle link
	// sends control words back to back.
	AckCycles int
	// ReplayCycles is the replay timer: unacknowledged frames are sent
	// again after this long without Ack progress (default 2048, 8.2 µs,
	// enough for a 600 m fibre's round trip).
	ReplayCycles int
	// TrainCycles is how long both ends exchange training words after
	// they hear each other before the link is up (default 1024; tests
	// use tens of cycles).
	TrainCycles int
	// LostCycles is how long without a good control word before an up
	// link is declared down (default 4096).
	LostCycles int
	// CreditCycles is how long a TLP may wait at admission for credits
	// the far end does not return before the link is taken down
	// (default 16384, 65.5 µs: far longer than a healthy receiver takes
	// to drain its buffer at line rate). A partner that never
	// acknowledges is taken down by REPLAY_NUM rolling over instead
	// (ReplayRollover replays without Ack progress).
	CreditCycles int
}

// ReplayRollover is how many replays in a row without Ack progress take
// the link down to retrain, as PCIe's 2-bit REPLAY_NUM rolling over
// does (PCIe Base §3.6.2.1).
const ReplayRollover = dll.ReplayRollover

// withDefaults fills in zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.ReplayWords, 256)
	def(&c.RxWords, 256)
	def(&c.AckCycles, int(dll.AckLatency(tlp.Gen3, 16, 256)/4))
	def(&c.ReplayCycles, 2048)
	def(&c.TrainCycles, 1024)
	def(&c.LostCycles, 4096)
	def(&c.CreditCycles, dll.CreditTimeoutCycles)
	for _, b := range []struct {
		name string
		v    int
	}{{"replay_words", c.ReplayWords}, {"rx_words", c.RxWords}} {
		if b.v < 128 || b.v > 1024 || b.v&(b.v-1) != 0 {
			return c, fmt.Errorf("optlink: %s %d must be a power of two from 128 to 1024", b.name, b.v)
		}
	}
	for _, t := range []struct {
		name string
		v    int
	}{{"ack_cycles", c.AckCycles}, {"replay_cycles", c.ReplayCycles}, {"train_cycles", c.TrainCycles}, {"lost_cycles", c.LostCycles}, {"credit_cycles", c.CreditCycles}} {
		if t.v < 1 || t.v > 0xffff {
			return c, fmt.Errorf("optlink: %s %d must be 1 to 65535 cycles", t.name, t.v)
		}
	}
	if c.ReplayCycles <= c.AckCycles {
		return c, fmt.Errorf("optlink: replay_cycles %d must exceed ack_cycles %d", c.ReplayCycles, c.AckCycles)
	}
	return c, nil
}

const (
	dataBits = 512
	keepBits = 16
	hdrBits  = 128
)

// crc is the CRC-32 register after data (n bits, least significant
// first) from register value reg, named name: the output of an instance
// (name_unit) of CRCModule(n).
func crc(m *ir.Module, name string, reg, data ir.Value) ir.Value {
	ir.Helper()
	out := m.Instance(name+"_unit", CRCModule(data.Width()), map[string]ir.Value{"crc": reg, "data": data})
	return m.Named(name, out["next"])
}

// crcModules caches CRCModule's modules by width: each is built once and
// instanced wherever a CRC of that width is computed.
var crcModules sync.Map

// CRCModule is onic_optlink_crc<n>: the CRC-32 register's next value
// (next) after n data bits (data, least significant first) from its
// value (crc), each bit the parity of the inputs crcMatrix names from
// crc_data ({data, crc}). The card computes the LCRC of a frame's data
// words and of its control words with it, so each width's matrix is
// printed once, in its own module, rather than inlined where it is used.
func CRCModule(n int) *ir.Module {
	if m, ok := crcModules.Load(n); ok {
		return m.(*ir.Module)
	}
	m := ir.NewModule(fmt.Sprintf("onic_optlink_crc%d", n))
	reg, data := m.Input("crc", 32), m.Input("data", n)
	mat := crcMatrix(n)
	in := m.Named("crc_data", m.Concat(data, reg))
	bits := make([]ir.Value, 32)
	for j := range bits {
		bits[31-j] = m.RedXor(m.And(in, m.ConstWords(in.Width(), mat[j])))
	}
	// Each bit of the next CRC: the parity of the bits of {data, crc}
	// its row of the matrix takes.
	m.Output("next", m.Named("crc_next", m.Concat(bits...)))
	got, _ := crcModules.LoadOrStore(n, m)
	return got.(*ir.Module)
}

// crcAhead is crc of n zero data bits from reg: the register's share of
// the CRC after n bits (crc is linear, so crc(reg, data) is crcAhead(reg,
// n) xor crc(0, data)). Each bit is the parity of at most 32 register
// bits.
func crcAhead(m *ir.Module, name string, reg ir.Value, n int) ir.Value {
	ir.Helper()
	mat := crcMatrix(n)
	bits := make([]ir.Value, 32)
	for j := range bits {
		bits[31-j] = m.RedXor(m.And(reg, m.Const(32, mat[j][0]&0xffffffff)))
	}
	return m.Named(name, m.Concat(bits...))
}

// keepMask widens a keep bit per DW to a mask of 32 bits per DW.
func keepMask(m *ir.Module, keep ir.Value) ir.Value {
	ir.Helper()
	parts := make([]ir.Value, keep.Width())
	for d := range parts {
		// (A choice between all ones and zeros, rather than the bit
		// extended, reads the keep bit once.)
		parts[len(parts)-1-d] = m.Mux(m.Slice(keep, d, 1), m.Const(32, 0xFFFF_FFFF), m.Const(32, 0))
	}
	return m.Concat(parts...)
}

// payloadDWs is the payload length of the TLP whose 128-bit header bus is
// hdr: Length (0 meaning 1024) when Fmt says it carries data, else 0.
func payloadDWs(m *ir.Module, hdr ir.Value) ir.Value {
	ir.Helper()
	hasData := m.Slice(tlphdr.Field(m, hdr, "fmt", tlp.ClassMemory, tlp.Fmt3DW), 1, 1) // Fmt bit 1
	n := tlphdr.DWs(m, tlphdr.Field(m, hdr, "length", tlp.ClassMemory, tlp.Fmt3DW))
	return m.Mux(hasData, n, m.Const(11, 0))
}

// wordsFor is Words (lcrc) or DataWords for n payload DWs, as 7 bits.
func wordsFor(m *ir.Module, name string, n ir.Value, lcrc bool) ir.Value {
	ir.Helper()
	extra := FrontDWs + WordDWs - 1
	if lcrc {
		extra++
	}
	// (The DWs rounded up to a word, named: a part-select needs a wire.)
	dws := m.Named(name+"_dws_up", m.Add(m.Zext(n, 12), m.Const(12, uint64(extra))))
	return m.Slice(dws, 4, 7)
}

// FramerModule is the transmit framer (onic_optlink_framer): each TLP of
// the manager's stream (tlp_hdr, tlp_data from byte 0, tlp_keep,
// tlp_sop, tlp_eop) gets its token (seq, epoch, payload length) and
// header slot in front, the payload realigned behind them; frame_* carries
// the frame's words without the LCRC, which the link adds.
func FramerModule() *ir.Module {
	m := ir.NewModule("onic_optlink_framer")
	m.Describe("tlp_", "TLPs to frame, in the manager's stream format: a 128-bit header, the payload from byte 0, keep, sop and eop.")
	m.Describe("seq", "The frame's sequence number and the link's epoch, for its token.")
	m.Describe("frame_", "The frame's words, token and header slot first, the payload realigned behind them, without the LCRC.")
	hdr := m.Input("tlp_hdr", hdrBits)
	data := m.Input("tlp_data", dataBits)
	keep := m.Input("tlp_keep", keepBits)
	sop := m.Input("tlp_sop", 1)
	eop := m.Input("tlp_eop", 1)
	valid := m.Input("tlp_valid", 1)
	seq := m.Input("seq", SeqBits)
	epoch := m.Input("epoch", 1)
	ready := m.Wire("in_ready", 1)
	m.Output("tlp_ready", ready)
	tok := m.Named("token", m.Concat(m.Const(8, Marker), epoch, payloadDWs(m, hdr), seq))
	out := realign.Prepend(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: ready}, sop, eop, m.Concat(hdr, tok),
		func(_, _, _ ir.Value) ir.Value { return m.Const(1, 0) })
	realign.Outputs(m, out, "frame_", "data", "keep", "last")
	m.Output("frame_valid", out.Valid)
	m.Assign(out.Ready, m.Input("frame_ready", 1))
	return m
}

// DeframerModule is the receive deframer (onic_optlink_deframer): stored
// frame words (in_data, in_keep over the token, header and payload DWs,
// in_last on the last of them) become TLPs in the manager's stream
// format, the header from the header slot and the payload realigned to
// byte 0.
func DeframerModule() *ir.Module {
	m := ir.NewModule("onic_optlink_deframer")
	m.Describe("in_", "A stored frame's words: token, header and payload DWs, in_last on the last.")
	m.Describe("tlp_", "The TLP, in the manager's stream format: the header from the header slot, the payload realigned to byte 0.")
	data := m.Input("in_data", dataBits)
	keep := m.Input("in_keep", keepBits)
	last := m.Input("in_last", 1)
	valid := m.Input("in_valid", 1)
	ready := m.Wire("in_ready_w", 1)
	m.Output("in_ready", ready)
	hdr := m.Named("slot_hdr", m.Slice(data, 32, hdrBits))
	out := realign.Strip(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: ready}, last, []axis.Field{{Name: "hdr", Value: hdr}}, FrontDWs)
	realign.Outputs(m, out, "tlp_", "hdr", "data", "keep", "sop", "eop")
	m.Output("tlp_valid", out.Valid)
	m.Assign(out.Ready, m.Input("tlp_ready", 1))
	return m
}
