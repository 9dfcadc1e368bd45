#include "sim/html/internal/assets.hpp"

namespace exasim::html::internal {

const std::string& page_css() {
  static const std::string css = R"CSS(
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d2733; background: #f4f6f8; }
header { background: #1d2733; color: #fff; padding: 14px 24px; }
header h1 { margin: 0 0 4px 0; font-size: 20px; }
header p { margin: 0; color: #c9d3dd; }
main { padding: 8px 24px 24px 24px; max-width: 1240px; }
section { background: #fff; border-radius: 6px; padding: 12px 16px; margin-top: 14px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
h2 { font-size: 16px; margin: 0 0 8px 0; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 10px; }
.card { background: #eef2f6; border-radius: 5px; padding: 8px 12px; min-width: 150px; }
.card .v { font-size: 22px; font-weight: 600; }
.card .k { color: #5a6b7b; font-size: 12px; }
svg.chart { width: 100%; height: auto; display: block; font-size: 12px; }
svg.chart.line { width: 32%; min-width: 300px; display: inline-block; }
svg.timeline { font-size: 11px; user-select: none; cursor: grab; }
.bar-bg { fill: #e3e8ed; }
.lane-bg { fill: #f7f9fb; }
.grid { stroke: #dde3e8; stroke-width: 1; }
.axis { stroke: #8795a1; }
.chart-title { font-weight: 600; }
.rank-label { font-weight: 600; }
.lane-label { fill: #8795a1; font-size: 9px; }
rect.ev:hover { stroke: #000; stroke-width: 0.6; vector-effect: non-scaling-stroke; }
table { border-collapse: collapse; font-size: 13px; margin-top: 6px; }
th, td { padding: 3px 10px; text-align: right; border-bottom: 1px solid #e6eaee; }
th:first-child, td:first-child { text-align: left; }
.note { color: #5a6b7b; font-size: 12px; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.controls button { margin-right: 6px; }
#timeline-info { font-family: ui-monospace, monospace; font-size: 12px; min-height: 18px; color: #1d2733; }
#js-status { background: #b00020; color: #fff; padding: 8px 24px; white-space: pre-wrap; }
.matrix td { text-align: center; padding: 0; width: 18px; height: 18px; font-size: 0; border: 1px solid #fff; }
.err { color: #b00020; }
)CSS";
  return css;
}

const std::string& error_trap_script() {
  static const std::string js = R"JS(
(function () {
  var status = document.getElementById('js-status');
  function record(what) {
    var n = Number(status.getAttribute('data-errors')) + 1;
    status.setAttribute('data-errors', String(n));
    status.hidden = false;
    status.textContent += 'JavaScript error ' + n + ': ' + what + '\n';
  }
  window.addEventListener('error', function (e) { record((e.message || 'error') + ' at line ' + (e.lineno || '?')); });
  window.addEventListener('unhandledrejection', function (e) { record('unhandled rejection: ' + e.reason); });
  var original = console.error;
  console.error = function () {
    record('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return original.apply(console, arguments);
  };
})();
)JS";
  return js;
}

const std::string& page_script() {
  static const std::string js = R"JS(
(function () {
  var svg = document.getElementById('timeline');
  if (svg) {
    var plot = document.getElementById('timeline-plot');
    var axis = document.getElementById('timeline-axis');
    var info = document.getElementById('timeline-info');
    var vb = plot.getAttribute('viewBox').split(' ').map(Number);
    var W = vb[2], top = vb[1], H = vb[3], endS = Number(svg.getAttribute('data-end-s'));
    var x0 = 0, w = W, NS = 'http://www.w3.org/2000/svg';
    var axisTop = 20, axisBottom = Number(svg.getAttribute('viewBox').split(' ')[3]);
    function fmt(s) {
      var a = Math.abs(s);
      if (a >= 1 || a === 0) return s.toPrecision(4).replace(/\.?0+$/, '') + ' s';
      if (a >= 1e-3) return (s * 1e3).toPrecision(4).replace(/\.?0+$/, '') + ' ms';
      return (s * 1e6).toPrecision(4).replace(/\.?0+$/, '') + ' us';
    }
    function drawAxis() {
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      var t0 = x0 / W * endS, t1 = (x0 + w) / W * endS, raw = (t1 - t0) / 10;
      var mag = Math.pow(10, Math.floor(Math.log10(raw))), step = mag;
      [1, 2, 5, 10].some(function (m) { step = m * mag; return m * mag >= raw; });
      for (var t = Math.ceil(t0 / step) * step; t <= t1 + step * 1e-9; t += step) {
        var x = (t / endS * W - x0) / w * W;
        var line = document.createElementNS(NS, 'line');
        line.setAttribute('x1', x); line.setAttribute('x2', x);
        line.setAttribute('y1', axisTop); line.setAttribute('y2', axisBottom);
        line.setAttribute('class', 'grid');
        var text = document.createElementNS(NS, 'text');
        text.setAttribute('x', x); text.setAttribute('y', 16); text.setAttribute('text-anchor', 'middle');
        text.textContent = fmt(t);
        axis.appendChild(line); axis.appendChild(text);
      }
    }
    function apply() {
      w = Math.min(W, Math.max(W / 2000, w));
      x0 = Math.min(W - w, Math.max(0, x0));
      plot.setAttribute('viewBox', x0 + ' ' + top + ' ' + w + ' ' + H);
      drawAxis();
    }
    function zoomAt(fraction, factor) {
      var at = x0 + fraction * w;
      w = w * factor;
      x0 = at - fraction * w;
      apply();
    }
    function fractionOf(e) {
      var box = plot.getBoundingClientRect();
      return Math.min(1, Math.max(0, (e.clientX - box.left) / box.width));
    }
    svg.addEventListener('wheel', function (e) { e.preventDefault(); zoomAt(fractionOf(e), e.deltaY < 0 ? 0.8 : 1.25); }, { passive: false });
    var drag = null;
    svg.addEventListener('mousedown', function (e) { drag = { x: e.clientX, x0: x0 }; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var box = plot.getBoundingClientRect();
      x0 = drag.x0 - (e.clientX - drag.x) / box.width * w;
      apply();
    });
    svg.addEventListener('dblclick', function () { x0 = 0; w = W; apply(); });
    plot.addEventListener('mouseover', function (e) {
      var title = e.target.querySelector ? e.target.querySelector('title') : null;
      info.textContent = title ? title.textContent : '';
    });
    document.getElementById('zoom-in').addEventListener('click', function () { zoomAt(0.5, 0.5); });
    document.getElementById('zoom-out').addEventListener('click', function () { zoomAt(0.5, 2); });
    document.getElementById('zoom-reset').addEventListener('click', function () { x0 = 0; w = W; apply(); });
    apply();
  }
  document.getElementById('js-status').setAttribute('data-ready', '1');
})();
)JS";
  return js;
}

}  // namespace exasim::html::internal
