package link

import "onic/tlp"

// symbolPeriod64 returns 64 times the symbol period in picoseconds, an
// integer for every generation: 10 bits at 2.5 or 5 GT/s, 8 bits plus
// 2/128 of sync header at 8, 16 or 32 GT/s.
func symbolPeriod64(g tlp.Gen) int64 {
	switch g {
	case tlp.Gen1:
		return 4000 * 64
	case tlp.Gen2:
		return 2000 * 64
	case tlp.Gen3:
		return 65000 // 1015.625 ps
	case tlp.Gen4:
		return 32500 // 507.8125 ps
	case tlp.Gen5:
		return 16250 // 253.90625 ps
	}
	return 0
}

// SKP ordered sets (clock compensation), per lane: Gen1/2 send 4 symbols
// (COM and 3 SKP) at most every 1538 symbol times; Gen3 and later send a
// 16-symbol SKP ordered set every 370 blocks of 16 symbols.
func skipParams(g tlp.Gen) (interval, length int64) {
	if g <= tlp.Gen2 {
		return 1538, 4
	}
	return 370 * 16, 16
}

// Framing is the data-link and physical bytes around each TLP (sequence
// number, LCRC and start/end framing), and DLLPBytes the size of a DLLP on
// the wire, for every generation (shared/REFERENCE.md).
const (
	Framing   = 8
	DLLPBytes = 8
)
