// Package access builds the O-NIC's security check in hdlgen/ir from the
// same checked tables the emulator's manager uses (pcie/acl): which
// domain a requester ID belongs to, whether that domain may use the
// egress, and whether the whole access lies in one of its ranges with the
// rights the access needs (read, write, or both for an AtomicOp) — in a configured range or in one of the
// run-time rule slots software programs (acl.RuleSlot). The answer is an
// acl.Rule, so the hardware and the emulator can be compared verdict for
// verdict.
package access

import (
	"fmt"

	"onic/hdlgen/ir"
	"onic/pcie/acl"
)

// Verdict is the check's answer.
type Verdict struct {
	Rule   ir.Value // acl.Rule (3 bits): Allowed or why not
	Found  ir.Value // 1: the requester belongs to a domain
	Domain ir.Value // its index (16 bits), when found
}

// Slot is one run-time rule slot's registers as the check reads them
// (acl.RuleSlot): Enabled, Read and Write (1 bit each), Domain (16 bits),
// Page (52 bits: the base address over 4 KiB) and Pages (32 bits).
type Slot struct {
	Enabled, Read, Write, Domain, Page, Pages ir.Value
}

// Slot field widths.
const (
	domainBits = 16
	pageBits   = 52
	pagesBits  = 32
)

// Check builds the check of an access by req (16 bits), arriving from
// ingress (2 bits, an acl.Ingress), of size bytes (13 bits, 1 to 4096) at
// addr (64 bits), needing the rights op (2 bits, an acl.Op: bit 0 read,
// bit 1 write; 0 needs read), through the egress whose acl.EgressBit
// number is egressBit (5 bits), against ds (acl.ACL.Domains) and the rule
// slots. Domain contents are constants of the design; slots are
// registers software writes.
func Check(m *ir.Module, req, ingress, addr, size, op, egressBit ir.Value, ds []acl.Domain, slots []Slot) (Verdict, error) {
	if req.Width() != 16 || ingress.Width() != 2 || addr.Width() != 64 || size.Width() != 13 || op.Width() != 2 || egressBit.Width() != 5 {
		return Verdict{}, fmt.Errorf("access: want req 16, ingress 2, addr 64, size 13, op 2 and egress 5 bits")
	}
	for i, s := range slots {
		if s.Enabled.Width() != 1 || s.Read.Width() != 1 || s.Write.Width() != 1 || s.Domain.Width() != domainBits ||
			s.Page.Width() != pageBits || s.Pages.Width() != pagesBits {
			return Verdict{}, fmt.Errorf("access: slot %d: want enabled, read, write 1, domain 16, page 52 and pages 32 bits", i)
		}
	}
	if len(ds) > 0xFFFF {
		return Verdict{}, fmt.Errorf("access: %d domains do not fit a 16-bit index", len(ds))
	}
	one, zero := m.Const(1, 1), m.Const(1, 0)
	not := m.Not
	geU := func(a, b ir.Value) ir.Value { return not(m.LtU(a, b)) }
	last := m.Sub(m.Zext(size, 64), m.Const(64, 1)) // size-1

	found, index := zero, m.Const(16, 0)
	sourceOK, egressOK, inRange, canRead, canWrite := zero, zero, zero, zero, zero
	for di, d := range ds {
		in := zero
		for _, r := range d.Requesters {
			in = m.Or(in, m.And(geU(req, m.Const(16, uint64(r[0]))), geU(m.Const(16, uint64(r[1])), req)))
		}
		in = m.Named(fmt.Sprintf("domain%d_member", di), in)
		// The domain's egress mask, one bit per egress number, and its
		// ingress mask, one bit per ingress.
		eg := m.Slice(m.Named(fmt.Sprintf("domain%d_egress_mask", di), m.Shr(m.Const(32, uint64(d.Egress)), egressBit)), 0, 1)
		src := m.Slice(m.Named(fmt.Sprintf("domain%d_source_mask", di), m.Shr(m.Const(4, uint64(d.Ingress)), ingress)), 0, 1)
		hit, rd, wr := zero, zero, zero
		for si, s := range d.Spans {
			end := m.Const(64, s.End)
			// base <= addr < end, and the last byte before end.
			fits := m.Named(fmt.Sprintf("domain%d_span%d_fits", di, si), m.And(m.And(geU(addr, m.Const(64, s.Base)), m.LtU(addr, end)),
				geU(m.Sub(m.Sub(end, m.Const(64, 1)), addr), last)))
			hit = m.Or(hit, fits)
			if s.Read {
				rd = m.Or(rd, fits)
			}
			if s.Write {
				wr = m.Or(wr, fits)
			}
		}
		pick := func(cur, v ir.Value) ir.Value { return m.Mux(in, v, cur) }
		found = pick(found, one)
		index = pick(index, m.Const(16, uint64(di)))
		sourceOK, egressOK, inRange, canRead, canWrite = pick(sourceOK, src), pick(egressOK, eg), pick(inRange, hit), pick(canRead, rd), pick(canWrite, wr)
	}
	found, index = m.Named("domain_found", found), m.Named("domain_index", index)
	sourceOK, egressOK = m.Named("domain_source_ok", sourceOK), m.Named("domain_egress_ok", egressOK)
	// A slot holds the access when it is on, belongs to the requester's
	// domain, and addr-base < length and length-(addr-base) >= size.
	size64 := m.Zext(size, 64)
	for _, s := range slots {
		base := m.Concat(s.Page, m.Const(12, 0))
		n := m.Zext(m.Concat(s.Pages, m.Const(12, 0)), 64)
		off := m.Sub(addr, base)
		holds := m.And(m.And(s.Enabled, m.Eq(s.Domain, index)),
			m.And(geU(addr, base), m.And(m.LtU(off, n), geU(m.Sub(n, off), size64))))
		inRange = m.Or(inRange, holds)
		canRead = m.Or(canRead, m.And(holds, s.Read))
		canWrite = m.Or(canWrite, m.And(holds, s.Write))
	}
	rule := func(r acl.Rule) ir.Value { return m.Const(3, uint64(r)) }
	// As acl.Check: a missing write right first, then a missing read right.
	needWrite := m.Named("need_write", m.Slice(op, 1, 1))
	needRead := m.Named("need_read", m.Or(m.Slice(op, 0, 1), m.Not(needWrite)))
	inRange, canRead, canWrite = m.Named("in_range", inRange), m.Named("can_read", canRead), m.Named("can_write", canWrite)
	verdict := m.Named("verdict_rights", m.Mux(m.And(needRead, m.Named("read_missing", m.Not(canRead))), rule(acl.ReadDenied), rule(acl.Allowed)))
	verdict = m.Named("verdict_write", m.Mux(m.And(needWrite, m.Not(canWrite)), rule(acl.WriteDenied), verdict))
	verdict = m.Named("verdict_range", m.Mux(inRange, verdict, rule(acl.NoRange)))
	verdict = m.Named("verdict_egress", m.Mux(egressOK, verdict, rule(acl.EgressDenied)))
	verdict = m.Named("verdict_source", m.Mux(sourceOK, verdict, rule(acl.SourceInvalid)))
	verdict = m.Mux(found, verdict, rule(acl.NoDomain))
	return Verdict{Rule: verdict, Found: found, Domain: index}, nil
}

// Module is Check as a module of its own, named name, to be used through
// Instance: inputs req (16 bits), ingress (2), addr (64), size (13),
// op (2) and egress_bit (5), and with slots > 0 the slots packed, slot i in the i-th
// field of rule_en, rule_read, rule_write (1 bit each), rule_domain (16),
// rule_page (52) and rule_pages (32); outputs rule (3), found (1) and
// domain (16).
func Module(name string, ds []acl.Domain, slots int) (*ir.Module, error) {
	m := ir.NewModule(name)
	m.Describe("rule_", "The access rule slots' registers (ACL_*), a field per slot.")
	m.Describe("req", "The request to check: requester ID, ingress (0 host, 1 port A, 2 port B), address, size in bytes, operation (pcie/acl.Op) and the egress's bit in the domains' egress masks.")
	m.Describe("rule", "The verdict (pcie/acl.Rule: 0 allowed), whether a domain held the requester, and which.")
	var ss []Slot
	if slots > 0 {
		en, rd, wr := m.Input("rule_en", slots), m.Input("rule_read", slots), m.Input("rule_write", slots)
		dom, page, pages := m.Input("rule_domain", domainBits*slots), m.Input("rule_page", pageBits*slots), m.Input("rule_pages", pagesBits*slots)
		for i := range slots {
			ss = append(ss, Slot{Enabled: m.Slice(en, i, 1), Read: m.Slice(rd, i, 1), Write: m.Slice(wr, i, 1),
				Domain: m.Slice(dom, domainBits*i, domainBits), Page: m.Slice(page, pageBits*i, pageBits), Pages: m.Slice(pages, pagesBits*i, pagesBits)})
		}
	}
	v, err := Check(m, m.Input("req", 16), m.Input("ingress", 2), m.Input("addr", 64), m.Input("size", 13), m.Input("op", 2), m.Input("egress_bit", 5), ds, ss)
	if err != nil {
		return nil, err
	}
	m.Output("rule", v.Rule)
	m.Output("found", v.Found)
	m.Output("domain", v.Domain)
	return m, m.Check()
}

// Instance places sub, made by Module with len(slots) slots, in m as
// instance name and returns its verdict.
func Instance(m *ir.Module, name string, sub *ir.Module, req, ingress, addr, size, op, egressBit ir.Value, slots []Slot) Verdict {
	in := map[string]ir.Value{"req": req, "ingress": ingress, "addr": addr, "size": size, "op": op, "egress_bit": egressBit}
	if len(slots) > 0 {
		var en, rd, wr, dom, page, pages []ir.Value
		for i := len(slots) - 1; i >= 0; i-- { // Concat puts its first operand on top
			s := slots[i]
			en, rd, wr = append(en, s.Enabled), append(rd, s.Read), append(wr, s.Write)
			dom, page, pages = append(dom, s.Domain), append(page, s.Page), append(pages, s.Pages)
		}
		in["rule_en"], in["rule_read"], in["rule_write"] = m.Concat(en...), m.Concat(rd...), m.Concat(wr...)
		in["rule_domain"], in["rule_page"], in["rule_pages"] = m.Concat(dom...), m.Concat(page...), m.Concat(pages...)
	}
	out := m.Instance(name, sub, in)
	return Verdict{Rule: out["rule"], Found: out["found"], Domain: out["domain"]}
}
