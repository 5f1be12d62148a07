package axil

import "onic/hdlgen/ir"

// Bus is what an AXI4-Lite master drives: the signals a slave takes in.
type Bus struct {
	AWAddr, AWValid, WData, WStrb, WValid, BReady, ARAddr, ARValid, RReady ir.Value
}

// Inputs is the bus on m's inputs prefix* (s_axil_ for a slave), with
// addrBits of byte address.
func Inputs(m *ir.Module, prefix string, addrBits int) Bus {
	return Bus{
		AWAddr: m.Input(prefix+"awaddr", addrBits), AWValid: m.Input(prefix+"awvalid", 1),
		WData: m.Input(prefix+"wdata", 32), WStrb: m.Input(prefix+"wstrb", 4), WValid: m.Input(prefix+"wvalid", 1),
		BReady: m.Input(prefix+"bready", 1),
		ARAddr: m.Input(prefix+"araddr", addrBits), ARValid: m.Input(prefix+"arvalid", 1), RReady: m.Input(prefix+"rready", 1),
	}
}

// BusOf is the bus an instance drives on its outputs prefix* (m_axil_
// for a master).
func BusOf(out map[string]ir.Value, prefix string) Bus {
	return Bus{out[prefix+"awaddr"], out[prefix+"awvalid"], out[prefix+"wdata"], out[prefix+"wstrb"], out[prefix+"wvalid"],
		out[prefix+"bready"], out[prefix+"araddr"], out[prefix+"arvalid"], out[prefix+"rready"]}
}

// Select is b as one of several slaves sees it: its writes while selW is
// 1, its reads while selR is 1 (the valids and readies masked), with
// addresses through addr (nil: unchanged). Routing by address like this
// needs a master that offers one access at a time and holds its address
// until the answer (the O-NIC's register block does): the address that
// chose the slave then also chooses whose answer goes back (Choose).
func (b Bus) Select(m *ir.Module, selW, selR ir.Value, addr func(ir.Value) ir.Value) Bus {
	s := b
	s.AWValid, s.WValid, s.BReady = m.And(b.AWValid, selW), m.And(b.WValid, selW), m.And(b.BReady, selW)
	s.ARValid, s.RReady = m.And(b.ARValid, selR), m.And(b.RReady, selR)
	if addr != nil {
		s.AWAddr, s.ARAddr = addr(b.AWAddr), addr(b.ARAddr)
	}
	return s
}

// Into drives an instance's slave inputs prefix* from b.
func (b Bus) Into(in map[string]ir.Value, prefix string) {
	in[prefix+"awaddr"], in[prefix+"awvalid"] = b.AWAddr, b.AWValid
	in[prefix+"wdata"], in[prefix+"wstrb"], in[prefix+"wvalid"], in[prefix+"bready"] = b.WData, b.WStrb, b.WValid, b.BReady
	in[prefix+"araddr"], in[prefix+"arvalid"], in[prefix+"rready"] = b.ARAddr, b.ARValid, b.RReady
}

// Answer is what an AXI4-Lite slave drives.
type Answer struct {
	AWReady, WReady, BValid, BResp, ARReady, RValid, RData, RResp ir.Value
}

// AnswerOf is the answer on an instance's outputs prefix* (s_axil_ for a
// slave).
func AnswerOf(out map[string]ir.Value, prefix string) Answer {
	return Answer{out[prefix+"awready"], out[prefix+"wready"], out[prefix+"bvalid"], out[prefix+"bresp"],
		out[prefix+"arready"], out[prefix+"rvalid"], out[prefix+"rdata"], out[prefix+"rresp"]}
}

// Zero answers b with a slave that has nothing behind it: writes are
// taken and answered OKAY, reads return 0, with the handshakes of New.
func (b Bus) Zero(m *ir.Module, name string) Answer {
	bvalid, rvalid := m.Reg(name+"_bvalid", 1, 0), m.Reg(name+"_rvalid", 1, 0)
	write := m.Named(name+"_write", m.And(m.And(b.AWValid, b.WValid), m.Not(bvalid)))
	m.SetNext(bvalid, m.Mux(write, m.Const(1, 1), m.And(bvalid, m.Not(b.BReady))))
	idle := m.Named(name+"_read_idle", m.Not(rvalid))
	read := m.And(b.ARValid, idle)
	m.SetNext(rvalid, m.Mux(read, m.Const(1, 1), m.And(rvalid, m.Not(b.RReady))))
	return Answer{write, write, bvalid, m.Const(2, 0), idle, rvalid, m.Const(32, 0), m.Const(2, 0)}
}

// Choose is the answer of the slave whose selW (for the write signals)
// or selR (for the read signals) is 1; at most one of each may be.
func Choose(m *ir.Module, selW, selR []ir.Value, as []Answer) Answer {
	pick := func(sels []ir.Value, f func(Answer) ir.Value) ir.Value {
		vals := make([]ir.Value, len(as))
		for i, a := range as {
			vals[i] = f(a)
		}
		return m.Pick(sels, vals)
	}
	return Answer{
		pick(selW, func(a Answer) ir.Value { return a.AWReady }), pick(selW, func(a Answer) ir.Value { return a.WReady }),
		pick(selW, func(a Answer) ir.Value { return a.BValid }), pick(selW, func(a Answer) ir.Value { return a.BResp }),
		pick(selR, func(a Answer) ir.Value { return a.ARReady }), pick(selR, func(a Answer) ir.Value { return a.RValid }),
		pick(selR, func(a Answer) ir.Value { return a.RData }), pick(selR, func(a Answer) ir.Value { return a.RResp }),
	}
}

// Into drives an instance's master inputs prefix* (m_axil_ for a
// master) from a.
func (a Answer) Into(in map[string]ir.Value, prefix string) {
	in[prefix+"awready"], in[prefix+"wready"], in[prefix+"bvalid"], in[prefix+"bresp"] = a.AWReady, a.WReady, a.BValid, a.BResp
	in[prefix+"arready"], in[prefix+"rvalid"], in[prefix+"rdata"], in[prefix+"rresp"] = a.ARReady, a.RValid, a.RData, a.RResp
}

// Outputs drives m's outputs prefix* (s_axil_ for a slave) with a.
func (a Answer) Outputs(m *ir.Module, prefix string) {
	m.Output(prefix+"awready", a.AWReady)
	m.Output(prefix+"wready", a.WReady)
	m.Output(prefix+"bvalid", a.BValid)
	m.Output(prefix+"bresp", a.BResp)
	m.Output(prefix+"arready", a.ARReady)
	m.Output(prefix+"rvalid", a.RValid)
	m.Output(prefix+"rdata", a.RData)
	m.Output(prefix+"rresp", a.RResp)
}
