package htmlreport

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/testbenches/tools"
)

// runPage runs a scenario and writes its page.
func runPage(t *testing.T, cfg scenario.Config) []byte {
	t.Helper()
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, r, cl.Charts(0)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPage: the phased run's page holds its four charts as inline SVG
// with the flows in their legends, the accounting, and nothing fetched
// from elsewhere; the same run writes the same bytes.
func TestPage(t *testing.T) {
	b := runPage(t, scenario.Phased())
	html := string(b)
	if n := strings.Count(html, `<figure class="chart"`); n != 4 || strings.Count(html, "<svg") != 4 {
		t.Errorf("%d charts, %d SVGs; want 4", n, strings.Count(html, "<svg"))
	}
	for _, want := range []string{`data-chart="throughput"`, `data-chart="latency"`, `data-chart="links"`, `data-chart="timeline"`,
		"A-&gt;B", "A-&gt;C", "mems: onicA.a &lt;-&gt; onicC.a", "<h2 id=\"accounting\">"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	// Its one script is its own, inline; its URLs the font it embeds and
	// the interactive chart's clip path.
	if m := regexp.MustCompile(`(?i)<link|<img|<iframe|\ssrc=|url\((?:[^d#]|d[^a])|import\(|fetch\(|XMLHttpRequest`).FindString(html); m != "" {
		t.Errorf("the page fetches something: %q", m)
	}
	if n := strings.Count(html, "<script"); n != 2 || !strings.Contains(html, `<script type="application/json" id="onic-series">`) {
		t.Errorf("%d scripts, want the series data and the chart's script", n)
	}
	if n := strings.Count(html, "@font-face"); n != 1 {
		t.Errorf("the font is embedded %d times, want once", n)
	}
	if !bytes.Equal(b, runPage(t, scenario.Phased())) {
		t.Error("two runs wrote different pages")
	}
}

// TestPageFidelity: a run at the transfer level says on its page how much
// it carried; a run at the packet level says nothing of it.
func TestPageFidelity(t *testing.T) {
	c := scenario.TwoParty()
	c.Duration = 3 * time.Millisecond
	if html := string(runPage(t, c)); strings.Contains(html, "Fidelity") {
		t.Error("a packet-level run's page speaks of fidelity")
	}
	c.Fidelity = cluster.FidelityAuto
	if m := regexp.MustCompile(`Fidelity auto: (\d+\.\d)% of the O-NICs' time carried at the transfer level, in 1 steady stretch`).FindStringSubmatch(string(runPage(t, c))); m == nil || func() bool { v, _ := strconv.ParseFloat(m[1], 64); return v < 50 }() {
		t.Errorf("the page's fidelity line: %q", m)
	}
}

// TestPageInBrowser opens the page in headless Chromium: it loads with no
// console message at all, its DOM has the four charts with their
// plotted lines, and the screenshot is not blank: it shows the chart
// colours of both flows.
func TestPageInBrowser(t *testing.T) {
	tools.Long(t)
	chromium := tools.Require(t, "chromium")
	dir := t.TempDir()
	file := filepath.Join(dir, "run.html")
	if err := os.WriteFile(file, runPage(t, scenario.Phased()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(chromium, append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
			"--enable-logging=stderr", "--v=0", "--user-data-dir=" + filepath.Join(dir, "profile")}, args...)...)
		cmd.Dir = dir
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, e.String())
		}
		return o.String(), e.String()
	}
	dom, logs := run("--dump-dom", "file://"+file)
	for _, l := range strings.Split(logs, "\n") {
		// Chromium logs every console message (error or not) as
		// ...:CONSOLE...; the page's script logs nothing, so any is a
		// fault.
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console message: %s", l)
		}
	}
	figs := regexp.MustCompile(`(?s)<figure class="chart[^"]*" data-chart="(\w+)">(.*?)</figure>`).FindAllStringSubmatch(dom, -1)
	if len(figs) != 4 {
		t.Fatalf("the browser's DOM has %d charts, want 4", len(figs))
	}
	for _, f := range figs {
		if !strings.Contains(f[2], "<svg") || strings.Count(f[2], "<path") < 3 {
			t.Errorf("chart %s has no drawing in the browser's DOM", f[1])
		}
	}
	shot := filepath.Join(dir, "shot.png")
	run("--window-size=1100,2400", "--screenshot="+shot, "file://"+file)
	fh, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	// plotutil's first two colours draw the two flows.
	red, green, ink := 0, 0, 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			switch {
			case r > 200 && g < 120 && b < 130:
				red++
			case g > 150 && r < 140 && b < 140:
				green++
			}
			if r < 128 && g < 128 && b < 128 {
				ink++
			}
		}
	}
	if red < 200 || green < 200 || ink < 5000 {
		t.Errorf("the screenshot looks blank: %d red, %d green, %d dark pixels of %d", red, green, ink, area(bounds))
	}
}

func area(r image.Rectangle) int { return r.Dx() * r.Dy() }
