// Queues: the load of each queue. With the controller's tenancy file, queues are grouped by cohort
// and each quota resource shows a bar of usage against nominal quota (the borrowed part in its own
// color); the fair-share accounts follow as an indented tree. Without tenancy, a plain load table.

import * as api from './api.js';
import { h } from './dom.js';

const LOAD = [
  ['pending', 'Pending jobs'], ['running', 'Running jobs'],
  ['gpusRunning', 'GPUs running'], ['gpusPending', 'GPUs pending'],
];

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** A quota amount as a person reads it: memory in binary units, the rest as counts. */
export function amount(resource, n) {
  if (resource !== 'memory') return String(n);
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${UNITS[u]}`;
}

/** "6 / 8 gpu:H100, +2 borrowed". */
export function quotaText(q) {
  const borrowed = q.borrowed > 0 ? `, +${amount(q.resource, q.borrowed)} borrowed` : '';
  return `${amount(q.resource, q.usage)} / ${amount(q.resource, q.nominal)} ${q.resource}${borrowed}`;
}

function limitsText(q) {
  const parts = [];
  if (q.borrowingLimit != null) parts.push(`may borrow up to ${amount(q.resource, q.borrowingLimit)} more`);
  if (q.lendingLimit != null) parts.push(`lends at most ${amount(q.resource, q.lendingLimit)}`);
  return parts.join('; ');
}

const pct = (part, whole) => `${Math.min(100, Math.max(0, (100 * part) / whole))}%`;

/**
 * A bar of one resource: the scale is what the queue may reach (nominal plus its borrowing
 * limit), or what it uses when that is more or unlimited. Widths are set through the CSSOM: the
 * page's Content-Security-Policy forbids inline style attributes.
 */
function bar(q) {
  const reach = q.borrowingLimit != null ? q.nominal + q.borrowingLimit : q.nominal;
  const scale = Math.max(reach, q.usage, 1);
  const own = h('span', { class: 'own' });
  own.style.width = pct(q.usage - q.borrowed, scale);
  const borrowed = h('span', { class: 'borrowed' });
  borrowed.style.width = pct(q.borrowed, scale);
  const nominal = h('span', { class: 'nominal' });
  nominal.style.left = pct(q.nominal, scale);
  return h('span', { class: 'bar', 'aria-hidden': 'true' }, own, borrowed, nominal);
}

function quotaCell(q) {
  const limits = limitsText(q);
  return h('li', { 'data-resource': q.resource, class: q.borrowed > 0 ? 'is-borrowing' : null },
    bar(q),
    h('span', { class: 'quota-text' }, quotaText(q)),
    limits ? h('span', { class: 'muted limits' }, ` (${limits})`) : null);
}

/** Per resource, the cohort's usage against the sum of its queues' nominal quotas. */
function cohortSummary(members) {
  const sums = new Map();
  for (const q of members) {
    for (const r of q.quotas || []) {
      const s = sums.get(r.resource) || { usage: 0, nominal: 0 };
      s.usage += r.usage;
      s.nominal += r.nominal;
      sums.set(r.resource, s);
    }
  }
  return [...sums].map(([res, s]) => `${amount(res, s.usage)} / ${amount(res, s.nominal)} ${res}`).join(', ');
}

function queueLink(name) {
  const a = h('a', { href: '#/jobs', 'data-queue-link': name }, name);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    location.hash = '#/jobs';
    setTimeout(() => {
      const input = document.getElementById('filter-queue');
      if (input) {
        input.value = name;
        input.form.dispatchEvent(new Event('input'));
      }
    }, 0);
  });
  return a;
}

function loadCells(q) {
  return LOAD.map(([k]) => h('td', { class: 'num', 'data-col': k }, String(q[k] ?? '')));
}

/** Without tenancy: the table as it always was. */
function plainTable(list) {
  return h('table', { id: 'queues-table' },
    h('caption', { class: 'visually-hidden' }, 'Queues and their load'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Queue'),
      LOAD.map(([, label]) => h('th', { scope: 'col', class: 'num' }, label)))),
    h('tbody', {}, list.map((q) => h('tr', { 'data-queue': q.name },
      h('th', { scope: 'row' }, queueLink(q.name)), loadCells(q)))));
}

/** With tenancy: one row group per cohort (queues without one last), quotas as bars and text. */
function tenancyTable(list) {
  const groups = new Map();
  for (const q of list) {
    const key = q.cohort ?? '';
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(q);
  }
  const keys = [...groups.keys()].filter((k) => k !== '');
  if (groups.has('')) keys.push('');
  const columns = 2 + LOAD.length;
  return h('table', { id: 'queues-table', class: 'with-quotas' },
    h('caption', { class: 'visually-hidden' }, 'Queues by cohort: load and quotas'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Queue'),
      LOAD.map(([, label]) => h('th', { scope: 'col', class: 'num' }, label)),
      h('th', { scope: 'col' }, 'Quota (used / nominal)'))),
    keys.map((key) => {
      const members = groups.get(key);
      const summary = key ? cohortSummary(members) : '';
      return h('tbody', { class: 'cohort', 'data-cohort': key || null },
        h('tr', { class: 'cohort-head' }, h('th', { scope: 'rowgroup', colspan: columns },
          key ? ['Cohort ', h('strong', {}, key)] : 'Not in a cohort (neither borrows nor lends)',
          summary ? h('span', { class: 'muted' }, ` \u2014 ${summary} in use`) : null)),
        members.map((q) => h('tr', { 'data-queue': q.name, 'data-cohort': q.cohort ?? null },
          h('th', { scope: 'row' }, queueLink(q.name)), loadCells(q),
          h('td', { class: 'quotas' }, q.quotas && q.quotas.length
            ? h('ul', {}, q.quotas.map(quotaCell))
            : h('span', { class: 'muted' }, 'no quota (not in the tenancy file)')))));
    }));
}

/** The account tree in pre-order (children after their parent), each with its depth. */
export function accountTree(accounts) {
  const children = new Map();
  const names = new Set(accounts.map((a) => a.name));
  for (const a of accounts) {
    const parent = names.has(a.parent) ? a.parent : '';
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(a);
  }
  const out = [];
  const seen = new Set();
  const visit = (parent, depth) => {
    for (const a of children.get(parent) || []) {
      if (seen.has(a.name)) continue;
      seen.add(a.name);
      out.push({ ...a, depth });
      visit(a.name, depth + 1);
    }
  };
  visit('', 0);
  return out;
}

const NOT_AVAILABLE = 'not available: only the leader replica keeps usage';

function maybe(v, digits) {
  if (v == null) return h('span', { class: 'muted', title: NOT_AVAILABLE }, '\u2013');
  return v.toFixed(digits);
}

function accountsTable(accounts) {
  const rows = accountTree(accounts);
  return h('table', { id: 'accounts-table' },
    h('caption', { class: 'visually-hidden' }, 'Fair-share accounts, children indented under their parent'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Account'), h('th', { scope: 'col', class: 'num' }, 'Shares'),
      h('th', { scope: 'col', class: 'num' }, 'Share of cluster'),
      h('th', { scope: 'col', class: 'num' }, 'Usage (GPU-hours, decayed)'),
      h('th', { scope: 'col', class: 'num' }, 'Fair-share factor'))),
    h('tbody', {}, rows.map((a) => {
      const name = h('th', { scope: 'row', class: 'account', 'data-depth': a.depth },
        a.depth > 0 ? h('span', { class: 'visually-hidden' }, `${a.parent} \u203a `) : null, a.name);
      name.style.paddingLeft = `${0.6 + 1.4 * a.depth}em`;
      return h('tr', { 'data-account': a.name, 'data-parent': a.parent },
        name,
        h('td', { class: 'num', 'data-col': 'shares' }, String(a.shares)),
        h('td', { class: 'num', 'data-col': 'normalizedShare' }, `${(100 * a.normalizedShare).toFixed(1)}%`),
        h('td', { class: 'num', 'data-col': 'gpuHours' }, maybe(a.gpuHours, 2)),
        h('td', { class: 'num', 'data-col': 'factor' }, maybe(a.factor, 3)));
    })));
}

export const queues = {
  mount(root) {
    const tableHolder = h('div');
    const accountsNote = h('p', { class: 'muted', id: 'accounts-note' });
    const accountsHolder = h('div');
    const accountsSection = h('section', { id: 'accounts', 'aria-labelledby': 'accounts-h', hidden: true },
      h('h2', { id: 'accounts-h' }, 'Fair-share accounts'),
      h('p', { class: 'muted' }, 'Factor 1 means the account used nothing against its share; lower factors go later.'),
      accountsNote, accountsHolder);
    root.append(h('h1', {}, 'Queues'), tableHolder, accountsSection);

    this.refresh = async () => {
      const [list, accounts] = await Promise.all([
        api.get('/api/v1/queues'),
        // An older controller has no accounts view: the section stays hidden.
        api.get('/api/v1/accounts').catch((e) => {
          if (e.status === 401) throw e;
          return [];
        }),
      ]);
      const tenancy = list.some((q) => q.cohort != null || q.quotas != null);
      tableHolder.replaceChildren(tenancy ? tenancyTable(list) : plainTable(list));
      accountsSection.hidden = accounts.length === 0;
      accountsNote.textContent = accounts.some((a) => a.gpuHours == null || a.factor == null)
        ? 'Usage and factors are not available from this replica: only the leader keeps them.'
        : '';
      accountsHolder.replaceChildren(accounts.length ? accountsTable(accounts) : '');
    };
    return this;
  },
};
