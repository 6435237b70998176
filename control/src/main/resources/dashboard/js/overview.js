// Overview: GPUs by state, queue depth, running jobs, starts and ends, and the utilization chart.

import * as api from './api.js';
import { h } from './dom.js';
import { utilizationChart } from './chart.js';

const WINDOWS = [['1h', 3600e3], ['6h', 6 * 3600e3], ['24h', 86400e3], ['7d', 7 * 86400e3]];

/** GPU counts from GET /api/v1/nodes: busy, free (UP), drained (idle on DRAINED), down. */
export function gpuCounts(nodes) {
  const c = { busy: 0, free: 0, drained: 0, down: 0, total: 0 };
  for (const n of nodes) {
    c.total += n.gpus;
    if (n.state === 'DOWN') {
      c.down += n.gpus;
      continue;
    }
    c.busy += n.gpusUsed;
    if (n.state === 'DRAINED') c.drained += n.gpus - n.gpusUsed;
    else c.free += n.gpus - n.gpusUsed;
  }
  return c;
}

export const overview = {
  mount(root) {
    let windowName = '6h';
    const stats = h('dl', { class: 'stats', id: 'overview-stats' });
    const chartBox = h('div', { id: 'chart-box' });
    const buttons = WINDOWS.map(([name]) => h('button', {
      type: 'button', 'data-window': name, 'aria-pressed': String(name === windowName),
      onclick: () => {
        windowName = name;
        for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.window === name));
        this.refresh();
      },
    }, name));
    root.append(
      h('h1', {}, 'Overview'),
      h('section', { 'aria-labelledby': 'now-title' },
        h('h2', { id: 'now-title', class: 'visually-hidden' }, 'Now'), stats),
      h('section', { class: 'card', 'aria-labelledby': 'chart-heading' },
        h('div', { class: 'chart-head' },
          h('h2', { id: 'chart-heading' }, 'Utilization'),
          h('div', { role: 'group', 'aria-label': 'Window' }, buttons)),
        chartBox));

    const stat = (key, label, value, hint) => h('div', { 'data-stat': key },
      h('dt', {}, label), h('dd', { title: hint || null }, String(value)));

    this.refresh = async () => {
      const ms = WINDOWS.find(([n]) => n === windowName)[1];
      const [nodes, queues, util] = await Promise.all([
        api.get('/api/v1/nodes'),
        api.get('/api/v1/queues'),
        api.get(`/api/v1/stats/utilization?window=${windowName}`),
      ]);
      const g = gpuCounts(nodes);
      const pending = queues.reduce((n, q) => n + q.pending, 0);
      const running = queues.reduce((n, q) => n + q.running, 0);
      const started = util.points.reduce((n, p) => n + p.started, 0);
      const finished = util.points.reduce((n, p) => n + p.finished, 0);
      stats.replaceChildren(
        stat('gpus-busy', 'GPUs busy', g.busy),
        stat('gpus-free', 'GPUs free', g.free),
        stat('gpus-drained', 'GPUs drained', g.drained),
        stat('gpus-down', 'GPUs down', g.down),
        stat('nodes', 'Nodes', nodes.length),
        stat('pending', 'Queue depth (pending)', pending),
        stat('running', 'Jobs running', running),
        stat('started', `Jobs started (last ${windowName})`, started, 'counted by the leader since it took over'),
        stat('finished', `Jobs finished (last ${windowName})`, finished, 'counted by the leader since it took over'));
      chartBox.replaceChildren(utilizationChart(util, ms));
    };
    return this;
  },
};
