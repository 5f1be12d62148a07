// Package pcie4 builds the adapter between AMD's UltraScale+ integrated
// block for PCI Express (PCIE4, product guide PG213) and the PCIe
// manager's generic TLP streams, in hdlgen/ir. It is held to the Go model
// of the block's interface in pcie/pg213.
//
// So far it has the completer request side: CQ packets (a 16-byte
// descriptor, then the payload, on a 512-bit AXI4-Stream with straddling
// off, as for Gen3 x16 at 250 MHz) become the manager's s_host_tlp_*
// stream (a 128-bit header, the payload from byte 0 of the first beat, a
// keep bit per DW, the BAR the block matched and the physical function
// it matched it for).
package pcie4

import (
	"onic/designs/internal/realign"
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/pcie/pg213"
	"onic/tlp"
)

// The descriptor's fields are pcie/pg213's table (pg213.ReqAT, ...);
// these are the adapters' own sizes.
const (
	funcW     = 2   // the target function's low bits: the block's physical functions 0-3
	TUserBits = 183 // m_axis_cq_tuser's width on the 512-bit interface
	dataBits  = 512
	descBits  = 128
	keepBits  = dataBits / 32
	descDWs   = descBits / 32
	hdrBits   = 128
)

// requestTypes are the CQ and RQ request types the adapters convert
// (pg213.RequestKinds: PG213's request type encodings) with the TLP Type
// field of each and whether it carries data, from the tlp package's
// Fmt/Type table (PCIe Base Specification Table 2-3), in code order.
var requestTypes = func() []struct {
	code, typ uint64
	data      bool
} {
	var rs []struct {
		code, typ uint64
		data      bool
	}
	for code := range uint64(1) << pg213.ReqType.W {
		k, ok := pg213.RequestKind(code)
		if !ok {
			continue
		}
		_, typ, ok := tlp.FmtType(k, false, 0)
		if !ok {
			panic("pcie4: no Type for " + k.String()) // every request kind has one
		}
		rs = append(rs, struct {
			code, typ uint64
			data      bool
		}{code, uint64(typ), k.HasData()})
	}
	return rs
}()

// CQ builds the completer request adapter into m: ports m_axis_cq_*
// toward the block (with the block's own names, so it connects to the IP
// instance by name) and tlp_* toward the manager (tlp_func: the
// descriptor's target function, 0 for the O-NIC and 1-3 for the
// stand-ins of lent devices). Packets take a beat a cycle, back to back
// (a packet's last bytes, when they need a beat of their own, leave as
// the next packet's first beat comes in), and each output beat is the
// previous input beat's last 48 bytes and the next one's first 16.
func CQ(m *ir.Module) {
	m.Describe("m_axis_cq_", "From the PCIe block: completer requests (PG213 CQ), a 16-byte descriptor then the payload, 512 bits, straddling off.")
	m.Describe("tlp_", "To the manager: the requests as TLPs, a 128-bit header (DW0 in the top bits), the payload from byte 0 of the first beat, a keep bit per DW; sop and eop frame a TLP; func and bar are the physical function and BAR the block matched.")
	data := m.Input("m_axis_cq_tdata", dataBits)
	user := m.Input("m_axis_cq_tuser", TUserBits)
	last := m.Input("m_axis_cq_tlast", 1)
	keep := m.Input("m_axis_cq_tkeep", keepBits)
	valid := m.Input("m_axis_cq_tvalid", 1)
	inReady := m.Wire("cq_ready", 1)
	m.Output("m_axis_cq_tready", inReady)

	// The header of the packet whose descriptor is on the bus.
	desc := m.Named("cq_desc", m.Slice(data, 0, descBits))
	fieldOf := func(f pg213.Field) ir.Value { return field(m, desc, f) }
	rt := m.Named("cq_request_type", fieldOf(pg213.ReqType))
	typTab, dataTab := make([]uint64, 1<<pg213.ReqType.W), make([]uint64, 1<<pg213.ReqType.W) // by request type
	for _, t := range requestTypes {
		typTab[t.code], dataTab[t.code] = t.typ, b2u(t.data)
	}
	addr := m.Named("cq_addr", m.Concat(fieldOf(pg213.ReqAddress), m.Const(2, 0)))
	fourDW := m.Named("cq_4dw", m.RedOr(m.Slice(addr, 32, 32)))
	hasData := m.Named("cq_has_data", m.ROM(rt, 1, dataTab))
	attr := fieldOf(pg213.ReqAttr)
	// The request's header, by the TLP field table, in the 4-DW form for
	// an address above 4 GiB and the 3-DW form below (§2.2.4.1). The two
	// differ only in their last two DWs: the 3-DW form's DW2 is the
	// address's low DW (its two low bits, the processing hint, zero) and
	// its DW3 is not sent, so both are the 4-DW layout of one value.
	lastDWs := m.Named("cq_addr_dws", m.Mux(fourDW, addr, m.Concat(m.Slice(addr, 0, 32), m.Const(32, 0))))
	hdr := m.Named("cq_hdr", tlphdr.Compose(m, hdrBits, tlp.ClassMemory, tlp.Fmt4DW,
		tlphdr.Set{Name: "fmt", V: m.Concat(m.Const(1, 0), hasData, fourDW)}, tlphdr.Set{Name: "type", V: m.Named("cq_type", m.ROM(rt, 5, typTab))},
		tlphdr.Set{Name: "tc", V: fieldOf(pg213.ReqTC)}, tlphdr.Set{Name: "attr", V: attr}, tlphdr.Set{Name: "at", V: fieldOf(pg213.ReqAT)},
		tlphdr.Set{Name: "length", V: m.Slice(fieldOf(pg213.ReqDWCount), 0, 10)}, // 1024 is 0
		tlphdr.Set{Name: "requester_id", V: fieldOf(pg213.ReqRequesterID)}, tlphdr.Set{Name: "tag", V: m.Zext(fieldOf(pg213.ReqTag), 10)},
		tlphdr.Set{Name: "last_be", V: field(m, user, pg213.UserLastBE)}, tlphdr.Set{Name: "first_be", V: field(m, user, pg213.UserFirstBE)},
		tlphdr.Set{Name: "address", V: lastDWs}))

	out := realign.Strip(m, realign.Beats{Data: data, Keep: keep, Valid: valid, Ready: inReady}, last, []axis.Field{{Name: "hdr", Value: hdr},
		{Name: "func", Value: m.Slice(fieldOf(pg213.ReqTargetFn), 0, funcW)}, {Name: "bar", Value: fieldOf(pg213.ReqBARID)}}, descDWs)
	realign.Outputs(m, out, "tlp_", "hdr", "func", "bar", "data", "keep", "sop", "eop")
	m.Output("tlp_valid", out.Valid)
	m.Assign(out.Ready, m.Input("tlp_ready", 1))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
