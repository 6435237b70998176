// The dashboard: token login, hash routes, and a refresh of the shown view on every state change.

import * as api from './api.js';
import { h } from './dom.js';
import { overview } from './overview.js';
import { cluster } from './cluster.js';
import { jobs } from './jobs.js';
import { job } from './job.js';
import { queues } from './queues.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const status = document.getElementById('live-status');
const who = document.getElementById('whoami');
const logout = document.getElementById('logout');

let current = null; // { refresh(), stop?() } of the shown view
let stopEvents = null;
let refreshing = false;
let again = false;

const routes = [
  [/^#\/overview$/, 'overview', () => overview],
  [/^#\/cluster$/, 'cluster', () => cluster],
  [/^#\/jobs$/, 'jobs', () => jobs],
  [/^#\/jobs\/(\d+)$/, 'jobs', () => job],
  [/^#\/queues$/, 'queues', () => queues],
];

function showLogin(message) {
  stopEvents?.();
  stopEvents = null;
  current?.stop?.();
  current = null;
  nav.hidden = true;
  logout.hidden = true;
  who.textContent = '';
  status.textContent = '';
  const error = h('p', { id: 'login-error', class: 'error', role: 'alert' }, message || '');
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true,
    'aria-describedby': 'token-help login-error', spellcheck: 'false',
  });
  const form = h('form', { id: 'login-form', novalidate: true },
    h('label', { for: 'token' }, 'Token'),
    input,
    h('p', { id: 'token-help', class: 'muted' },
      'A user or admin token (kairos token create, or admin.token in the controller\u2019s data directory). ',
      'It is kept in this tab only (sessionStorage) and sent as a bearer token.'),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const candidate = input.value.trim();
    if (!candidate) {
      error.textContent = 'Enter a token.';
      input.focus();
      return;
    }
    try {
      const me = await api.whoami(candidate);
      if (me.user === 'agent') throw new api.ApiError(403, { detail: 'the join token cannot read the API' });
      api.token.set(candidate);
      start(me);
    } catch (err) {
      error.textContent = err.status === 401
        ? 'That token is not valid. Check it and try again.'
        : `Sign-in failed: ${err.message}`;
      input.select();
      input.focus();
    }
  });
  main.replaceChildren(h('section', { class: 'login card', 'aria-labelledby': 'login-title' },
    h('h1', { id: 'login-title' }, 'Sign in to Kairos'), form));
  input.focus();
}

function start(me) {
  nav.hidden = false;
  logout.hidden = false;
  who.textContent = `${me.user}${me.admin ? ' (admin)' : ''}`;
  stopEvents = api.listen(() => refresh(), (s) => {
    status.textContent = s === 'live' ? 'Live' : 'Reconnecting\u2026';
    status.dataset.state = s;
  });
  if (!location.hash || location.hash === '#' || location.hash === '#/') {
    location.replace('#/overview');
  }
  route();
}

async function refresh() {
  if (!current) return;
  if (refreshing) {
    again = true;
    return;
  }
  refreshing = true;
  try {
    await current.refresh();
  } catch (e) {
    if (e.status !== 401) console.warn('refresh failed', e);
  } finally {
    refreshing = false;
  }
  if (again) {
    again = false;
    refresh();
  }
}

async function route() {
  if (!api.token.get()) return;
  const hash = location.hash || '#/overview';
  const match = routes.find(([re]) => re.test(hash));
  if (!match) {
    location.replace('#/overview');
    return;
  }
  const [re, name, view] = match;
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.route === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  current?.stop?.();
  const params = hash.match(re).slice(1);
  const container = h('div', { class: 'view', 'data-view': name });
  main.replaceChildren(container);
  current = view().mount(container, ...params);
  document.title = `${container.querySelector('h1')?.textContent || 'Kairos'} \u2014 Kairos`;
  main.focus({ preventScroll: true });
  await refresh();
}

api.onUnauthorized(() => {
  if (api.token.get()) {
    api.token.clear();
    showLogin('Your token was refused: sign in again.');
  }
});

logout.addEventListener('click', () => {
  api.token.clear();
  showLogin('Signed out.');
});

window.addEventListener('hashchange', route);

(async () => {
  const saved = api.token.get();
  if (!saved) {
    showLogin();
    return;
  }
  try {
    start(await api.whoami(saved));
  } catch {
    api.token.clear();
    showLogin();
  }
})();
