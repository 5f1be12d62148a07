package gty

import (
	"fmt"

	"onic/hdlgen/sim"
)

// Word is a lane-interface word as the link layer sends and receives it.
type Word struct {
	Data       [WordBits / 64]uint64
	Ctl, Valid bool
}

// Path is one direction of an optical port over lanes, cycle-simulated:
// the sender's transmit module, the transceivers and fibre (a Fibre),
// and the receiver's receive module, on one clock. Tests of the wrapper
// and of the link layer over it drive it a cycle at a time.
type Path struct {
	tx, rx *sim.Sim
	fibre  *Fibre
	n      int
	bits   int // the interface's bits a lane a cycle (Config.UserBits)
	slip   []bool
	// scratch, a cycle's lane blocks and headers
	data, rdata    []uint64
	hdr, rhdr      []uint8
	rvalid, rhdrOK []bool
}

// NewPath builds a Path for wrapper c over a fibre fc, both modules out
// of reset with their transceivers ready.
func NewPath(c Config, fc FibreConfig) (*Path, error) {
	txm, err := TX(c)
	if err != nil {
		return nil, err
	}
	rxm, err := RX(c)
	if err != nil {
		return nil, err
	}
	fc.UserBits = c.UserBits()
	p := &Path{fibre: NewFibre(fc), n: c.Lanes, bits: c.UserBits(), slip: make([]bool, c.Lanes),
		data: make([]uint64, c.Lanes), rdata: make([]uint64, c.Lanes), hdr: make([]uint8, c.Lanes),
		rhdr: make([]uint8, c.Lanes), rvalid: make([]bool, c.Lanes), rhdrOK: make([]bool, c.Lanes)}
	if p.tx, err = sim.New(txm); err != nil {
		return nil, err
	}
	if p.rx, err = sim.New(rxm); err != nil {
		return nil, err
	}
	for _, s := range []*sim.Sim{p.tx, p.rx} {
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
		if err := s.Set("gt_ready", 1); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Fibre is the path's transceiver and fibre model (to slip a lane).
func (p *Path) Fibre() *Fibre { return p.fibre }

// Get reads one of the receive module's outputs (phy_up, realigns,
// lanes_locked, ...).
func (p *Path) Get(name string) uint64 {
	v, err := p.rx.Get(name)
	if err != nil {
		panic(fmt.Sprintf("gty: receive module: %v", err)) // a test's typo
	}
	return v
}

func words(s *sim.Sim, name string) []uint64 {
	v, err := s.GetWords(name)
	if err != nil {
		panic(fmt.Sprintf("gty: %v", err))
	}
	return v
}

// Ready says whether the sender's wrapper takes a word this cycle.
func (p *Path) Ready() bool {
	p.tx.Settle()
	return words(p.tx, "tx_ready")[0] == 1
}

// Received is what the receiver's wrapper delivers this cycle, and
// whether its lanes are bonded.
func (p *Path) Received() (Word, bool) {
	var w Word
	copy(w.Data[:], words(p.rx, "rx_data"))
	w.Ctl = words(p.rx, "rx_ctl")[0] == 1
	w.Valid = words(p.rx, "rx_valid")[0] == 1
	return w, words(p.rx, "phy_up")[0] == 1
}

// Step offers w to the sender's wrapper (taken if w.Valid and Ready),
// carries the cycle's blocks over the fibre, applies the receiver's
// gearbox slips, and clocks both modules.
func (p *Path) Step(w Word) {
	p.tx.SetWords("tx_data", w.Data[:])
	p.tx.Set("tx_ctl", b2u(w.Ctl))
	p.tx.Set("tx_valid", b2u(w.Valid))
	p.tx.Settle()
	txd, txh := words(p.tx, "gt_txdata"), words(p.tx, "gt_txheader")
	for l := range p.n {
		p.data[l] = field(txd, l*p.bits, p.bits)
		p.hdr[l] = uint8(field(txh, 6*l, 2))
	}
	p.fibre.Send(p.data, p.hdr)
	p.fibre.Receive(p.slip, p.rdata, p.rhdr, p.rvalid, p.rhdrOK)
	dw, hw := make([]uint64, (p.bits*p.n+63)/64), make([]uint64, (6*p.n+63)/64)
	var dv, hv uint64
	for l := range p.n {
		dw[l*p.bits/64] |= p.rdata[l] << (l * p.bits % 64)
		hw[6*l/64] |= uint64(p.rhdr[l]) << (6 * l % 64)
		if p.rvalid[l] {
			dv |= 3 << (2 * l)
		}
		if p.rhdrOK[l] {
			hv |= 3 << (2 * l)
		}
	}
	p.rx.SetWords("gt_rxdata", dw)
	p.rx.SetWords("gt_rxheader", hw)
	p.rx.Set("gt_rxdatavalid", dv)
	p.rx.Set("gt_rxheadervalid", hv)
	p.rx.Settle()
	slips := words(p.rx, "gt_rxgearboxslip")[0]
	for l := range p.n {
		p.slip[l] = slips>>l&1 == 1
	}
	p.tx.Step()
	p.rx.Step()
}

// field is bits lo to lo+w-1 (w at most 64, not crossing a word unless
// w is 64 and lo a multiple of it) of a value held in words.
func field(ws []uint64, lo, w int) uint64 {
	v := ws[lo/64] >> (lo % 64)
	if w == 64 {
		return v
	}
	return v & (1<<w - 1)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
