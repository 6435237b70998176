// The utilization chart: inline SVG, GPUs busy (area) against GPUs in service (dashed line),
// and the queue depth; a text summary for screen readers.

import { h, s } from './dom.js';

const W = 900;
const H = 240;
const PAD = { left: 44, right: 44, top: 12, bottom: 26 };

function label(date, spanMs) {
  return spanMs > 2 * 86400e3
    ? date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
    : date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

export function utilizationChart(view, windowMs) {
  const points = view.points;
  const now = Date.now();
  const t0 = now - windowMs;
  const maxGpus = Math.max(4, ...points.map((p) => Math.max(p.gpusTotal, p.gpusBusy)));
  const maxPending = Math.max(4, ...points.map((p) => p.pending));
  const x = (t) => PAD.left + ((t - t0) / windowMs) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / maxGpus) * (H - PAD.top - PAD.bottom);
  const yq = (v) => H - PAD.bottom - (v / maxPending) * (H - PAD.top - PAD.bottom);
  const res = view.resolutionSec * 1000;

  const busy = [];
  const total = [];
  const pending = [];
  for (const p of points) {
    const a = Date.parse(p.at);
    for (const t of [a, Math.min(a + res, now)]) {
      busy.push(`${x(t).toFixed(1)},${y(p.gpusBusy).toFixed(1)}`);
      total.push(`${x(t).toFixed(1)},${y(p.gpusTotal).toFixed(1)}`);
      pending.push(`${x(t).toFixed(1)},${yq(p.pending).toFixed(1)}`);
    }
  }
  const base = y(0).toFixed(1);
  const grid = [];
  for (let i = 0; i <= 4; i++) {
    const v = (maxGpus * i) / 4;
    grid.push(s('line', { class: 'grid', x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v) }));
    grid.push(s('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, Number(v.toFixed(1))));
    grid.push(s('text', { x: W - PAD.right + 6, y: yq((maxPending * i) / 4) + 4 },
      Number(((maxPending * i) / 4).toFixed(1))));
  }
  for (let i = 0; i <= 6; i++) {
    const t = t0 + (windowMs * i) / 6;
    grid.push(s('text', { x: x(t), y: H - 6, 'text-anchor': i === 0 ? 'start' : i === 6 ? 'end' : 'middle' },
      label(new Date(t), windowMs)));
  }
  const avg = points.length
    ? points.reduce((sum, p) => sum + (p.gpusTotal ? p.gpusBusy / p.gpusTotal : 0), 0) / points.length
    : 0;
  const peak = points.reduce((m, p) => Math.max(m, p.gpusTotal ? p.gpusBusy / p.gpusTotal : 0), 0);
  const summary = points.length
    ? `Average GPU utilization ${Math.round(avg * 100)}%, peak ${Math.round(peak * 100)}%, over ${points.length} points.`
    : 'No samples yet in this window (the leader samples every 10 seconds).';

  const svg = s('svg', {
    class: 'chart', id: 'utilization-chart', viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-labelledby': 'chart-title chart-desc', preserveAspectRatio: 'none',
  },
  s('title', { id: 'chart-title' }, 'GPU utilization'),
  s('desc', { id: 'chart-desc' }, summary),
  s('g', { class: 'axis' }, grid),
  busy.length ? s('polygon', {
    class: 'busy',
    points: `${busy[0].split(',')[0]},${base} ${busy.join(' ')} ${busy.at(-1).split(',')[0]},${base}`,
  }) : null,
  total.length ? s('polyline', { class: 'total', points: total.join(' ') }) : null,
  pending.length ? s('polyline', { class: 'pending', points: pending.join(' ') }) : null);

  return h('figure', { class: 'chart-figure', style: null },
    svg,
    h('figcaption', {},
      h('ul', { class: 'legend' },
        h('li', {}, h('span', { class: 'swatch busy', 'aria-hidden': 'true' }), 'GPUs busy (left axis)'),
        h('li', {}, h('span', { class: 'swatch total', 'aria-hidden': 'true' }), 'GPUs in service (left axis)'),
        h('li', {}, h('span', { class: 'swatch pending', 'aria-hidden': 'true' }), 'Jobs pending (right axis)')),
      h('p', { class: 'muted', id: 'chart-summary' }, summary)));
}
