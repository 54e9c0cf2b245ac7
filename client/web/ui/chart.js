// chart.js: small line charts as inline SVG, drawn here (no library), with
// each bucket's values as a tooltip.
// Colours and strokes are SVG attributes, never style attributes, so the
// strict CSP (no inline style) holds.

const NS = 'http://www.w3.org/2000/svg';
const W = 600;
const H = 150;
const PAD = { l: 44, r: 8, t: 8, b: 18 };

function el(tag, attrs, ...children) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) e.append(c);
  return e;
}

// "1 day 02:03:04.5" or "00:00:00.25" (PostgreSQL's interval output) in seconds
export function intervalSeconds(v) {
  if (v === null || v === undefined) return null;
  const m = /^(?:(-?\d+) days? ?)?(-?)(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(String(v));
  if (!m) return null;
  const s = Number(m[3]) * 3600 + Number(m[4]) * 60 + Number(m[5]);
  return (m[1] ? Number(m[1]) * 86400 : 0) + (m[2] ? -s : s);
}

export function fmtSeconds(s) {
  if (s === null || s === undefined) return '';
  if (s < 1) return Math.round(s * 1000) + ' ms';
  if (s < 120) return (Math.round(s * 10) / 10) + ' s';
  if (s < 7200) return Math.round(s / 60) + ' min';
  return Math.round(s / 3600) + ' h';
}

// lineChart(title, times, series [{name, values, colour}], format): a
// figure with the chart and its legend; null values are gaps
export function lineChart(title, times, series, format) {
  const fmt = format || ((v) => String(Math.round(v)));
  let max = 0;
  for (const s of series) for (const v of s.values) if (v !== null && v > max) max = v;
  if (max === 0) max = 1;
  const n = Math.max(times.length - 1, 1);
  const x = (i) => PAD.l + (W - PAD.l - PAD.r) * i / n;
  const y = (v) => PAD.t + (H - PAD.t - PAD.b) * (1 - v / max);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, class: 'chart' },
    el('line', { x1: PAD.l, y1: y(0), x2: W - PAD.r, y2: y(0), stroke: '#dcdcd8' }),
    el('line', { x1: PAD.l, y1: y(max), x2: W - PAD.r, y2: y(max), stroke: '#eeeeea' }),
    el('text', { x: PAD.l - 4, y: y(max) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#6b6f73' }, fmt(max)),
    el('text', { x: PAD.l - 4, y: y(0) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#6b6f73' }, fmt(0)));
  if (times.length) {
    const t0 = new Date(times[0]);
    const t1 = new Date(times[times.length - 1]);
    svg.append(el('text', { x: PAD.l, y: H - 4, 'font-size': 11, fill: '#6b6f73' }, t0.toLocaleString()),
      el('text', { x: W - PAD.r, y: H - 4, 'text-anchor': 'end', 'font-size': 11, fill: '#6b6f73' }, t1.toLocaleString()));
  }
  for (const s of series) {
    let d = '';
    let pen = false;
    s.values.forEach((v, i) => {
      if (v === null) { pen = false; return; }
      d += (pen ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1) + ' ';
      pen = true;
    });
    if (d) svg.append(el('path', { d, fill: 'none', stroke: s.colour, 'stroke-width': 1.8 }));
  }
  // hover values: a transparent strip per bucket whose <title> (the
  // browser's tooltip) says the time and every series' value there
  const step = (W - PAD.l - PAD.r) / Math.max(times.length, 1);
  times.forEach((t, i) => {
    const lines = [new Date(t).toLocaleString()].concat(series.map((sr) =>
      sr.name + ': ' + (sr.values[i] === null || sr.values[i] === undefined ? '–' : fmt(sr.values[i]))));
    const title = el('title', {});
    title.textContent = lines.join('\n');
    svg.append(el('rect', { class: 'hover', x: (x(i) - step / 2).toFixed(1), y: PAD.t, width: step.toFixed(1),
      height: H - PAD.t - PAD.b, fill: '#000', 'fill-opacity': 0 }, title));
  });
  const legend = document.createElement('figcaption');
  legend.append(title);
  for (const s of series) {
    const k = document.createElementNS(NS, 'svg');
    k.setAttribute('width', '14');
    k.setAttribute('height', '4');
    k.setAttribute('class', 'key');
    k.append(el('rect', { width: 14, height: 4, fill: s.colour }));
    legend.append(k, s.name);
  }
  const fig = document.createElement('figure');
  fig.append(svg, legend);
  return fig;
}

// sparkline(values, label): a tiny line without axes, for a table cell
export function sparkline(values, label) {
  const w = 100;
  const h2 = 20;
  const max = Math.max(1, ...values);
  const n = Math.max(values.length - 1, 1);
  const d = values.map((v, i) => (i ? 'L' : 'M') + (w * i / n).toFixed(1) + ' ' + (h2 - 1 - (h2 - 2) * v / max).toFixed(1)).join(' ');
  return el('svg', { viewBox: `0 0 ${w} ${h2}`, width: w, height: h2, class: 'spark', role: 'img', 'aria-label': label },
    el('path', { d: d || 'M0 19 L100 19', fill: 'none', stroke: '#2e7d32', 'stroke-width': 1.5 }));
}
