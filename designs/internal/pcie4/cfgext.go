package pcie4

import (
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
)

// CfgExtModule is the user side of the block's configuration extend
// interface (onic_pcie4_cfg_ext; PG213, "Configuration Extend
// Interface"): it answers configuration reads of the user extended space,
// Dwords pg213.ExtFirstReg onward (bytes 0x480-0x4FF), with words, what
// pg213.UserExtended gives for the O-NIC's function (its description
// capability). A read the block hands over on cfg_ext_read_received is
// answered on the next cycle with cfg_ext_read_data and a one-cycle
// cfg_ext_read_data_valid when its Dword is in that space, and not at all
// otherwise, as the guide requires: the block answers the rest itself.
// The space is read-only; the block's writes to it are ignored, so its
// write ports are not used.
func CfgExtModule(words [pg213.ExtRegs]uint32) *ir.Module {
	return CfgExtModuleIn(pg213.ExtPCIE4, words[:])
}

// CfgExtModuleIn is CfgExtModule for the user extended space sp (the
// PCIE4C's, on the HBM parts), serving words from sp.FirstReg on and
// zeros in the rest of the space.
func CfgExtModuleIn(sp pg213.ExtSpace, words []uint32) *ir.Module {
	m := ir.NewModule("onic_pcie4_cfg_ext")
	m.Describe("cfg_ext_", "PG213's user extended configuration interface: reads of Dwords from pg213.ExtFirstReg on, answered the next cycle with the O-NIC's description capability.")
	received := m.Input("cfg_ext_read_received", 1)
	reg := m.Input("cfg_ext_register_number", 10)
	var inSpace, index ir.Value
	ib := ir.AddrBits(sp.Regs)
	if sp.Regs == 32 && sp.FirstReg%32 == 0 {
		// reg in [0x120, 0x13F]: its top five bits are 0x120 >> 5 = 0b01001.
		inSpace = m.Named("in_user_space", m.Eq(m.Slice(reg, 5, 5), m.Const(5, uint64(sp.FirstReg>>5))))
		index = m.Slice(reg, 0, 5)
	} else {
		wide := m.Zext(reg, 11)
		inSpace = m.Named("in_user_space", m.And(m.Not(m.LtU(wide, m.Const(11, uint64(sp.FirstReg)))),
			m.LtU(wide, m.Const(11, uint64(sp.FirstReg+sp.Regs)))))
		index = m.Named("user_dword", m.Slice(m.Sub(wide, m.Const(11, uint64(sp.FirstReg))), 0, ib))
	}
	rom := make([]uint64, 1<<ib)
	for i, w := range words {
		rom[i] = uint64(w)
	}
	word := m.Named("word", m.ROM(index, 32, rom))
	valid := m.Reg("read_data_valid", 1, 0)
	m.SetNext(valid, m.And(received, inSpace))
	data := m.Reg("read_data", 32, 0)
	m.SetNext(data, word)
	m.SetEnable(data, received)
	m.Output("cfg_ext_read_data", data)
	m.Output("cfg_ext_read_data_valid", valid)
	return m
}
