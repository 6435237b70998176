// Jobs: a table filtered by state, user, queue and text; a waiting job shows why and when.

import * as api from './api.js';
import { h, time, duration, stateBadge } from './dom.js';

const STATES = ['', 'PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];

export function waitText(j) {
  if (j.state !== 'PENDING') return '';
  const detail = (j.pendingDetail || '').replace(/; predicted start \S+$/, '');
  const parts = [j.pendingReason, detail].filter(Boolean);
  const when = j.predictedStart ? `predicted start ${time(j.predictedStart)}`
    : j.eligibleTime ? `not before ${time(j.eligibleTime)}` : '';
  return [parts.join(': '), when].filter(Boolean).join('; ');
}

export const jobs = {
  mount(root) {
    const filters = { state: '', user: '', queue: '', text: '' };
    const field = (id, label, control) => h('label', { for: id }, label, control);
    const state = h('select', { id: 'filter-state', name: 'state' },
      STATES.map((s) => h('option', { value: s }, s || 'any state')));
    const user = h('input', { id: 'filter-user', name: 'user', type: 'text', autocomplete: 'off' });
    const queue = h('input', { id: 'filter-queue', name: 'queue', type: 'text', autocomplete: 'off' });
    const text = h('input', { id: 'filter-text', name: 'text', type: 'search', autocomplete: 'off' });
    const count = h('p', { id: 'jobs-count', class: 'muted', 'aria-live': 'polite' });
    const body = h('tbody');
    const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Filter jobs' },
      field('filter-state', 'State', state), field('filter-user', 'User', user),
      field('filter-queue', 'Queue', queue), field('filter-text', 'Name, id or command', text));
    let timer = null;
    const changed = () => {
      filters.state = state.value;
      filters.user = user.value.trim();
      filters.queue = queue.value.trim();
      filters.text = text.value.trim().toLowerCase();
      clearTimeout(timer);
      timer = setTimeout(() => this.refresh(), 150);
    };
    form.addEventListener('input', changed);
    form.addEventListener('change', changed);
    form.addEventListener('submit', (e) => { e.preventDefault(); changed(); });
    root.append(h('h1', {}, 'Jobs'), form, count,
      h('table', { id: 'jobs-table' },
        h('caption', { class: 'visually-hidden' }, 'Jobs, newest first'),
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col', class: 'num' }, 'Id'), h('th', { scope: 'col' }, 'Name'),
          h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'User'),
          h('th', { scope: 'col' }, 'Queue'), h('th', { scope: 'col', class: 'num' }, 'GPUs'),
          h('th', { scope: 'col' }, 'Submitted'), h('th', { scope: 'col' }, 'Ran'),
          h('th', { scope: 'col' }, 'Waiting because / result'))),
        body));

    this.refresh = async () => {
      const q = new URLSearchParams({ limit: '2000' });
      if (filters.state) q.set('state', filters.state);
      if (filters.user) q.set('user', filters.user);
      if (filters.queue) q.set('queue', filters.queue);
      const list = (await api.get(`/api/v1/jobs?${q}`)).reverse();
      const shown = filters.text
        ? list.filter((j) => String(j.id) === filters.text
          || (j.name || '').toLowerCase().includes(filters.text)
          || (j.command || []).join(' ').toLowerCase().includes(filters.text))
        : list;
      count.textContent = `${shown.length} job${shown.length === 1 ? '' : 's'}`;
      body.replaceChildren(...shown.map((j) => h('tr', { 'data-job-id': j.id, 'data-state': j.state },
        h('td', { class: 'num' }, h('a', { href: `#/jobs/${j.id}` }, j.id)),
        h('td', {}, h('a', { href: `#/jobs/${j.id}` }, j.name || '')),
        h('td', {}, stateBadge(j.state)),
        h('td', {}, j.user), h('td', {}, j.queue), h('td', { class: 'num' }, j.gpus),
        h('td', {}, time(j.submitTime)),
        h('td', {}, j.startTime ? duration(j.startTime, j.endTime) : ''),
        h('td', { class: 'why' }, j.state === 'PENDING' ? waitText(j) : (j.message || '')))));
    };
    return this;
  },
};
