package gty

import (
	"math"
	"math/rand/v2"
)

// Fibre is a behavioural model of one direction of a port's transceivers
// and the fibre between them, lane by lane, as the wrapper sees the
// wizard's parallel interface: each cycle every lane takes a 64-bit block
// and its 2-bit sync header, serialised header first and bit 0 first,
// and gives back the next 66 bits on its line once it has them (valid
// low when it does not: the gearbox's gaps). A lane's line starts with a
// random number of bits (less than a block: where the receiver's block
// boundary falls) and Skew blocks of garbage; BitErrorRate flips line
// bits at random; Slip makes a lane lose (or gain) a bit, as a receiver
// whose clock-data recovery slips does; the wrapper's gt_rxgearboxslip
// drops one bit from the lane's receiver, moving its block boundary.
//
// With a 32-bit interface (the 4-byte user interface, FibreConfig's
// UserBits) a block takes two cycles each way: a cycle's 32 bits follow
// the header in the first, and come alone in the second, as the
// asynchronous gearbox alternates from reset; the receiving side's
// header is valid every other cycle (RXHEADERVALID toggling), and after
// a slip it still alternates, wherever the block boundary now falls.
type Fibre struct {
	lanes []fibreLane
	rng   *rand.Rand
	ber   float64
	half  bool // the 32-bit interface
}

type fibreLane struct {
	bits []byte // the line, oldest first
	next int    // bits until the next error
	// txSecond, rxSecond: the next cycle is a block's second half (32-bit
	// interface).
	txSecond, rxSecond bool
}

// FibreConfig sets up a Fibre.
type FibreConfig struct {
	Lanes int
	// Skew is each lane's extra delay, in blocks (missing lanes: none).
	Skew []int
	// BitErrorRate is the chance a line bit is flipped.
	BitErrorRate float64
	// Seed seeds the offsets and errors.
	Seed uint64
	// UserBits is the interface's bits a lane a cycle: 64 (zero) or 32,
	// the wrapper's (Config.UserBits).
	UserBits int
}

// NewFibre makes a Fibre.
func NewFibre(c FibreConfig) *Fibre {
	f := &Fibre{rng: rand.New(rand.NewPCG(c.Seed, 0x6f6e6963)), ber: c.BitErrorRate, half: c.UserBits == 32}
	for l := range c.Lanes {
		n := f.rng.IntN(66)
		if l < len(c.Skew) {
			n += 66 * c.Skew[l]
		}
		ln := fibreLane{bits: make([]byte, n)}
		for i := range ln.bits {
			ln.bits[i] = byte(f.rng.IntN(2))
		}
		ln.next = f.gap()
		f.lanes = append(f.lanes, ln)
	}
	return f
}

// gap is how many bits go by before the next error.
func (f *Fibre) gap() int {
	if f.ber <= 0 {
		return -1
	}
	// Geometric, from one uniform draw.
	u := 1 - f.rng.Float64() // in (0, 1]
	return int(min(math.Log(u)/math.Log1p(-f.ber), 1<<30))
}

// Send puts one cycle's blocks on the lanes: data[l] and header[l] (2
// bits) for lane l (with the 32-bit interface, data[l]'s low 32 bits,
// and the header only in a block's first cycle).
func (f *Fibre) Send(data []uint64, header []uint8) {
	var line [66]byte
	for l := range f.lanes {
		ln := &f.lanes[l]
		blk := line[:0]
		if !f.half || !ln.txSecond {
			blk = append(blk, header[l]&1, header[l]>>1&1)
		}
		bits := 64
		if f.half {
			bits = 32
			ln.txSecond = !ln.txSecond
		}
		for i := range bits {
			blk = append(blk, byte(data[l]>>i&1))
		}
		for i := range blk {
			if ln.next == 0 {
				blk[i] ^= 1
				ln.next = f.gap()
			} else if ln.next > 0 {
				ln.next--
			}
		}
		ln.bits = append(ln.bits, blk...)
	}
}

// Receive takes one cycle's blocks off the lanes, after dropping a bit
// on each lane whose slip is set (the wrapper's gt_rxgearboxslip, from
// the cycle before): data, header and valid for each lane, and whether
// the header is valid (with the 64-bit interface, whenever the data is;
// with the 32-bit, in a block's first cycle, data the low 32 bits).
func (f *Fibre) Receive(slip []bool, data []uint64, header []uint8, valid, headerValid []bool) {
	for l := range f.lanes {
		ln := &f.lanes[l]
		if l < len(slip) && slip[l] && len(ln.bits) > 0 {
			ln.bits = ln.bits[1:]
		}
		hdr, bits := 2, 64
		if f.half {
			bits = 32
			if ln.rxSecond {
				hdr = 0
			}
		}
		if len(ln.bits) < hdr+bits {
			valid[l], headerValid[l], data[l], header[l] = false, false, 0, 0
			continue
		}
		valid[l], headerValid[l] = true, hdr > 0
		header[l] = 0
		if hdr > 0 {
			header[l] = ln.bits[0] | ln.bits[1]<<1
		}
		var d uint64
		for i := range bits {
			d |= uint64(ln.bits[hdr+i]) << i
		}
		data[l] = d
		ln.bits = ln.bits[hdr+bits:]
		if f.half {
			ln.rxSecond = !ln.rxSecond
		}
	}
}

// Slip makes lane l's line lose a bit (n < 0) or gain n random bits.
func (f *Fibre) Slip(l, n int) {
	ln := &f.lanes[l]
	if n < 0 {
		ln.bits = ln.bits[min(-n, len(ln.bits)):]
		return
	}
	for range n {
		ln.bits = append([]byte{byte(f.rng.IntN(2))}, ln.bits...)
	}
}
