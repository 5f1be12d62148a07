package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

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

// sweepPlot draws the sweep: simulated and modelled bandwidth against
// transfer size (log scale), under the link rate.
func sweepPlot(path string, c linkbench.Config, pts []sweepPoint, raw float64) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("PCIe Gen%d x%d, MPS %d, DMA %s", c.Gen, c.Lanes, c.MPS, c.Op)
	p.X.Label.Text, p.Y.Label.Text = "transfer size (bytes, log scale)", "effective payload (Gb/s)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	sim, model := make(plotter.XYs, len(pts)), make(plotter.XYs, len(pts))
	for i, pt := range pts {
		sim[i] = plotter.XY{X: float64(pt.Size), Y: pt.Gbps}
		model[i] = plotter.XY{X: float64(pt.Size), Y: pt.ModelGbps}
	}
	rate := plotter.XYs{{X: float64(pts[0].Size), Y: raw}, {X: float64(pts[len(pts)-1].Size), Y: raw}}
	for i, s := range []struct {
		name string
		xy   plotter.XYs
	}{{"simulated", sim}, {"overhead model", model}, {"link rate", rate}} {
		l, err := plotter.NewLine(s.xy)
		if err != nil {
			return err
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		if i == 2 {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(s.name, l)
		if i == 0 {
			sc, err := plotter.NewScatter(s.xy)
			if err != nil {
				return err
			}
			sc.Color = plotutil.Color(0)
			p.Add(sc)
		}
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(18*vg.Centimeter, 10*vg.Centimeter, "svg")
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := wt.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
