// Package htmlreport writes a finished emulator run as one self-contained
// HTML page (onic emu run --report): per-flow throughput over time,
// transfer latency distributions, how busy each link direction was, the
// MEMS reconfigurations and reflashes on a timeline, and the report's
// tables, accounting included. The charts are SVG drawn by gonum/plot
// and inlined with their font, so the page needs no network; an inline
// script (live.js) makes the throughput chart interactive, and without
// it the static chart shows. The same run writes the same bytes. It also draws a link bandwidth
// sweep (WriteSweep) for onic emu linkbench --plot.
package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"onic/emu/cluster"
)

// MaxSeries is how many flows a chart draws; a run with more says so
// (the tables list every flow).
const MaxSeries = 12

// Chart is one picture of the page.
type Chart struct {
	ID, Title, Caption string
	SVG                template.HTML
	// Legend names the chart's series under it, in the page (a legend
	// inside the plot sat on the data).
	Legend []LegendItem
}

// LegendItem is one series of a chart: its name and colour (CSS).
type LegendItem struct {
	Name, Colour string
}

// legendOf is the legend of flows drawn in plotutil's colours, in order.
func legendOf(flows []cluster.FlowSeries) []LegendItem {
	var l []LegendItem
	for i, f := range flows {
		l = append(l, LegendItem{f.Name, cssColour(plotutil.Color(i))})
	}
	return l
}

// cssColour is c as #rrggbb.
func cssColour(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// Charts draws the run's charts, in page order.
//
// Long: it writes one file top to bottom, in the order the file reads.
func Charts(r cluster.Report, c cluster.Charts) ([]Chart, error) {
	var out []Chart
	add := func(id, title, caption string, p *plot.Plot, w, h vg.Length) error {
		// The font goes in with the drawing: gonum lays labels out by its
		// own font's metrics, and a browser drawing them in another font
		// made them overlap and run out of the chart.
		// A margin of 4 points all round: gonum sets the outermost labels
		// on the picture's very edge, where a browser's rounding clips
		// them.
		cv := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
		m := vg.Points(4)
		p.Draw(draw.Crop(draw.New(cv), m, -m, m, -m))
		var b bytes.Buffer
		if _, err := cv.WriteTo(&b); err != nil {
			return fmt.Errorf("%s: %v", id, err)
		}
		svg := b.String()
		if i := strings.Index(svg, "<svg"); i > 0 { // drop the XML prolog: the SVG sits inside HTML
			svg = svg[i:]
		}
		out = append(out, Chart{ID: id, Title: title, Caption: caption, SVG: template.HTML(svg)})
		return nil
	}
	flows := c.Flows
	note := ""
	if len(flows) > MaxSeries {
		flows, note = flows[:MaxSeries], fmt.Sprintf(" The first %d of %d flows; the table has all.", MaxSeries, len(c.Flows))
	}

	// Throughput over time, the MEMS switch's dark circuits and the
	// reflashes shaded behind it.
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = "simulated time (µs)", "delivered (Gb/s)"
	peak := 1.0
	for _, f := range flows {
		for _, g := range f.Gbps {
			peak = max(peak, g)
		}
	}
	for _, s := range c.Spans {
		x0, x1 := s.StartNs/1e3, math.Max(s.EndNs, s.StartNs+c.DurationNs/500)/1e3
		shade, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: peak * 1.05}, {X: x0, Y: peak * 1.05}})
		if err != nil {
			return nil, err
		}
		shade.Color, shade.LineStyle.Width = spanColour(s.Kind), 0
		p.Add(shade)
	}
	for i, f := range flows {
		xy := make(plotter.XYs, len(f.Gbps))
		for b, g := range f.Gbps {
			xy[b] = plotter.XY{X: (float64(b) + 0.5) * c.BucketNs / 1e3, Y: g}
		}
		if _, err := addLine(p, i, f.Name, xy); err != nil {
			return nil, err
		}
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.Legend = plot.NewLegend() // under the chart, in the page
	shaded := ""
	if len(c.Spans) > 0 {
		shaded = " Shaded: circuits of the MEMS switch dark (grey) and reflashes (yellow)."
	}
	if err := add("throughput", "Throughput over time",
		fmt.Sprintf("Payload each flow delivered per %s interval, each TLP counted as it landed.%s%s", nsText(c.BucketNs), shaded, note), p, 18*vg.Centimeter, 9*vg.Centimeter); err != nil {
		return nil, err
	}
	out[len(out)-1].Legend = legendOf(flows)

	// Latency distributions, as cumulative fractions.
	p = plot.New()
	p.X.Label.Text, p.Y.Label.Text = "transfer latency (µs, log scale)", "fraction at or below"
	drawn := 0
	for i, f := range flows {
		if len(f.LatencyNs) == 0 {
			continue
		}
		lat := slices.Clone(f.LatencyNs)
		slices.Sort(lat)
		xy := make(plotter.XYs, 0, 2*len(lat))
		for k, v := range lat {
			xy = append(xy, plotter.XY{X: v / 1e3, Y: float64(k) / float64(len(lat))}, plotter.XY{X: v / 1e3, Y: float64(k+1) / float64(len(lat))})
		}
		if _, err := addLine(p, i, f.Name, xy); err != nil {
			return nil, err
		}
		drawn++
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Padding = vg.Points(8) // room for the top tick's label
	if drawn > 0 {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Add(plotter.NewGrid())
	caption := "For each flow, the fraction of its finished transfers whose latency (issue to last request settled) is at most x." + note
	if drawn == 0 {
		caption = "No transfer finished in this run." + note
		p.X.Min, p.X.Max = 0, 1
	}
	p.Legend = plot.NewLegend() // under the chart, in the page
	if err := add("latency", "Transfer latency", caption, p, 18*vg.Centimeter, 9*vg.Centimeter); err != nil {
		return nil, err
	}
	out[len(out)-1].Legend = legendOf(flows)

	// Link utilisation, one bar per direction.
	p = plot.New()
	p.Y.Label.Text = "busy (% of the run)"
	vals := make(plotter.Values, len(c.Links))
	names := make([]string, len(c.Links))
	for i, l := range c.Links {
		vals[i], names[i] = 100*l.Utilisation, l.Name
	}
	if len(vals) > 0 {
		bars, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(0)
		bars.LineStyle.Width = 0
		bars.Horizontal = true
		p.Add(bars)
		p.NominalY(names...)
		p.X.Label.Text, p.Y.Label.Text = "busy (% of the run)", ""
		p.X.Min, p.X.Max = 0, 100
	}
	if err := add("links", "Link utilisation",
		"The share of the run each link direction's transmitter spent sending (TLPs, acknowledgements, flow control, skips): the hosts' PCIe links and the O-NICs' optical ports.",
		p, 18*vg.Centimeter, vg.Length(max(4, len(c.Links)))*0.55*vg.Centimeter+2*vg.Centimeter); err != nil {
		return nil, err
	}

	// The timeline of MEMS reconfigurations and reflashes.
	p = plot.New()
	p.X.Label.Text = "simulated time (µs)"
	p.X.Min, p.X.Max = 0, c.DurationNs/1e3
	var rows []string
	for i, s := range c.Spans {
		l, err := plotter.NewLine(plotter.XYs{{X: s.StartNs / 1e3, Y: float64(i)}, {X: math.Max(s.EndNs, s.StartNs+c.DurationNs/500) / 1e3, Y: float64(i)}})
		if err != nil {
			return nil, err
		}
		l.Width = vg.Points(8)
		l.Color = plotutil.Color(1)
		if s.Kind == "reflash" {
			l.Color = plotutil.Color(2)
		}
		p.Add(l)
		rows = append(rows, s.Kind+": "+s.Name)
	}
	caption = "When circuits of the MEMS switch were dark (reconfiguration and bring-up) and O-NICs or their slots were reflashing."
	if len(rows) == 0 {
		caption = "Nothing reconfigured or reflashed in this run."
		rows = []string{"(none)"}
		l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
		p.Add(l)
	}
	p.NominalY(rows...)
	p.Y.Padding = vg.Points(10)
	if err := add("timeline", "Reconfigurations and reflashes", caption, p, 18*vg.Centimeter, vg.Length(len(rows))*0.7*vg.Centimeter+2.5*vg.Centimeter); err != nil {
		return nil, err
	}
	return out, nil
}

// spanColour is the translucent shade of a time span of kind ("mems" or
// "reflash") behind a chart, the same as the interactive chart's.
func spanColour(kind string) color.Color {
	if kind == "reflash" {
		return color.NRGBA{R: 244, G: 211, B: 94, A: 90}
	}
	return color.NRGBA{R: 128, G: 128, B: 128, A: 70}
}

// addLine draws series i of a chart, named in its legend, in the i-th
// of plotutil's colours.
func addLine(p *plot.Plot, i int, name string, xy plotter.XYs) (*plotter.Line, error) {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(name, l)
	return l, nil
}

// SweepPoint is one transfer size of a link bandwidth sweep.
type SweepPoint struct {
	Size            int     // bytes per transfer
	Gbps, ModelGbps float64 // simulated and modelled effective payload
}

// WriteSweep draws a link bandwidth sweep as SVG into w: simulated and
// modelled bandwidth against transfer size (log scale), under the link
// rate rawGbps, dashed (onic emu linkbench --plot).
func WriteSweep(w io.Writer, title string, pts []SweepPoint, rawGbps float64) error {
	if len(pts) == 0 {
		return fmt.Errorf("sweep: no points")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "transfer size (bytes, log scale)", "effective payload (Gb/s)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	sim, model := make(plotter.XYs, len(pts)), make(plotter.XYs, len(pts))
	for i, pt := range pts {
		sim[i] = plotter.XY{X: float64(pt.Size), Y: pt.Gbps}
		model[i] = plotter.XY{X: float64(pt.Size), Y: pt.ModelGbps}
	}
	if _, err := addLine(p, 0, "simulated", sim); err != nil {
		return err
	}
	sc, err := plotter.NewScatter(sim)
	if err != nil {
		return err
	}
	sc.Color = plotutil.Color(0)
	p.Add(sc)
	if _, err := addLine(p, 1, "overhead model", model); err != nil {
		return err
	}
	rate, err := addLine(p, 2, "link rate", plotter.XYs{{X: float64(pts[0].Size), Y: rawGbps}, {X: float64(pts[len(pts)-1].Size), Y: rawGbps}})
	if err != nil {
		return err
	}
	rate.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	return writeLineChart(w, p)
}

// nsText is a duration in nanoseconds as a person reads it.
func nsText(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%g µs", ns/1e3)
	}
	return fmt.Sprintf("%g ns", ns)
}

// svgFontStyle is the style block gonum's SVG writer puts the embedded
// font in.
var svgFontStyle = regexp.MustCompile(`(?s)<defs>\s*<style>(.*?)</style>\s*</defs>`)

// liveJS makes the throughput chart interactive (hover values, drag to
// zoom) from the page's series data; the static SVG stays for readers
// without scripts.
//
//go:embed live.js
var liveJS string

// series is the throughput chart's data as the page's script reads it.
type series struct {
	BucketNs   float64      `json:"bucket_ns"`
	DurationNs float64      `json:"duration_ns"`
	Flows      []seriesFlow `json:"flows"`
	Spans      []seriesSpan `json:"spans"`
	Colours    []string     `json:"colours"` // the static charts' colours, for the same flow in the same colour
}

type seriesFlow struct {
	Name string    `json:"name"`
	Gbps []float64 `json:"gbps"`
}

type seriesSpan struct {
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	StartNs float64 `json:"start_ns"`
	EndNs   float64 `json:"end_ns"`
}

// seriesJSON is c's throughput data for the page's script (its first
// MaxSeries flows, as the static chart), rates rounded to 1 Mb/s so the
// page stays small.
func seriesJSON(c cluster.Charts) (template.JS, error) {
	s := series{BucketNs: c.BucketNs, DurationNs: c.DurationNs, Flows: []seriesFlow{}, Spans: []seriesSpan{}}
	for i, f := range c.Flows {
		if i == MaxSeries {
			break
		}
		g := make([]float64, len(f.Gbps))
		for k, v := range f.Gbps {
			g[k] = math.Round(v*1000) / 1000
		}
		s.Flows = append(s.Flows, seriesFlow{f.Name, g})
	}
	for _, sp := range c.Spans {
		s.Spans = append(s.Spans, seriesSpan{sp.Kind, sp.Name, sp.StartNs, sp.EndNs})
	}
	for i := range len(plotutil.DefaultColors) {
		s.Colours = append(s.Colours, cssColour(plotutil.Color(i)))
	}
	b, err := json.Marshal(s) // escapes <, > and &: safe inside a script element
	return template.JS(b), err
}

// Write writes the page of a finished run: r its report, c its chart
// data (Cluster.Charts).
func Write(w io.Writer, r cluster.Report, c cluster.Charts) error {
	charts, err := Charts(r, c)
	if err != nil {
		return err
	}
	data, err := seriesJSON(c)
	if err != nil {
		return err
	}
	// Each chart embeds its font; the page keeps one copy, in its head
	// (an inline SVG's style applies to the whole document).
	var fonts template.CSS
	for i := range charts {
		svg := string(charts[i].SVG)
		if m := svgFontStyle.FindStringSubmatchIndex(svg); m != nil {
			if fonts == "" {
				fonts = template.CSS(svg[m[2]:m[3]])
			}
			charts[i].SVG = template.HTML(svg[:m[0]] + svg[m[1]:])
		}
	}
	// The emulator's speed is the one figure that varies from run to run:
	// the page leaves it out, so the same run writes the same page.
	var text bytes.Buffer
	r.WriteText(&text)
	report := text.String()
	if i := strings.LastIndex(report, "\nspeed: "); i >= 0 {
		report = report[:i+1]
	}
	return page.Execute(w, struct {
		R      cluster.Report
		Charts []Chart
		Text   string
		Series template.JS
		Live   template.JS
		Fonts  template.CSS
	}{r, charts, report, data, template.JS(liveJS), fonts})
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"f2":  func(x float64) string { return fmt.Sprintf("%.2f", x) },
	"us":  func(ns float64) string { return fmt.Sprintf("%.3f", ns/1e3) },
	"ms":  func(s float64) string { return nsText(math.Round(s * 1e9)) },
	"pct": func(x float64) float64 { return 100 * x },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>onic emu run: {{.R.Scenario}}</title>
<style>
{{.Fonts}}
body { font-family: sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 0.9em; }
svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.8em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
pre { font-size: 0.8em; background: #f6f6f6; padding: 1em; overflow-x: auto; }
figure.interactive > svg, figure.interactive > .legend.static { display: none; }
.legend { font-size: 0.9em; margin: 0.3em 0; }
.legend span { margin-right: 1.2em; white-space: nowrap; }
.legend i { display: inline-block; width: 1.2em; height: 0.3em; margin-right: 0.4em; vertical-align: middle; }
.live { position: relative; }
.live svg { width: 100%; cursor: crosshair; user-select: none; }
.live text { font-size: 12px; fill: #333; }
.live .grid { stroke: #e3e3e3; } .live .frame { fill: none; stroke: #999; }
.live .series { fill: none; stroke-width: 1.6; }
.live .span.mems { fill: rgba(128,128,128,0.27); } .live .span.reflash { fill: rgba(244,211,94,0.35); }
.live .cursor { stroke: #555; stroke-dasharray: 3 3; } .live .band { fill: rgba(90,155,212,0.2); }
.live .tip { position: absolute; pointer-events: none; background: rgba(255,255,255,0.95); border: 1px solid #bbb;
  padding: 0.3em 0.5em; font-size: 0.85em; white-space: pre; box-shadow: 0 1px 3px rgba(0,0,0,0.2); }
.live .legend button { font-size: 0.9em; }
</style>
</head>
<body>
<h1>onic emu run: scenario {{.R.Scenario}}</h1>
<p>{{ms .R.SimulatedS}} of simulated time; {{len .R.Flows}} flows, {{len .R.Hosts}} hosts, {{len .R.ONICs}} O-NICs, {{.R.Reconfigurations}} MEMS reconfigurations.{{if .R.Fidelity}} Fidelity {{.R.Fidelity}}: {{printf "%.1f" (pct .R.TransferShare)}}% of the O-NICs' time carried at the transfer level, in {{.R.TransferWindows}} steady stretch(es){{if .R.TransferHeld}} ({{.R.TransferHeld}}){{end}}; the throughput charts show carried stretches at their sampled rates (docs/emu.md, "Fidelity").{{end}}</p>
{{range .Charts}}
<h2 id="{{.ID}}">{{.Title}}</h2>
<figure class="chart" data-chart="{{.ID}}">
{{.SVG}}
{{with .Legend}}<div class="legend static">{{range .}}<span><i style="background: {{.Colour}}"></i>{{.Name}}</span> {{end}}</div>{{end}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
<script type="application/json" id="onic-series">{{.Series}}</script>
<script>{{.Live}}</script>
<h2 id="flows">Flows</h2>
<table>
<tr><th>flow</th><th>op</th><th>transfers</th><th>failed</th><th>Gb/s</th><th>p50 (µs)</th><th>p99 (µs)</th><th>max (µs)</th></tr>
{{range .R.Flows}}<tr><td>{{.Name}}</td><td>{{.Op}}</td><td>{{.Transfers}}</td><td>{{.Failed}}</td><td>{{f2 .Gbps}}</td><td>{{us .P50Ns}}</td><td>{{us .P99Ns}}</td><td>{{us .MaxNs}}</td></tr>
{{end}}</table>
<h2 id="accounting">Accounting</h2>
<p>Every request the hosts injected ended in exactly one of these; they add up.</p>
<table>
<tr><th>injected</th><th>delivered</th><th>completed with error</th><th>denied</th><th>unsupported</th><th>dropped</th><th>in flight</th></tr>
<tr><td>{{.R.Accounting.Injected}}</td><td>{{.R.Accounting.Delivered}}</td><td>{{.R.Accounting.ErrorStatus}}</td><td>{{.R.Accounting.Denied}}</td><td>{{.R.Accounting.Unsupported}}</td><td>{{.R.Accounting.Dropped}}</td><td>{{.R.Accounting.InFlight}}</td></tr>
</table>
<h2 id="report">The full report</h2>
<pre>{{.Text}}</pre>
</body>
</html>
`))

// Series is one line of a grid chart: a value per x position.
type Series struct {
	Name string
	Y    []float64
}

// WriteGrid draws a scenario sweep (onic emu sweep) as an SVG line
// chart: the x axis the values of the swept field (xTicks, in order,
// evenly spaced), a line per series.
func WriteGrid(w io.Writer, title, xLabel, yLabel string, xTicks []string, series []Series) error {
	if len(xTicks) == 0 || len(series) == 0 {
		return fmt.Errorf("grid chart: no points")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	var ticks []plot.Tick
	for i, t := range xTicks {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: t})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.3, float64(len(xTicks)-1)+0.3
	for i, s := range series {
		xy := make(plotter.XYs, len(s.Y))
		for j, y := range s.Y {
			xy[j] = plotter.XY{X: float64(j), Y: y}
		}
		if _, err := addLine(p, i, s.Name, xy); err != nil {
			return err
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		sc.Color = plotutil.Color(i)
		p.Add(sc)
	}
	return writeLineChart(w, p)
}

// writeLineChart finishes a line chart (legend at the bottom right, y from
// 0, a grid) and writes it to w as an 18 × 10 cm SVG.
func writeLineChart(w io.Writer, p *plot.Plot) error {
	p.Legend.Top, p.Legend.Left = false, false
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(18*vg.Centimeter, 10*vg.Centimeter, "svg")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
