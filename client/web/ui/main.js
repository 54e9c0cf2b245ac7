// main.js: jobq-web's single-page UI.  The router maps the path below the
// prefix to a page; the session (GET /api/session) says who we are and
// whether actions are shown; the "auto" switch refreshes the page every
// few seconds, never while the tab is hidden (the server's cache keeps it
// at one query per endpoint whatever the number of tabs).

import { get, pagePath, url } from './api.js';
import { clear, h, toast, fill } from './dom.js';
import { overviewPage } from './overview.js';
import { jobsPage } from './jobs.js';
import { jobPage } from './job.js';
import { workersPage } from './workers.js';
import { schedulesPage } from './schedules.js';
import { queuePage } from './queue.js';
import { auditPage } from './audit.js';
import { groupsPage } from './groups.js';
import { flowPage } from './flow.js';

const REFRESH_MS = 5000;
const main = document.getElementById('main');
const auto = document.getElementById('auto');
let session = null;
let current = null;   // { refresh() } of the page shown
let timer = null;

function canAct(what) {
  if (!session || session.read_only) return false;
  const db = session.database || {};
  if (what === 'sweep') return !!(db.admin || db.worker);
  if (what === 'enqueue') return !!(db.admin || db.producer);
  return !!db.admin;
}

async function route() {
  const path = pagePath();
  const params = new URLSearchParams(location.search);
  const ctx = { session, canAct, params, navigate };
  let page;
  clear(main);
  if (path === '/' || path === '') page = overviewPage;
  else if (path === '/jobs') page = jobsPage;
  else if (/^\/jobs\/\d+$/.test(path)) { ctx.id = path.slice(6); page = jobPage; }
  else if (/^\/queues\/[a-z0-9_-]+$/.test(path)) { ctx.queue = path.slice(8); page = queuePage; }
  else if (path === '/workers' && session.endpoints.workers) page = workersPage;
  else if (path === '/schedules' && session.endpoints.schedules) page = schedulesPage;
  else if (path === '/audit' && session.endpoints.audit) page = auditPage;
  else if (path === '/groups' && session.endpoints.groups) page = groupsPage;
  else if (path === '/flows' && session.endpoints.flows) page = flowPage;
  else if (/^\/flows\/\d+$/.test(path) && session.endpoints.flows) { ctx.id = path.slice(7); page = flowPage; }
  else {
    main.append(h('h1', { text: 'Not found' }), h('p', { text: path }));
    current = null;
    return;
  }
  for (const a of document.querySelectorAll('#nav a')) {
    const p = new URL(a.href).pathname;
    a.classList.toggle('active', p === location.pathname);
  }
  current = page(main, ctx);
  await refresh();
}

async function refresh() {
  if (!current) return;
  try {
    await current.refresh();
  } catch (e) {
    toast(e.message, 'error');
  }
}

export function navigate(path, state) {
  history.pushState(state || null, '', url(path.replace(/^\//, '')));
  route();
}

function schedule() {
  clearInterval(timer);
  timer = null;
  if (auto.checked && !document.hidden) timer = setInterval(refresh, REFRESH_MS);
}

document.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a[data-route]');
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  history.pushState(null, '', a.href);
  route();
});
window.addEventListener('popstate', route);
document.addEventListener('visibilitychange', () => { schedule(); if (!document.hidden && auto.checked) refresh(); });
auto.addEventListener('change', schedule);

async function start() {
  try {
    session = await get('/session');
  } catch (e) {
    fill(main, h('h1', { text: 'jobq-web' }), h('p', { class: 'error', text: e.message }));
    return;
  }
  const who = document.getElementById('who');
  who.textContent = (session.user ? session.user + ' · ' : '') + session.database.role +
    (session.read_only ? ' · read-only' : '');
  document.getElementById('nav-workers').hidden = !session.endpoints.workers;
  document.getElementById('nav-schedules').hidden = !session.endpoints.schedules;
  document.getElementById('nav-groups').hidden = !session.endpoints.groups;
  document.getElementById('nav-flows').hidden = !session.endpoints.flows;
  document.getElementById('nav-audit').hidden = !(session.endpoints.audit && session.database.admin);
  schedule();
  route();
}

start();
