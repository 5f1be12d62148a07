package linkbench

import (
	"fmt"

	"onic/emu/link"
	"onic/pcie/dll"
	"onic/tlp"
)

// Model returns the effective bandwidth the link's overheads allow for c,
// by accounting rather than simulation:
//
//   - each TLP occupies ceil((header + payload DWs + 8 B framing) / lanes)
//     symbol times, the symbol time including the line code;
//   - a transfer splits into TLPs exactly as the device splits it (MPS for
//     writes, MRRS for reads, completions at RCB and MPS);
//   - on the data direction of reads, the host's Ack and UpdateFC DLLPs for
//     the stream of read requests take ceil(8 / lanes) symbol times each,
//     one per Ack (and per UpdateFC) latency interval plus, on average,
//     half the time between requests;
//   - SKP ordered sets take their length once per interval.
//
// It assumes nothing else stalls the link (enough credits, replay buffer
// and tags), which is what the tests check the simulation against. It
// covers write and read.
func Model(c Config) (Result, error) {
	if err := c.Check(); err != nil {
		return Result{}, err
	}
	if c.Op == RdWr {
		return Result{}, fmt.Errorf("the model covers write and read, not rdwr")
	}
	lanes := int64(c.Lanes)
	syms := func(bytes int) int64 { return (int64(bytes) + lanes - 1) / lanes }
	var data, tlps int64
	var used float64 // symbol times per transfer on the data direction
	switch c.Op {
	case Write:
		for ch := range tlp.Chunks(c.base(0), c.Size, c.MPS) {
			used += float64(syms(c.hdrBytes(tlp.MWr) + int(ch.LengthDW)*4 + link.Framing))
			data += int64(ch.Size)
			tlps++
		}
	case Read:
		dllp := float64(syms(link.DLLPBytes))
		ack := float64(dll.AckLatency(c.Gen, c.Lanes, c.MPS))
		fc := float64(dll.UpdateFCLatency(c.Gen, c.Lanes, c.MPS))
		for ch := range tlp.Chunks(c.base(0), c.Size, c.MRRS) {
			var req float64
			for cp := range tlp.Completions(ch.Addr&^3, ch.LengthDW, ch.FirstBE, ch.LastBE, c.RCB, c.MPS) {
				req += float64(syms(c.hdrBytes(tlp.CplD) + int(cp.LengthDW)*4 + link.Framing))
				tlps++
			}
			// DLLPs for the read requests, which arrive one per request.
			req += dllp * req * (1/(ack+req/2) + 1/(fc+req/2))
			used += req
			data += int64(ch.Size)
		}
	}
	every, length := skipParamsOf(c.Gen)
	used *= 1 + float64(length)/float64(every)
	psPerSym := symbolPS(c.Gen)
	secs := used * psPerSym * 1e-12
	return Result{
		EffectiveGbps: float64(data) * 8 / secs / 1e9,
		TLPRate:       float64(tlps) / secs,
		Utilization:   1,
		RawGbps:       RawGbps(c.Gen, c.Lanes),
	}, nil
}

// symbolPS is the symbol time in picoseconds: 8 bits in the line code at
// the transfer rate.
func symbolPS(g tlp.Gen) float64 {
	p, c := g.Encoding()
	return 8 * float64(c) / float64(p) / float64(g.TransferRate()) * 1e6
}

// skipParamsOf mirrors the link's SKP ordered-set interval and length.
func skipParamsOf(g tlp.Gen) (every, length int64) {
	if g <= tlp.Gen2 {
		return 1538, 4
	}
	return 370 * 16, 16
}
