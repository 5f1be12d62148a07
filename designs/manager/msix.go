package manager

import (
	"math/bits"

	"onic/designs/internal/tlphdr"
	"onic/hdlgen/ir"
)

// msix works out, in stage 3 (from stage 2's registers into t), what
// happens to a posted write into the MSI-X table of a stand-in with an
// MSI window, as pcie/manager.StandIn.MSI decides: whether the window
// cannot carry it (msixBad: an address DW outside it or written in part,
// a write across entries or into the table from outside it), and the
// payload DWs it leaves with (msixMask, msixDW0, msixDW1). Only the first
// two payload DWs can be address DWs, since a write that touches the
// table lies within one 16-byte entry. Without MSI windows it adds
// nothing.
func (p *pipe) msix(s2 beat, t *tlpState) {
	m := p.m
	var sis []int
	for i, si := range p.c.StandIns {
		if si.MSI != nil {
			sis = append(sis, i)
		}
	}
	if len(sis) == 0 {
		return
	}
	bit := func(k int) ir.Value { return m.Slice(t.kind, bits.TrailingZeros(uint(k)), 1) }
	write := m.Named("msix_posted_write", m.And(m.And(bit(kMemAtomic), bit(kData)), m.Not(bit(kNonPosted))))
	f := tlphdr.Decode(m, "s2_hdr", s2.Hdr)
	n := t.size // bytes, 13 bits
	dw0, dw1 := m.Slice(s2.Data, 0, 32), m.Slice(s2.Data, 32, 32)
	c := func(w int, v uint64) ir.Value { return m.Const(w, v) }
	be0OK := m.Eq(f.FirstBE, c(4, 0xF))
	be1OK := m.Or(m.Ne(n, c(13, 8)), m.Eq(f.LastBE, c(4, 0xF))) // the second DW is the last when the write is 8 bytes
	var bad, mask0, mask1 []ir.Value
	var sels, out0s, out1s []ir.Value
	for _, i := range sis {
		si := p.c.StandIns[i]
		bar, tOff, tEnd := si.Function.MSIXTable()
		size := si.BARs()[bar]
		aw := max(bits.Len64(size), 13) + 1 // offsets and offset plus length
		off := m.Zext(m.Slice(t.off, 0, max(1, bits.Len64(size-1))), aw)
		end := m.Add(off, m.Zext(n, aw))
		sel := m.And(write, m.And(m.Eq(s2.fn, c(2, uint64(i+1))), m.Eq(s2.Side, c(3, uint64(bar)))))
		inTable := m.And(sel, m.And(m.LtU(off, c(aw, tEnd)), m.LtU(c(aw, tOff), end)))
		rel := m.Sub(off, c(aw, tOff))
		// Within one entry: its offset in the entry plus its length at
		// most 16 (a write from before the table into it fails this too:
		// rel's low bits are then 16 less the bytes before the table).
		within := m.Not(m.LtU(c(14, 16), m.Add(m.Zext(m.Slice(rel, 0, 4), 14), m.Zext(n, 14))))
		first := m.Eq(m.Slice(rel, 2, 2), c(2, 0))             // the payload starts at the address's low DW
		a0 := m.Not(m.Slice(rel, 3, 1))                        // payload DW 0 is an address DW
		a1 := m.And(first, m.Not(m.LtU(n, c(13, 8))))          // and DW 1 too
		hi := m.Mux(first, dw1, dw0)                           // the address's high DW, where it is written
		loRel := m.Sub(dw0, c(32, si.MSI.HostBase&0xFFFFFFFF)) // (the low DW, where it is written: DW 0)
		loOK := m.LtU(m.Zext(loRel, 33), c(33, si.MSI.Size))
		hiOK := m.Eq(hi, c(32, si.MSI.HostBase>>32))
		hiNew := c(32, si.MSI.RemoteBase>>32)
		ok0 := m.Or(m.Not(a0), m.And(be0OK, m.Mux(first, loOK, hiOK)))
		ok1 := m.Or(m.Not(a1), m.And(be1OK, hiOK))
		bad = append(bad, m.And(inTable, m.Not(m.And(within, m.And(ok0, ok1)))))
		mask0, mask1 = append(mask0, m.And(inTable, a0)), append(mask1, m.And(inTable, a1))
		sels = append(sels, sel)
		out0s = append(out0s, m.Mux(first, m.Add(c(32, si.MSI.RemoteBase&0xFFFFFFFF), loRel), hiNew))
		out1s = append(out1s, hiNew)
	}
	t.msixBad = m.Named("msix_bad", m.Any(bad...))
	t.msixMask = m.Named("msix_mask", m.Concat(m.Any(mask1...), m.Any(mask0...)))
	t.msixDW0 = m.Named("msix_dw0", m.Pick(sels, out0s))
	t.msixDW1 = m.Named("msix_dw1", m.Pick(sels, out1s))
}
