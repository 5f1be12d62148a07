// Package axil builds AXI4-Lite register slaves in the hdlgen IR: the
// handshakes, once, for every block that has registers (kernels, the task
// shell around them).
//
// The slave takes a write when its address and data are both offered and
// no write response is waiting (AWREADY and WREADY rise together, in the
// cycle the write happens), answers OKAY a cycle later, and takes a read
// address when no read data is waiting; the data of a read is on RDATA
// from the next cycle until the master takes it. Data is 32 bits; the
// address has as many bits as the block decodes.
package axil

import (
	"onic/hdlgen/ir"
)

// Slave is an AXI4-Lite slave interface on a module: ports s_axil_*.
type Slave struct {
	m *ir.Module
	// Write is 1 in a cycle a write is taken, with its byte address,
	// data and byte strobes.
	Write, WAddr, WData, WStrb ir.Value
	// Read is 1 in a cycle a read address is taken; RAddr is it.
	Read, RAddr ir.Value
}

// New adds an AXI4-Lite slave with addrBits of byte address to m: inputs
// s_axil_awaddr, awvalid, wdata, wstrb, wvalid, bready, araddr, arvalid,
// rready and the matching outputs. Call Reply once with the read data.
func New(m *ir.Module, addrBits int) *Slave {
	s := &Slave{m: m}
	awaddr, awvalid := m.Input("s_axil_awaddr", addrBits), m.Input("s_axil_awvalid", 1)
	wdata, wstrb, wvalid := m.Input("s_axil_wdata", 32), m.Input("s_axil_wstrb", 4), m.Input("s_axil_wvalid", 1)
	bready := m.Input("s_axil_bready", 1)
	bvalid := m.Reg("axil_bvalid", 1, 0)
	s.Write = m.And(m.And(awvalid, wvalid), m.Not(bvalid))
	m.Output("s_axil_awready", s.Write)
	m.Output("s_axil_wready", s.Write)
	m.SetNext(bvalid, m.Mux(s.Write, m.Const(1, 1), m.And(bvalid, m.Not(bready))))
	m.Output("s_axil_bvalid", bvalid)
	m.Output("s_axil_bresp", m.Const(2, 0))
	s.WAddr, s.WData, s.WStrb = awaddr, wdata, wstrb

	araddr, arvalid, rready := m.Input("s_axil_araddr", addrBits), m.Input("s_axil_arvalid", 1), m.Input("s_axil_rready", 1)
	rvalid := m.Reg("axil_rvalid", 1, 0)
	s.Read = m.And(arvalid, m.Not(rvalid))
	m.Output("s_axil_arready", m.Not(rvalid))
	m.SetNext(rvalid, m.Mux(s.Read, m.Const(1, 1), m.And(rvalid, m.Not(rready))))
	m.Output("s_axil_rvalid", rvalid)
	m.Output("s_axil_rresp", m.Const(2, 0))
	s.RAddr = araddr
	return s
}

// At is 1 when byte address addr (WAddr or RAddr) names the 32-bit
// register at byte offset off.
func (s *Slave) At(addr ir.Value, off uint32) ir.Value {
	w := addr.Width() - 2
	return s.m.Eq(s.m.Slice(addr, 2, w), s.m.Const(w, uint64(off>>2)))
}

// Written is 1 in a cycle a write to the register at off is taken with
// its low byte strobed (registers here take whole-word writes).
func (s *Slave) Written(off uint32) ir.Value {
	return s.m.And(s.m.And(s.Write, s.At(s.WAddr, off)), s.m.Slice(s.WStrb, 0, 1))
}

// Hold registers v, computed from RAddr, in the cycle a read is taken:
// the read data of a plain register file.
func (s *Slave) Hold(name string, v ir.Value) ir.Value {
	r := s.m.Reg(name, v.Width(), 0)
	s.m.SetNext(r, v)
	s.m.SetEnable(r, s.Read)
	return r
}

// Reply drives RDATA with v (32 bits), which must hold the data of the
// read taken in the cycle before it is valid (Hold does that).
func (s *Slave) Reply(v ir.Value) {
	s.m.Output("s_axil_rdata", v)
}
