// The throughput chart, interactive: the page's data (#onic-series) drawn
// again as SVG that answers the pointer. Hovering shows every flow's rate
// in the interval under the pointer; dragging across the chart zooms to
// that stretch of time; a double click, or "Whole run", zooms out. The
// static chart stays in the page for readers without scripts and for
// print. Written for onic (emu/htmlreport); no library, nothing fetched.
(function () {
  "use strict";
  var src = document.getElementById("onic-series");
  var fig = document.querySelector('figure[data-chart="throughput"]');
  if (!src || !fig) { return; }
  var data = JSON.parse(src.textContent);
  if (!data.flows.length) { return; }
  var NS = "http://www.w3.org/2000/svg";
  var W = 760, H = 320, L = 64, R = 16, T = 14, B = 46;
  var bucketUs = data.bucket_ns / 1e3, endUs = data.duration_ns / 1e3;
  var view = { x0: 0, x1: endUs };

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  // ticks are round values from lo to hi, about n of them.
  function ticks(lo, hi, n) {
    var raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
    var step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) { out.push(+v.toPrecision(12)); }
    return out;
  }
  function fmt(v) { return Math.abs(v) >= 1000 || v === Math.round(v) ? String(Math.round(v)) : v.toPrecision(3); }

  var box = document.createElement("div");
  box.className = "live";
  var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "throughput over time, interactive" });
  box.appendChild(svg);
  var tip = document.createElement("div");
  tip.className = "tip";
  tip.hidden = true;
  box.appendChild(tip);
  var legend = document.createElement("div");
  legend.className = "legend";
  data.flows.forEach(function (f, i) {
    var item = document.createElement("span");
    var sw = document.createElement("i");
    sw.style.background = data.colours[i % data.colours.length];
    item.appendChild(sw);
    item.appendChild(document.createTextNode(f.name));
    legend.appendChild(item);
  });
  var reset = document.createElement("button");
  reset.type = "button";
  reset.textContent = "Whole run";
  reset.addEventListener("click", function () { zoom(0, endUs); });
  legend.appendChild(reset);
  box.appendChild(legend);
  fig.insertBefore(box, fig.firstChild);
  fig.classList.add("interactive");

  var sx, sy, plotG, cursor, band;
  function draw() {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var b0 = Math.max(0, Math.floor(view.x0 / bucketUs)), b1 = Math.min(data.flows[0].gbps.length - 1, Math.ceil(view.x1 / bucketUs));
    var top = 1;
    data.flows.forEach(function (f) {
      for (var b = b0; b <= b1; b++) { top = Math.max(top, f.gbps[b]); }
    });
    var yt = ticks(0, top * 1.05, 6), ymax = yt[yt.length - 1] < top ? top * 1.05 : yt[yt.length - 1];
    sx = function (x) { return L + (x - view.x0) / (view.x1 - view.x0) * (W - L - R); };
    sy = function (y) { return H - B - y / ymax * (H - T - B); };
    var clip = el("clipPath", { id: "plot-area" }, el("defs", {}, svg));
    el("rect", { x: L, y: T, width: W - L - R, height: H - T - B }, clip);
    plotG = el("g", { "clip-path": "url(#plot-area)" }, svg);
    data.spans.forEach(function (s) {
      var a = Math.max(s.start_ns / 1e3, view.x0), z = Math.min(Math.max(s.end_ns, s.start_ns + data.duration_ns / 500) / 1e3, view.x1);
      if (z <= a) { return; }
      var r = el("rect", { x: sx(a), y: T, width: sx(z) - sx(a), height: H - T - B, "class": "span " + s.kind }, plotG);
      el("title", {}, r).textContent = s.kind + ": " + s.name;
    });
    var axes = el("g", { "class": "axes" }, svg);
    yt.forEach(function (v) {
      el("line", { x1: L, x2: W - R, y1: sy(v), y2: sy(v), "class": "grid" }, axes);
      el("text", { x: L - 6, y: sy(v) + 4, "text-anchor": "end" }, axes).textContent = fmt(v);
    });
    ticks(view.x0, view.x1, 7).forEach(function (v) {
      if (v < view.x0 || v > view.x1) { return; }
      el("line", { x1: sx(v), x2: sx(v), y1: T, y2: H - B, "class": "grid" }, axes);
      el("text", { x: sx(v), y: H - B + 16, "text-anchor": "middle" }, axes).textContent = fmt(v);
    });
    el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, "class": "frame" }, axes);
    el("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, axes).textContent = "simulated time (µs)";
    el("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" }, axes).textContent = "delivered (Gb/s)";
    data.flows.forEach(function (f, i) {
      var pts = [];
      for (var b = Math.max(0, b0 - 1); b <= Math.min(f.gbps.length - 1, b1 + 1); b++) {
        pts.push(sx((b + 0.5) * bucketUs).toFixed(1) + "," + sy(f.gbps[b]).toFixed(1));
      }
      el("polyline", { points: pts.join(" "), stroke: data.colours[i % data.colours.length], "class": "series" }, plotG);
    });
    cursor = el("line", { y1: T, y2: H - B, "class": "cursor", visibility: "hidden" }, plotG);
    band = el("rect", { y: T, height: H - T - B, "class": "band", visibility: "hidden" }, plotG);
    svg.setAttribute("data-x0", view.x0);
    svg.setAttribute("data-x1", view.x1);
  }
  function zoom(a, z) {
    view.x0 = Math.max(0, Math.min(a, z));
    view.x1 = Math.min(endUs, Math.max(a, z));
    if (view.x1 - view.x0 < 2 * bucketUs) { view.x1 = Math.min(endUs, view.x0 + 2 * bucketUs); view.x0 = view.x1 - 2 * bucketUs; }
    tip.hidden = true;
    draw();
  }
  // at is the simulated time (µs) under a pointer event, or null outside
  // the plotting area.
  function at(ev) {
    var p = svg.createSVGPoint();
    p.x = ev.clientX;
    p.y = ev.clientY;
    var q = p.matrixTransform(svg.getScreenCTM().inverse());
    if (q.x < L || q.x > W - R || q.y < T || q.y > H - B) { return null; }
    return view.x0 + (q.x - L) / (W - L - R) * (view.x1 - view.x0);
  }
  var dragFrom = null;
  svg.addEventListener("mousemove", function (ev) {
    var x = at(ev);
    if (x === null) { cursor.setAttribute("visibility", "hidden"); tip.hidden = true; return; }
    if (dragFrom !== null) {
      band.setAttribute("x", sx(Math.min(dragFrom, x)));
      band.setAttribute("width", Math.abs(sx(x) - sx(dragFrom)));
      band.setAttribute("visibility", "visible");
    }
    var b = Math.min(data.flows[0].gbps.length - 1, Math.max(0, Math.floor(x / bucketUs)));
    var mid = (b + 0.5) * bucketUs;
    cursor.setAttribute("x1", sx(mid));
    cursor.setAttribute("x2", sx(mid));
    cursor.setAttribute("visibility", "visible");
    var lines = ["t = " + fmt(b * bucketUs) + " to " + fmt((b + 1) * bucketUs) + " µs"];
    data.flows.forEach(function (f) { lines.push(f.name + ": " + f.gbps[b].toFixed(2) + " Gb/s"); });
    data.spans.forEach(function (s) {
      if (s.start_ns / 1e3 < (b + 1) * bucketUs && s.end_ns / 1e3 > b * bucketUs) { lines.push(s.kind + ": " + s.name); }
    });
    tip.textContent = lines.join("\n");
    tip.hidden = false;
    var r = box.getBoundingClientRect();
    var left = ev.clientX - r.left + 14;
    tip.style.left = Math.min(left, r.width - tip.offsetWidth - 4) + "px";
    tip.style.top = Math.max(0, ev.clientY - r.top - tip.offsetHeight - 8) + "px";
  });
  svg.addEventListener("mouseleave", function () { cursor.setAttribute("visibility", "hidden"); tip.hidden = true; });
  svg.addEventListener("mousedown", function (ev) { dragFrom = at(ev); ev.preventDefault(); });
  window.addEventListener("mouseup", function (ev) {
    if (dragFrom === null) { return; }
    var x = at(ev), from = dragFrom;
    dragFrom = null;
    band.setAttribute("visibility", "hidden");
    if (x !== null && Math.abs(sx(x) - sx(from)) > 5) { zoom(from, x); }
  });
  svg.addEventListener("dblclick", function () { zoom(0, endUs); });
  draw();
}());
