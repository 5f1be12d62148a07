package kernels

import (
	"fmt"
	"math/rand/v2"

	"onic/hdlgen/ir"
)

// Field is where a record kernel looks: a stream of fixed-size records
// (aligned to beats), each holding an unsigned little-endian field.
type Field struct {
	Record int // bytes per record: a power of two from 4 to the beat size
	Offset int // byte offset of the field in the record
	Width  int // bytes of the field: 1, 2, 4 or 8
}

// check validates the field for beats of beat bytes.
func (f Field) check(beat int) error {
	switch {
	case f.Record < 4 || f.Record > beat || f.Record&(f.Record-1) != 0:
		return fmt.Errorf("record: %d bytes (a power of two from 4 to %d)", f.Record, beat)
	case f.Width != 1 && f.Width != 2 && f.Width != 4 && f.Width != 8:
		return fmt.Errorf("width: %d bytes (1, 2, 4 or 8)", f.Width)
	case f.Offset < 0 || f.Offset+f.Width > f.Record:
		return fmt.Errorf("offset: a %d-byte field at %d is outside a %d-byte record", f.Width, f.Offset, f.Record)
	}
	return nil
}

// get reads the field of a record.
func (f Field) get(rec []byte) uint64 { return le(rec[f.Offset : f.Offset+f.Width]) }

// FilterSpec says which records a filter kernel passes: those whose
// field compares with a constant as Op says.
type FilterSpec struct {
	Field
	Op    string // "eq", "ne", "lt" or "ge" (unsigned): pass when field Op Value
	Value uint64
}

// pass says whether a record's field passes.
func (f FilterSpec) pass(v uint64) bool {
	switch f.Op {
	case "eq":
		return v == f.Value
	case "ne":
		return v != f.Value
	case "lt":
		return v < f.Value
	default:
		return v >= f.Value
	}
}

// check validates the spec for beats of beat bytes.
func (f FilterSpec) check(beat int) error {
	if err := f.Field.check(beat); err != nil {
		return err
	}
	switch {
	case f.Op != "eq" && f.Op != "ne" && f.Op != "lt" && f.Op != "ge":
		return fmt.Errorf("op: %q (eq, ne, lt or ge)", f.Op)
	case f.Width < 8 && f.Value>>(8*f.Width) != 0:
		return fmt.Errorf("value: %#x does not fit a %d-byte field", f.Value, f.Width)
	}
	return nil
}

// Filter makes a kernel that passes the records of a byte stream (beats
// of beat bytes, records aligned to beats) whose field satisfies spec,
// and drops the others; a trailing fragment shorter than a record is
// dropped too. It does not pack what it passes: a dropped record's bytes
// leave as null bytes (tkeep low, which AXI-Stream allows anywhere in a
// packet), a beat with nothing passed is not sent at all, and the
// packet's last beat always is (possibly with no bytes) to end it. The
// consumer (the DMA engine) packs. The kernel is named "filter"; give
// another filter in the same program another name.
func Filter(spec FilterSpec, beat int) (*Kernel, error) {
	name := "filter"
	if err := spec.check(beat); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	return &Kernel{Name: name, Version: "1.0.0",
		Doc: fmt.Sprintf("pass the %d-byte records whose %d-byte field at %d is %s %#x, drop the rest", spec.Record, spec.Width, spec.Offset, spec.Op, spec.Value),
		Params: []Param{{"record", fmt.Sprint(spec.Record)}, {"offset", fmt.Sprint(spec.Offset)}, {"width", fmt.Sprint(spec.Width)},
			{"op", spec.Op}, {"value", fmt.Sprintf("%#x", spec.Value)}, {"beat_bytes", fmt.Sprint(beat)}},
		In: U8, Lanes: beat, Inputs: 1, OutGaps: true,
		Body: func(s *Step) {
			m, in := s.M, s.In[0]
			v := m.Const(8*spec.Width, spec.Value)
			var keep []ir.Value // most significant record first
			any := m.Const(1, 0)
			for r := beat/spec.Record - 1; r >= 0; r-- {
				base := r * spec.Record
				f := m.Slice(in.Data, 8*(base+spec.Offset), 8*spec.Width)
				var ok ir.Value
				switch spec.Op {
				case "eq":
					ok = m.Eq(f, v)
				case "ne":
					ok = m.Ne(f, v)
				case "lt":
					ok = m.LtU(f, v)
				default:
					ok = m.Not(m.LtU(f, v))
				}
				// Whole: its last byte is kept (keep is a prefix).
				pass := m.And(ok, m.Slice(in.Keep, base+spec.Record-1, 1))
				any = m.Or(any, pass)
				for range spec.Record {
					keep = append(keep, pass)
				}
			}
			s.Out = Beat{Data: in.Data, Keep: m.Concat(keep...), Last: in.Last}
			s.Emit = m.Or(any, in.Last)
		},
		RefPacket: func(in [][]byte) ([]byte, error) {
			var out []byte
			p := in[0]
			for off := 0; off+spec.Record <= len(p); off += spec.Record {
				rec := p[off : off+spec.Record]
				if spec.pass(spec.get(rec)) {
					out = append(out, rec...)
				}
			}
			return out, nil
		},
		Sample: func(rng *rand.Rand, n int) [][]byte {
			// Fields at, next to and far from the value, so records pass
			// and fail in about equal numbers.
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			mask := uint64(1)<<(8*spec.Width) - 1
			if spec.Width == 8 {
				mask = ^uint64(0)
			}
			for off := 0; off+spec.Record <= n; off += spec.Record {
				v := rng.Uint64()
				switch rng.IntN(4) {
				case 0:
					v = spec.Value
				case 1:
					v = spec.Value + 1
				case 2:
					v = spec.Value - 1
				}
				copy(p[off+spec.Offset:], putLE(nil, v&mask, spec.Width))
			}
			return [][]byte{p}
		},
	}, nil
}
