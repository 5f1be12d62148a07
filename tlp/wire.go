package tlp

import "fmt"

// Gen is a PCIe link generation, 1 to 5.
type Gen uint8

// Link generations and their signalling rates.
const (
	Gen1 Gen = 1 // 2.5 GT/s, 8b/10b
	Gen2 Gen = 2 // 5 GT/s, 8b/10b
	Gen3 Gen = 3 // 8 GT/s, 128b/130b
	Gen4 Gen = 4 // 16 GT/s, 128b/130b
	Gen5 Gen = 5 // 32 GT/s, 128b/130b
)

// Valid reports whether g is a generation from 1 to 5.
func (g Gen) Valid() bool { return g >= Gen1 && g <= Gen5 }

// TransferRate returns the per-lane rate in megatransfers per second.
func (g Gen) TransferRate() int {
	switch g {
	case Gen1:
		return 2500
	case Gen2:
		return 5000
	case Gen3:
		return 8000
	case Gen4:
		return 16000
	case Gen5:
		return 32000
	}
	return 0
}

// Encoding returns the line code as payload bits per coded bits: 8/10 for
// Gen1 and Gen2, 128/130 from Gen3 on.
func (g Gen) Encoding() (payload, coded int) {
	if g <= Gen2 {
		return 8, 10
	}
	return 128, 130
}

// FramingBytes returns the data-link and physical-layer bytes added to each
// TLP on the wire: Gen1/2 STP (1) + sequence number (2) + LCRC (4) + END (1);
// Gen3+ STP token with sequence number (4) + LCRC (4). Both are 8 bytes.
func (g Gen) FramingBytes() int { return 8 }

// WireSize returns the bytes a TLP occupies on a link of generation g before
// line coding: prefixes, header, payload, ECRC and framing. It excludes
// DLLPs, SKP ordered sets and idle symbols, which depend on the traffic
// pattern and belong to the link model.
func (t *TLP) WireSize(g Gen) (int, error) {
	if !g.Valid() {
		return 0, fmt.Errorf("PCIe generation %d: must be 1 to 5", g)
	}
	return t.Len() + g.FramingBytes(), nil
}
