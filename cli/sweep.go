package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"onic/emu/htmlreport"
	"onic/emu/linkbench"
)

// sweepPoint is one transfer size of a linkbench sweep.
type sweepPoint struct {
	Size      int     `json:"size"`
	Gbps      float64 `json:"effective_gbps"`
	ModelGbps float64 `json:"model_gbps"`
	TLPRate   float64 `json:"tlps_per_sec"`
}

// linkbenchSweep runs c at every transfer size from 64 B to 64 KiB and
// prints the bandwidth against size (JSON with asJSON), and draws it into
// plotPath as SVG when that is not "".
func linkbenchSweep(w io.Writer, c linkbench.Config, asJSON bool, plotPath string) error {
	var pts []sweepPoint
	var raw float64
	for size := 64; size <= 64<<10; size *= 2 {
		c.Size = size
		res, err := linkbench.Run(c)
		if err != nil {
			return fmt.Errorf("size %d: %v", size, err)
		}
		pt := sweepPoint{Size: size, Gbps: res.EffectiveGbps, TLPRate: res.TLPRate}
		if m, err := linkbench.Model(c); err == nil {
			pt.ModelGbps = m.EffectiveGbps
		}
		pts, raw = append(pts, pt), res.RawGbps
	}
	if plotPath != "" {
		if err := sweepPlot(plotPath, c, pts, raw); err != nil {
			return fmt.Errorf("--plot: %v", err)
		}
	}
	if asJSON {
		return json.NewEncoder(w).Encode(pts)
	}
	fmt.Fprintf(w, "PCIe Gen%d x%d, MPS %d, MRRS %d, RCB %d: DMA %s; link rate %.2f Gb/s per direction\n", c.Gen, c.Lanes, c.MPS, c.MRRS, c.RCB, c.Op, raw)
	fmt.Fprintf(w, "%10s %12s %12s %12s\n", "size (B)", "Gb/s", "model Gb/s", "M TLPs/s")
	for _, p := range pts {
		fmt.Fprintf(w, "%10d %12.2f %12.2f %12.2f\n", p.Size, p.Gbps, p.ModelGbps, p.TLPRate/1e6)
	}
	return nil
}

// sweepPlot draws the sweep into path as SVG.
func sweepPlot(path string, c linkbench.Config, pts []sweepPoint, raw float64) error {
	hp := make([]htmlreport.SweepPoint, len(pts))
	for i, pt := range pts {
		hp[i] = htmlreport.SweepPoint{Size: pt.Size, Gbps: pt.Gbps, ModelGbps: pt.ModelGbps}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := htmlreport.WriteSweep(f, fmt.Sprintf("PCIe Gen%d x%d, MPS %d, DMA %s", c.Gen, c.Lanes, c.MPS, c.Op), hp, raw); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
