package firmware

import (
	"fmt"

	"github.com/tinylib/msgp/msgp"
)

// envelope is the image file: a map of the magic, the manifest's bytes,
// the signatures and the payloads. Its codec is written out (not
// generated) so that every count read from the file is bounded by the
// bytes that are left before anything is allocated: a payload list
// claiming four billion entries is an error, not an allocation.
type envelope struct {
	Magic      string
	Manifest   []byte
	Signatures []Signature
	Payloads   [][]byte
}

// MarshalMsg appends the envelope to b.
func (e *envelope) MarshalMsg(b []byte) ([]byte, error) {
	b = msgp.AppendMapHeader(b, 4)
	b = msgp.AppendString(b, "magic")
	b = msgp.AppendString(b, e.Magic)
	b = msgp.AppendString(b, "manifest")
	b = msgp.AppendBytes(b, e.Manifest)
	b = msgp.AppendString(b, "signatures")
	b = msgp.AppendArrayHeader(b, uint32(len(e.Signatures)))
	for i := range e.Signatures {
		var err error
		if b, err = e.Signatures[i].MarshalMsg(b); err != nil {
			return nil, err
		}
	}
	b = msgp.AppendString(b, "payloads")
	b = msgp.AppendArrayHeader(b, uint32(len(e.Payloads)))
	for _, p := range e.Payloads {
		b = msgp.AppendBytes(b, p)
	}
	return b, nil
}

// UnmarshalMsg reads an envelope from b and returns what follows it.
// Fields it does not know are skipped, for later format versions. The
// manifest's bytes and the payloads are slices of b, not copies: an image
// costs its file's memory once, however large its bitstreams.
func (e *envelope) UnmarshalMsg(b []byte) ([]byte, error) {
	n, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for range n {
		var key []byte
		if key, b, err = msgp.ReadMapKeyZC(b); err != nil {
			return nil, err
		}
		k := string(key)
		if seen[k] {
			return nil, fmt.Errorf("field %q twice", k)
		}
		seen[k] = true
		switch k {
		case "magic":
			e.Magic, b, err = msgp.ReadStringBytes(b)
		case "manifest":
			e.Manifest, b, err = msgp.ReadBytesZC(b)
		case "signatures":
			var c uint32
			if c, b, err = msgp.ReadArrayHeaderBytes(b); err != nil {
				return nil, fmt.Errorf("signatures: %v", err)
			}
			if int(c) > len(b) {
				return nil, fmt.Errorf("signatures: %d claimed, %d bytes left", c, len(b))
			}
			e.Signatures = make([]Signature, c)
			for i := range e.Signatures {
				if b, err = e.Signatures[i].UnmarshalMsg(b); err != nil {
					return nil, fmt.Errorf("signatures[%d]: %v", i, err)
				}
			}
		case "payloads":
			var c uint32
			if c, b, err = msgp.ReadArrayHeaderBytes(b); err != nil {
				return nil, fmt.Errorf("payloads: %v", err)
			}
			if int(c) > len(b) {
				return nil, fmt.Errorf("payloads: %d claimed, %d bytes left", c, len(b))
			}
			e.Payloads = make([][]byte, c)
			for i := range e.Payloads {
				if e.Payloads[i], b, err = msgp.ReadBytesZC(b); err != nil {
					return nil, fmt.Errorf("payloads[%d]: %v", i, err)
				}
			}
		default:
			b, err = msgp.Skip(b)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
	}
	return b, nil
}
