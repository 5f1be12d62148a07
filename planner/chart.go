package planner

import (
	"fmt"
	"image/color"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// maxChartRows is the most circuits (host pairs) a chart shows.
const maxChartRows = 40

// WriteChart draws one iteration of the plan's circuit schedule as an SVG:
// a row per pair of hosts a circuit joins (the maxChartRows busiest), a
// bar while the circuit is lit (its count beside it when there are
// several), the switch's dark and bring-up time shaded grey.
func (p *Plan) WriteChart(w io.Writer) error {
	sw := (p.m.cl.Reconfig + p.m.cl.BringUp).Seconds()
	type span struct {
		from, to float64
		n        int
	}
	rows := map[[2]string][]span{}
	var dark [][2]float64
	t := 0.0
	for i, ph := range p.Phases {
		if i > 0 {
			dark = append(dark, [2]float64{t, t + sw})
			t += sw
		}
		count := map[[2]string]int{}
		for _, c := range ph.Circuits {
			count[c]++
		}
		for c, n := range count {
			rows[c] = append(rows[c], span{t, t + ph.Seconds, n})
		}
		t += ph.Seconds
	}
	if p.Reconfigurations > len(p.Phases)-1 {
		dark = append(dark, [2]float64{t, t + sw})
		t += sw
	}
	keys := make([][2]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	lit := func(k [2]string) float64 {
		v := 0.0
		for _, s := range rows[k] {
			v += (s.to - s.from) * float64(s.n)
		}
		return v
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if la, lb := lit(a), lit(b); la != lb {
			if la > lb {
				return -1
			}
			return 1
		}
		return slices.Compare(a[:], b[:])
	})
	if len(keys) > maxChartRows {
		keys = keys[:maxChartRows]
	}
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: circuits in one iteration", p.Job)
	pl.X.Label.Text = "time in the iteration (ms)"
	ms := 1e3
	for _, d := range dark {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: d[0] * ms, Y: -0.5}, {X: d[1] * ms, Y: -0.5}, {X: d[1] * ms, Y: float64(len(keys)) - 0.5}, {X: d[0] * ms, Y: float64(len(keys)) - 0.5}})
		if err != nil {
			return err
		}
		poly.Color = color.Gray{Y: 220}
		poly.LineStyle.Width = 0
		pl.Add(poly)
	}
	var ticks []plot.Tick
	for i, k := range keys {
		y := float64(len(keys) - 1 - i)
		ticks = append(ticks, plot.Tick{Value: y, Label: k[0] + "-" + k[1]})
		for _, s := range rows[k] {
			poly, err := plotter.NewPolygon(plotter.XYs{{X: s.from * ms, Y: y - 0.35}, {X: s.to * ms, Y: y - 0.35}, {X: s.to * ms, Y: y + 0.35}, {X: s.from * ms, Y: y + 0.35}})
			if err != nil {
				return err
			}
			poly.Color = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
			poly.LineStyle.Width = 0
			pl.Add(poly)
			if s.n > 1 {
				l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: s.from * ms, Y: y}}, Labels: []string{fmt.Sprintf(" ×%d", s.n)}})
				if err != nil {
					return err
				}
				pl.Add(l)
			}
		}
	}
	pl.Y.Tick.Marker = plot.ConstantTicks(ticks)
	pl.Y.Min, pl.Y.Max = -0.5, float64(len(keys))-0.5
	pl.X.Min, pl.X.Max = 0, t*ms
	height := vg.Length(3+0.6*float64(len(keys))) * vg.Centimeter
	wt, err := pl.WriterTo(20*vg.Centimeter, height, "svg")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
