package kernels

import (
	"fmt"
	"math/rand/v2"

	"onic/hdlgen/axil"
	"onic/hdlgen/ir"
)

// HistSpec says what a histogram kernel counts: in a stream of
// fixed-size records, an unsigned little-endian field, whose bits
// [Shift+log2(Bins)-1 : Shift] pick the bin.
type HistSpec struct {
	Field
	Shift int // the bin is the field shifted right by Shift...
	Bins  int // ...modulo Bins (a power of two from 2 to 1024)
}

// The histogram kernel's AXI-Lite registers (byte addresses).
const (
	HistCtrl    = 0x000 // write 1 to bit 0: clear every bin (takes Bins cycles; reads 0)
	HistStatus  = 0x004 // [0] clearing (the kernel takes no beats meanwhile)
	HistRecords = 0x008 // records counted since the last clear (wraps at 2^32)
	HistBins    = 0x00C // the number of bins
	HistBin0    = 0x400 // bin i's count at HistBin0 + 4*i (wraps at 2^32)
)

// Histogram makes a kernel that counts, per bin, the whole records of a
// byte stream (beats of beat bytes) and passes the stream through
// unchanged: a tap to put in front of anything. The counts live in one
// block RAM per record lane of the beat (so every record of a beat is
// counted in the cycle it arrives, with a read-modify-write pipeline that
// forwards the previous write to a repeated bin) and are read over
// AXI-Lite as their sum. The bins are cleared after reset and on a write
// to HistCtrl, a bin per cycle, while the kernel holds its input.
func Histogram(spec HistSpec, beat int) (*Kernel, error) {
	name := "histogram"
	ab := ir.AddrBits(spec.Bins)
	if err := spec.Field.check(beat); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	switch {
	case spec.Bins < 2 || spec.Bins > 1024 || spec.Bins&(spec.Bins-1) != 0:
		return nil, fmt.Errorf("kernel %s: bins: %d (a power of two from 2 to 1024)", name, spec.Bins)
	case spec.Shift < 0 || spec.Shift+ab > 8*spec.Width:
		return nil, fmt.Errorf("kernel %s: shift: bits %d to %d are outside a %d-byte field", name, spec.Shift+ab-1, spec.Shift, spec.Width)
	}
	bin := func(rec []byte) int {
		return int(spec.get(rec) >> spec.Shift & uint64(spec.Bins-1))
	}
	return &Kernel{Name: name, Version: "1.0.0",
		Doc: fmt.Sprintf("count %d-byte records into %d bins by bits %d..%d of the %d-byte field at %d (read over AXI-Lite); data passes through",
			spec.Record, spec.Bins, spec.Shift+ab-1, spec.Shift, spec.Width, spec.Offset),
		Params: []Param{{"record", fmt.Sprint(spec.Record)}, {"offset", fmt.Sprint(spec.Offset)}, {"width", fmt.Sprint(spec.Width)},
			{"shift", fmt.Sprint(spec.Shift)}, {"bins", fmt.Sprint(spec.Bins)}, {"beat_bytes", fmt.Sprint(beat)}},
		In: U8, Lanes: beat, Inputs: 1,
		Body: func(s *Step) { histBody(s, spec, beat) },
		RefPacket: func(in [][]byte) ([]byte, error) {
			return append([]byte{}, in[0]...), nil
		},
		RefRegs: func(in [][]byte) (map[uint32]uint32, error) {
			regs := map[uint32]uint32{HistStatus: 0, HistRecords: 0, HistBins: uint32(spec.Bins)}
			for i := range spec.Bins {
				regs[HistBin0+4*uint32(i)] = 0
			}
			p := in[0]
			for off := 0; off+spec.Record <= len(p); off += spec.Record {
				regs[HistBin0+4*uint32(bin(p[off:off+spec.Record]))]++
				regs[HistRecords]++
			}
			return regs, nil
		},
		Sample: func(rng *rand.Rand, n int) [][]byte {
			// Runs of records in the same bin (the forwarding case) and
			// records spread over a few bins.
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			favourite := rng.Uint64()
			for off := 0; off+spec.Record <= n; off += spec.Record {
				if rng.IntN(2) == 0 {
					f := putLE(nil, favourite+uint64(rng.IntN(2))<<spec.Shift, 8)
					copy(p[off+spec.Offset:off+spec.Offset+spec.Width], f)
				}
			}
			return [][]byte{p}
		},
	}, nil
}

// histBody builds the histogram: a clear sweep, a counting pipeline per
// record lane, and the AXI-Lite slave.
func histBody(s *Step, spec HistSpec, beat int) {
	m, in := s.M, s.In[0]
	ab := ir.AddrBits(spec.Bins)
	lanes := beat / spec.Record

	// AXI-Lite: a write to CTRL clears; reads return the bins and status.
	lite := axil.New(m, 12)
	clearReq := m.And(lite.Written(HistCtrl), m.Slice(lite.WData, 0, 1))

	// The clear sweep, from reset on.
	clearing := m.Reg("clearing", 1, 1)
	idx := m.Reg("clear_index", ab, 0)
	done := m.Eq(idx, m.Const(ab, uint64(spec.Bins-1)))
	m.SetNext(clearing, m.Or(clearReq, m.And(clearing, m.Not(done))))
	m.SetNext(idx, m.Mux(clearReq, m.Const(ab, 0), m.Mux(clearing, m.Add(idx, m.Const(ab, 1)), idx)))
	s.Hold = clearing

	rAccept, araddr := lite.Read, lite.RAddr
	readBin := m.Eq(m.Slice(araddr, 10, 2), m.Const(2, HistBin0>>10))
	binAddr := m.Slice(araddr, 2, ab)

	records := m.Reg("records", 32, 0)
	counted := m.Const(32, 0)
	sum := m.Const(32, 0)
	for r := range lanes {
		base := r * spec.Record
		field := m.Slice(in.Data, 8*(base+spec.Offset), 8*spec.Width)
		b0 := m.Slice(field, spec.Shift, ab)
		v0 := m.And(s.Next(), m.Slice(in.Keep, base+spec.Record-1, 1)) // a whole record taken
		counted = m.Add(counted, m.Zext(v0, 32))
		mem := m.Memory(fmt.Sprintf("bins%d", r), spec.Bins, 32)
		rd := m.ReadPort(mem, b0, m.Const(1, 1)) // the count of b1, next cycle
		b1 := m.Reg(fmt.Sprintf("bin%d", r), ab, 0)
		v1 := m.Reg(fmt.Sprintf("count%d", r), 1, 0)
		m.SetNext(b1, b0)
		m.SetNext(v1, v0)
		// The previous write, for a bin counted twice in a row (the read
		// above could not see it: reads are read-first).
		wb := m.Reg(fmt.Sprintf("wrote_bin%d", r), ab, 0)
		wv := m.Reg(fmt.Sprintf("wrote%d", r), 1, 0)
		wd := m.Reg(fmt.Sprintf("wrote_count%d", r), 32, 0)
		cur := m.Mux(m.And(wv, m.Eq(wb, b1)), wd, rd)
		next := m.Add(cur, m.Const(32, 1))
		m.SetNext(wb, b1)
		m.SetNext(wv, m.And(v1, m.Not(clearing)))
		m.SetNext(wd, next)
		m.WritePort(mem, m.Mux(clearing, idx, b1), m.Mux(clearing, m.Const(32, 0), next), m.Or(clearing, v1), ir.Value{})
		sum = m.Add(sum, m.ReadPort(mem, binAddr, m.And(rAccept, readBin)))
	}
	m.SetNext(records, m.Mux(clearing, m.Const(32, 0), m.Add(records, counted)))

	regSel := lite.Hold("axil_read_bin", readBin)
	regVal := lite.Hold("axil_reg", m.Pick(
		[]ir.Value{lite.At(araddr, HistStatus), lite.At(araddr, HistRecords), lite.At(araddr, HistBins)},
		[]ir.Value{m.Zext(clearing, 32), records, m.Const(32, uint64(spec.Bins))}))
	lite.Reply(m.Mux(regSel, sum, regVal))

	s.Out = in
}
