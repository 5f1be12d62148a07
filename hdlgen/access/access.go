// Package access builds the O-NIC's security check in hdlgen/ir from the
// same checked tables the emulator's manager uses (pcie/acl): which
// domain a requester ID belongs to, whether that domain may use the
// egress, and whether the whole access lies in one of its ranges with the
// right to read or write it. The answer is an acl.Rule, so the hardware
// and the emulator can be compared verdict for verdict.
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

// Check builds the check of an access by req (16 bits) of size bytes
// (13 bits, 1 to 4096) at addr (64 bits), write (1 bit), through the
// egress whose acl.EgressBit number is egressBit (5 bits), against ds
// (acl.ACL.Domains). Domain contents are constants of the design.
func Check(m *ir.Module, req, addr, size, write, egressBit ir.Value, ds []acl.Domain) (Verdict, error) {
	if req.Width() != 16 || addr.Width() != 64 || size.Width() != 13 || write.Width() != 1 || egressBit.Width() != 5 {
		return Verdict{}, fmt.Errorf("access: want req 16, addr 64, size 13, write 1 and egress 5 bits")
	}
	if len(ds) > 0xFFFF {
		return Verdict{}, fmt.Errorf("access: %d domains do not fit a 16-bit index", len(ds))
	}
	one, zero := m.Const(1, 1), m.Const(1, 0)
	not := m.Not
	geU := func(a, b ir.Value) ir.Value { return not(m.LtU(a, b)) }
	last := m.Sub(m.Zext(size, 64), m.Const(64, 1)) // size-1

	found, index := zero, m.Const(16, 0)
	egressOK, inRange, canRead, canWrite := zero, zero, zero, zero
	for di, d := range ds {
		in := zero
		for _, r := range d.Requesters {
			in = m.Or(in, m.And(geU(req, m.Const(16, uint64(r[0]))), geU(m.Const(16, uint64(r[1])), req)))
		}
		// The domain's egress mask, one bit per egress number.
		eg := m.Slice(m.Shr(m.Const(32, uint64(d.Egress)), egressBit), 0, 1)
		hit, rd, wr := zero, zero, zero
		for _, s := range d.Spans {
			end := m.Const(64, s.End)
			// base <= addr < end, and the last byte before end.
			fits := m.And(m.And(geU(addr, m.Const(64, s.Base)), m.LtU(addr, end)),
				geU(m.Sub(m.Sub(end, m.Const(64, 1)), addr), last))
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
		egressOK, inRange, canRead, canWrite = pick(egressOK, eg), pick(inRange, hit), pick(canRead, rd), pick(canWrite, wr)
	}
	rule := func(r acl.Rule) ir.Value { return m.Const(3, uint64(r)) }
	allowed := m.Mux(write, canWrite, canRead)
	denied := m.Mux(write, rule(acl.WriteDenied), rule(acl.ReadDenied))
	verdict := m.Mux(allowed, rule(acl.Allowed), denied)
	verdict = m.Mux(inRange, verdict, rule(acl.NoRange))
	verdict = m.Mux(egressOK, verdict, rule(acl.EgressDenied))
	verdict = m.Mux(found, verdict, rule(acl.NoDomain))
	return Verdict{Rule: verdict, Found: found, Domain: index}, nil
}

// Module is Check as a module of its own, named name, to be used through
// Instance: inputs req (16 bits), addr (64), size (13), write (1) and
// egress_bit (5); outputs rule (3), found (1) and domain (16).
func Module(name string, ds []acl.Domain) (*ir.Module, error) {
	m := ir.NewModule(name)
	v, err := Check(m, m.Input("req", 16), m.Input("addr", 64), m.Input("size", 13), m.Input("write", 1), m.Input("egress_bit", 5), ds)
	if err != nil {
		return nil, err
	}
	m.Output("rule", v.Rule)
	m.Output("found", v.Found)
	m.Output("domain", v.Domain)
	return m, m.Check()
}

// Instance places sub, made by Module, in m as instance name and returns
// its verdict.
func Instance(m *ir.Module, name string, sub *ir.Module, req, addr, size, write, egressBit ir.Value) Verdict {
	out := m.Instance(name, sub, map[string]ir.Value{"req": req, "addr": addr, "size": size, "write": write, "egress_bit": egressBit})
	return Verdict{Rule: out["rule"], Found: out["found"], Domain: out["domain"]}
}
