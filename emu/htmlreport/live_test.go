package htmlreport

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"onic/emu/scenario"
	"onic/testbenches/tools"
)

// selfCheck is appended to a copy of the page by TestPageInteractive (the
// page itself ships no test code): in the browser it hovers over the
// interactive throughput chart, drags across it and double-clicks it, and
// measures every label of every visible chart once the fonts are loaded,
// then writes what it found into <pre id="selfcheck"> for --dump-dom to
// carry out.
const selfCheck = `<script>
document.fonts.ready.then(function () {
  var out = [], bad = 0;
  function fail(m) { out.push("FAIL " + m); bad++; }
  try {
    var fig = document.querySelector('figure[data-chart="throughput"]');
    var live = fig.querySelector(".live svg");
    var data = JSON.parse(document.getElementById("onic-series").textContent);
    var end = data.duration_ns / 1e3;
    if (!live) { throw "no interactive chart"; }
    var n = live.querySelectorAll("polyline.series").length;
    if (n !== data.flows.length) { fail(n + " lines for " + data.flows.length + " flows"); }
    if (live.querySelectorAll("rect.span").length !== data.spans.length) { fail("spans not shaded"); }
    var frame = live.querySelector("rect.frame").getBoundingClientRect(), y = frame.top + frame.height / 2;
    function ev(type, f, target) {
      (target || live).dispatchEvent(new MouseEvent(type, { clientX: frame.left + frame.width * f, clientY: y, bubbles: true }));
    }
    ev("mousemove", 0.005);
    var tip = fig.querySelector(".tip");
    if (tip.hidden) { fail("no tooltip on hover"); }
    var first = "t = 0 to " + (data.bucket_ns / 1e3);
    if (tip.textContent.indexOf(first) !== 0) { fail("tooltip " + JSON.stringify(tip.textContent) + " does not start " + first); }
    data.flows.forEach(function (f) {
      var want = f.name + ": " + f.gbps[0].toFixed(2) + " Gb/s";
      if (tip.textContent.indexOf(want) < 0) { fail("tooltip lacks " + JSON.stringify(want)); }
    });
    out.push("hover " + JSON.stringify(tip.textContent));
    ev("mousedown", 0.2); ev("mousemove", 0.4); ev("mouseup", 0.4, window);
    var x0 = +live.getAttribute("data-x0"), x1 = +live.getAttribute("data-x1");
    if (!(x0 > end * 0.19 && x0 < end * 0.21 && x1 > end * 0.39 && x1 < end * 0.41)) { fail("drag zoomed to " + x0 + " to " + x1 + " of " + end); }
    out.push("zoom " + x0 + " " + x1);
    live.dispatchEvent(new MouseEvent("dblclick", { bubbles: true }));
    if (+live.getAttribute("data-x0") !== 0 || +live.getAttribute("data-x1") !== end) { fail("double click did not zoom out"); }
  } catch (e) { fail("exception " + e); }
  var charts = 0, labels = 0;
  document.querySelectorAll("svg").forEach(function (svg, i) {
    var s = svg.getBoundingClientRect();
    if (s.width === 0) { return; }
    charts++;
    var boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width === 0 || !t.textContent.trim()) { return; }
      labels++;
      if (r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1) {
        fail("chart " + i + ": label " + JSON.stringify(t.textContent) + " runs out of the chart (" + [r.left, r.top, r.right, r.bottom].map(Math.round) + " in " + [s.left, s.top, s.right, s.bottom].map(Math.round) + ")");
      }
      boxes.forEach(function (o) {
        var w = Math.min(r.right, o.r.right) - Math.max(r.left, o.r.left), h = Math.min(r.bottom, o.r.bottom) - Math.max(r.top, o.r.top);
        if (w > 1 && h > 1) { fail("chart " + i + ": labels " + JSON.stringify(o.t) + " and " + JSON.stringify(t.textContent) + " overlap"); }
      });
      boxes.push({ r: r, t: t.textContent });
    });
  });
  out.push(charts + " charts, " + labels + " labels measured");
  var pre = document.createElement("pre");
  pre.id = "selfcheck";
  pre.textContent = (bad ? "" : "ok\n") + out.join("\n");
  document.body.appendChild(pre);
});
</script>
`

// TestPageInteractive: in headless Chromium at a normal window size
// (1280 x 900), the phased run's page draws its interactive throughput
// chart with a line per flow and the MEMS switch's dark time shaded;
// hovering shows each flow's rate in the interval under the pointer,
// dragging zooms to that stretch and a double click zooms out; no label
// of any visible chart runs out of it or overlaps another; and the page
// logs nothing to the console.
func TestPageInteractive(t *testing.T) {
	tools.Long(t)
	chromium := tools.Require(t, "chromium")
	dir := t.TempDir()
	page := runPage(t, scenario.Phased())
	i := bytes.LastIndex(page, []byte("</body>"))
	page = append(page[:i:i], append([]byte(selfCheck), page[i:]...)...)
	file := filepath.Join(dir, "run.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,900",
		"--enable-logging=stderr", "--v=0", "--user-data-dir="+filepath.Join(dir, "profile"), "--virtual-time-budget=10000",
		"--dump-dom", "file://"+file)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, e.String())
	}
	for _, l := range strings.Split(e.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console message: %s", l)
		}
	}
	m := regexp.MustCompile(`(?s)<pre id="selfcheck">(.*?)</pre>`).FindStringSubmatch(o.String())
	if m == nil {
		t.Fatalf("the self-check wrote nothing: the page's script failed?\n%s", e.String())
	}
	res := strings.NewReplacer("&quot;", `"`, "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(m[1])
	if !strings.HasPrefix(res, "ok\n") {
		t.Errorf("in the browser:\n%s", res)
	}
	t.Logf("%s", res)
}
