// Queues: load per queue; quota columns (nominal, used, borrowed) appear when the API has them.

import * as api from './api.js';
import { h } from './dom.js';

const BASE = [
  ['name', 'Queue'], ['pending', 'Pending jobs'], ['running', 'Running jobs'],
  ['gpusRunning', 'GPUs running'], ['gpusPending', 'GPUs pending'],
];
// Shown only when some queue carries them (queues with quotas and fair share come later).
const OPTIONAL = [
  ['cohort', 'Cohort'], ['nominalGpus', 'Quota (nominal GPUs)'], ['usedGpus', 'Quota used'],
  ['borrowedGpus', 'Borrowed'], ['lentGpus', 'Lent'], ['fairShare', 'Fair share'],
];

function cell(v) {
  if (v == null) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export const queues = {
  mount(root) {
    const head = h('tr');
    const body = h('tbody');
    root.append(h('h1', {}, 'Queues'),
      h('table', { id: 'queues-table' }, h('caption', { class: 'visually-hidden' }, 'Queues and their load'),
        h('thead', {}, head), body));
    this.refresh = async () => {
      const list = await api.get('/api/v1/queues');
      const cols = [...BASE, ...OPTIONAL.filter(([k]) => list.some((q) => q[k] != null))];
      head.replaceChildren(...cols.map(([k, label]) => h('th', { scope: 'col', class: k === 'name' || k === 'cohort' ? null : 'num' }, label)));
      body.replaceChildren(...list.map((q) => h('tr', { 'data-queue': q.name },
        cols.map(([k]) => (k === 'name'
          ? h('th', { scope: 'row' }, h('a', { href: `#/jobs` , 'data-queue-link': q.name }, q.name))
          : h('td', { class: k === 'cohort' ? null : 'num' }, cell(q[k])))))));
      for (const a of body.querySelectorAll('a[data-queue-link]')) {
        a.addEventListener('click', (e) => {
          e.preventDefault();
          location.hash = '#/jobs';
          setTimeout(() => {
            const input = document.getElementById('filter-queue');
            if (input) {
              input.value = a.dataset.queueLink;
              input.form.dispatchEvent(new Event('input'));
            }
          }, 0);
        });
      }
    };
    return this;
  },
};
