// Cluster map: zone > block > rack > node > NVLink domain > GPU, one cell per GPU, colored by
// the job holding it or by the node's state; each cell's title names the job and the health.

import * as api from './api.js';
import { h, jobColor } from './dom.js';

function group(list, key) {
  const m = new Map();
  for (const x of list) {
    const k = key(x) || '-';
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(x);
  }
  return [...m.entries()].sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }));
}

function health(n) {
  const parts = [`node ${n.state}`];
  if (n.reason) parts.push(n.reason);
  if (n.liveness && n.liveness !== 'ALIVE') parts.push(`liveness ${n.liveness}${n.phi != null ? ` (phi ${n.phi})` : ''}`);
  return parts.join('; ');
}

export const cluster = {
  mount(root) {
    let colorBy = 'job';
    const map = h('div', { id: 'cluster-map' });
    const summary = h('p', { class: 'muted', id: 'cluster-summary' });
    const toggle = ['job', 'state'].map((mode) => h('button', {
      type: 'button', 'data-color-by': mode, 'aria-pressed': String(mode === colorBy),
      onclick: () => {
        colorBy = mode;
        for (const b of toggle) b.setAttribute('aria-pressed', String(b.dataset.colorBy === mode));
        this.refresh();
      },
    }, mode === 'job' ? 'Color by job' : 'Color by state'));
    root.append(
      h('h1', {}, 'Cluster map'),
      h('div', { class: 'toolbar' },
        h('div', { role: 'group', 'aria-label': 'Coloring' }, toggle),
        h('ul', { class: 'legend', 'aria-label': 'Legend' },
          h('li', {}, h('span', { class: 'swatch free', 'aria-hidden': 'true' }), 'free'),
          h('li', {}, h('span', { class: 'swatch busy', 'aria-hidden': 'true' }), 'busy (by job: one color per job)'),
          h('li', {}, h('span', { class: 'swatch drained', 'aria-hidden': 'true' }), 'drained'),
          h('li', {}, h('span', { class: 'swatch down', 'aria-hidden': 'true' }), 'down; an amber frame: liveness suspect'))),
      summary, map);

    this.refresh = async () => {
      const [nodes, running] = await Promise.all([
        api.get('/api/v1/nodes'),
        api.get('/api/v1/jobs?state=RUNNING'),
      ]);
      const jobs = new Map(running.map((j) => [j.id, j]));
      let cells = 0;
      const zones = group(nodes, (n) => n.zone).map(([zone, zn]) => h('section', {
        class: 'zone', 'aria-label': `Zone ${zone}`,
      },
      h('h2', {}, `Zone ${zone}`),
      group(zn, (n) => n.block).map(([block, bn]) => h('div', { class: 'block' },
        h('h3', {}, `Block ${block}`),
        h('div', { class: 'racks' }, group(bn, (n) => n.rack).map(([rack, rn]) => h('div', { class: 'rack' },
          h('h3', {}, `Rack ${rack}`),
          h('ul', { class: 'nodes' }, rn.sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))
            .map((n) => {
              const size = n.nvlinkDomainSize > 0 ? n.nvlinkDomainSize : Math.max(1, n.gpus);
              const domains = [];
              for (let d = 0; d * size < n.gpus; d++) {
                const gpus = [];
                for (let i = d * size; i < Math.min(n.gpus, (d + 1) * size); i++) {
                  const jobId = n.gpuJobs?.[i] ?? null;
                  const j = jobId != null ? jobs.get(jobId) : null;
                  const what = jobId != null
                    ? `job ${jobId}${j ? ` ${j.name} (${j.user}, queue ${j.queue})` : ''}`
                    : 'free';
                  const out = n.gpusOutOfService?.[i];
                  const title = `${n.name} GPU ${i} (NVLink domain ${d}): ${what}${out ? `; out of service: ${out}` : ''}; ${health(n)}`;
                  const cell = h('span', {
                    class: `gpu${jobId != null ? ' busy' : ''}${out ? ' out' : ''}`, role: 'img', tabindex: '0',
                    title, 'aria-label': title, 'data-node': n.name, 'data-gpu': i,
                    'data-job': jobId != null ? jobId : null,
                  });
                  if (jobId != null) {
                    cell.style.backgroundColor = colorBy === 'job' ? jobColor(jobId) : 'var(--accent)';
                  }
                  cells++;
                  gpus.push(cell);
                }
                domains.push(h('span', { class: 'nvlink', title: `NVLink domain ${d}` }, gpus));
              }
              return h('li', {
                class: `node ${n.state} ${n.liveness || ''}`, 'data-node': n.name,
                title: `${n.name}: ${n.gpusUsed}/${n.gpus} GPUs busy${n.gpuModel ? ` (${n.gpuModel})` : ''}; ${health(n)}`,
              },
              h('span', { class: 'name' }, n.name,
                n.state !== 'UP' ? h('span', { class: `badge state ${n.state === 'DOWN' ? 'FAILED' : 'CANCELLED'}` }, n.state) : null,
                n.liveness === 'SUSPECT' ? h('span', { class: 'badge state PENDING' }, 'SUSPECT') : null),
              h('span', { class: 'gpus' }, domains));
            })))))))));
      summary.textContent = `${nodes.length} nodes, ${cells} GPUs, ${running.length} jobs running.`;
      map.replaceChildren(...zones);
    };
    return this;
  },
};
