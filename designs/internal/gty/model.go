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
type Fibre struct {
	lanes []fibreLane
	rng   *rand.Rand
	ber   float64
}

type fibreLane struct {
	bits []byte // the line, oldest first
	next int    // bits until the next error
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
}

// NewFibre makes a Fibre.
func NewFibre(c FibreConfig) *Fibre {
	f := &Fibre{rng: rand.New(rand.NewPCG(c.Seed, 0x6f6e6963)), ber: c.BitErrorRate}
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
// bits) for lane l.
func (f *Fibre) Send(data []uint64, header []uint8) {
	for l := range f.lanes {
		ln := &f.lanes[l]
		var blk [66]byte
		blk[0], blk[1] = header[l]&1, header[l]>>1&1
		for i := range 64 {
			blk[2+i] = byte(data[l] >> i & 1)
		}
		for i := range blk {
			if ln.next == 0 {
				blk[i] ^= 1
				ln.next = f.gap()
			} else if ln.next > 0 {
				ln.next--
			}
		}
		ln.bits = append(ln.bits, blk[:]...)
	}
}

// Receive takes one cycle's blocks off the lanes, after dropping a bit
// on each lane whose slip is set (the wrapper's gt_rxgearboxslip, from
// the cycle before): data, header and valid for each lane.
func (f *Fibre) Receive(slip []bool, data []uint64, header []uint8, valid []bool) {
	for l := range f.lanes {
		ln := &f.lanes[l]
		if l < len(slip) && slip[l] && len(ln.bits) > 0 {
			ln.bits = ln.bits[1:]
		}
		if len(ln.bits) < 66 {
			valid[l], data[l], header[l] = false, 0, 0
			continue
		}
		valid[l] = true
		header[l] = ln.bits[0] | ln.bits[1]<<1
		var d uint64
		for i := range 64 {
			d |= uint64(ln.bits[2+i]) << i
		}
		data[l] = d
		ln.bits = ln.bits[66:]
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
