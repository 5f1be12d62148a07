// Package dll holds the PCI Express Data Link Layer's timing figures
// that both onic's link model (emu/link) and its optical link's RTL
// (designs/internal/optlink) use: below both, so that neither imports the
// other.
package dll

import "onic/tlp"

// Ack transmission latency limits and UpdateFC transmission latency
// guidelines, in symbol times, by generation, width and MPS: PCI Express
// Base Specification 5.0 Tables 3-7 to 3-9 (Ack) and 2-46 to 2-48
// (UpdateFC), as tabulated by pcie-bench (Neugebauer et al., SIGCOMM 2018).
// The two tables hold the same values; Gen4 and Gen5 use Gen3's.
// ReplayRollover is how many replays of the same TLPs without Ack
// progress roll REPLAY_NUM over (a 2-bit count: the fourth replay), after
// which the data link layer retrains the link (PCIe Base §3.6.2.1). The
// emulator's link (emu/link) and the optical link RTL
// (designs/internal/optlink) both count to it.
const ReplayRollover = 4

// CreditTimeoutCycles is how long, in the link's 250 MHz user clock, a
// TLP may wait at the optical link's admission for credits its partner
// never returns before the link goes down and retrains (65.5 µs): the
// card's link's default and the emulator's O-NIC's.
const CreditTimeoutCycles = 16384

var latencyTable = map[tlp.Gen]map[int]map[int]int64{
	tlp.Gen1: {
		1:  {128: 237, 256: 416, 512: 559, 1024: 1071, 2048: 2095, 4096: 4143},
		2:  {128: 128, 256: 217, 512: 289, 1024: 545, 2048: 1057, 4096: 2081},
		4:  {128: 73, 256: 118, 512: 154, 1024: 282, 2048: 538, 4096: 1050},
		8:  {128: 67, 256: 107, 512: 86, 1024: 150, 2048: 278, 4096: 534},
		16: {128: 48, 256: 72, 512: 86, 1024: 150, 2048: 278, 4096: 534},
	},
	tlp.Gen2: {
		1:  {128: 288, 256: 467, 512: 610, 1024: 1122, 2048: 2146, 4096: 4194},
		2:  {128: 179, 256: 268, 512: 340, 1024: 596, 2048: 1108, 4096: 2132},
		4:  {128: 124, 256: 169, 512: 205, 1024: 333, 2048: 589, 4096: 1101},
		8:  {128: 118, 256: 158, 512: 137, 1024: 201, 2048: 329, 4096: 585},
		16: {128: 99, 256: 123, 512: 137, 1024: 201, 2048: 329, 4096: 585},
	},
	tlp.Gen3: {
		1:  {128: 333, 256: 512, 512: 655, 1024: 1167, 2048: 2191, 4096: 4239},
		2:  {128: 224, 256: 313, 512: 385, 1024: 641, 2048: 1153, 4096: 2177},
		4:  {128: 169, 256: 214, 512: 250, 1024: 378, 2048: 634, 4096: 1146},
		8:  {128: 163, 256: 203, 512: 182, 1024: 246, 2048: 374, 4096: 630},
		16: {128: 144, 256: 168, 512: 182, 1024: 246, 2048: 374, 4096: 630},
	},
}

// AckLatency returns the Ack transmission latency limit in symbol times.
func AckLatency(g tlp.Gen, lanes, mps int) int64 {
	if g > tlp.Gen3 {
		g = tlp.Gen3
	}
	return latencyTable[g][lanes][mps]
}

// UpdateFCLatency returns the recommended UpdateFC interval in symbol
// times (the same table values as AckLatency).
func UpdateFCLatency(g tlp.Gen, lanes, mps int) int64 { return AckLatency(g, lanes, mps) }
