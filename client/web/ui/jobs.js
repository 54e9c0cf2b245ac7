// jobs.js: the jobs of a queue by state, filtered, a keyset page at a
// time.  Everything is in the URL (queue, state, filters, after), so a
// link can be shared; the cursors of the pages before are kept in the
// history entry, so "Previous" and the browser's back button agree.

import { get, post } from './api.js';
import { actionButton, clear, fmtTime, h, link, fill } from './dom.js';

const STATES = ['', 'ready', 'delayed', 'running', 'completed', 'dead', 'cancelled'];
const FILTERS = [
  ['key', 'dedupe key'], ['key_prefix', 'key prefix'], ['worker', 'worker'],
  ['error', 'error text'], ['payload', 'payload contains (JSON)'],
];

export function jobsPage(root, ctx) {
  const p = ctx.params;
  const queue = p.get('queue') || '';
  const state = p.get('state') || '';
  const after = p.get('after') || '';
  let filters = {};
  try { filters = JSON.parse(p.get('filters') || '{}'); } catch (e) { filters = {}; }
  const stack = (history.state && history.state.stack) || [];

  const queueSel = h('select', { id: 'queue', 'aria-label': 'queue' });
  const tabs = h('nav', { class: 'tabs', 'aria-label': 'state' });
  const form = h('form', { class: 'filters' });
  const list = h('div', { class: 'table-wrap' });
  const pager = h('div', { class: 'pager' });
  root.append(h('h1', { text: 'Jobs' }), h('div', { class: 'row' }, h('label', { for: 'queue', text: 'queue ' }), queueSel),
    tabs, form, list, pager);

  function hrefFor(changes) {
    const q = new URLSearchParams();
    const v = Object.assign({ queue, state, filters: JSON.stringify(filters) === '{}' ? '' : JSON.stringify(filters), after: '' }, changes);
    for (const [k, x] of Object.entries(v)) if (x) q.set(k, x);
    return 'jobs?' + q.toString();
  }

  for (const s of STATES) {
    const a = link(hrefFor({ state: s }), s || 'all');
    if (s === state) a.setAttribute('aria-current', 'page');
    tabs.append(a);
  }
  for (const [k, label] of FILTERS) {
    const v = filters[k] === undefined ? '' : (k === 'payload' ? JSON.stringify(filters[k]) : String(filters[k]));
    form.append(h('label', {}, label, h('input', { name: k, value: v, autocomplete: 'off' })));
  }
  form.append(h('button', { type: 'submit', text: 'Filter' }));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = {};
    for (const [k] of FILTERS) {
      const v = form.elements[k].value.trim();
      if (!v) continue;
      if (k === 'payload') {
        try { f[k] = JSON.parse(v); } catch (e) { form.elements[k].setCustomValidity('not JSON'); form.reportValidity(); return; }
      } else f[k] = v;
    }
    filters = f;
    ctx.navigate(hrefFor({ filters: JSON.stringify(f) === '{}' ? '' : JSON.stringify(f) }));
  });
  queueSel.addEventListener('change', () => ctx.navigate(hrefFor({ queue: queueSel.value })));

  let queuesLoaded = false;
  const page = {
    async refresh() {
      if (!queuesLoaded) {
        const qs = await get('/queues');
        fill(queueSel, h('option', { value: '', text: '—' }), qs.map((q) => h('option', { value: q.queue, selected: q.queue === queue, text: q.queue })));
        queuesLoaded = true;
      }
      if (!queue) {
        fill(list, h('p', { class: 'muted', text: 'Choose a queue.' }));
        return;
      }
      const r = await get('/jobs', { queue, state, after, limit: 50, filters: JSON.stringify(filters) === '{}' ? '' : JSON.stringify(filters) });
      fill(list, jobsTable(r.jobs, ctx, page));
      if (r.scan_truncated) list.append(h('p', { class: 'muted', text: 'The scan stopped at the server\'s limit: more matches may follow.' }));
      clear(pager);
      if (after) {
        pager.append(h('button', { type: 'button', text: '← Previous', onclick: () => {
          const prev = stack.slice(0, -1);
          ctx.navigate(hrefFor({ after: stack[stack.length - 1] || '' }), { stack: prev });
        } }));
      }
      if (r.next_cursor) {
        pager.append(h('button', { type: 'button', text: 'Next →', onclick: () => {
          ctx.navigate(hrefFor({ after: r.next_cursor }), { stack: stack.concat([after]) });
        } }));
      }
    },
  };
  return page;
}

function jobsTable(jobs, ctx, page) {
  if (!jobs.length) return h('p', { class: 'muted', text: 'No jobs.' });
  const act = ctx.canAct('admin');
  return h('table', { class: 'jobs' },
    h('thead', {}, h('tr', {}, ['id', 'state', 'prio', 'attempt', 'run at', 'enqueued', 'finished', 'worker', 'last error'].map((c) => h('th', { text: c })), act ? h('th', {}) : null)),
    h('tbody', {}, jobs.map((j) => h('tr', {},
      h('td', {}, link('jobs/' + j.id, String(j.id))),
      h('td', { text: j.state }),
      h('td', { class: 'num', text: j.priority }),
      h('td', { class: 'num', text: j.attempt + '/' + j.max_attempts }),
      h('td', { text: fmtTime(j.run_at) }),
      h('td', { text: fmtTime(j.enqueued_at) }),
      h('td', { text: fmtTime(j.finished_at) }),
      h('td', { text: j.worker || '' }),
      h('td', { class: 'error-text', text: j.last_error || '' }),
      act ? h('td', {}, jobActions(j, page)) : null))));
}

export function jobActions(j, page) {
  const out = [];
  if (j.state === 'dead') {
    out.push(actionButton('Retry', async () => {
      const r = await post('/jobs/' + j.id + '/retry', {});
      await page.refresh();
      return r.changed ? 'job ' + j.id + ' retried' : 'job ' + j.id + ' was not retried';
    }));
  }
  if (j.state === 'ready' || j.state === 'delayed' || j.state === 'dead') {
    out.push(actionButton('Cancel', async () => {
      const r = await post('/jobs/' + j.id + '/cancel', {});
      await page.refresh();
      return r.changed ? 'job ' + j.id + ' cancelled' : 'job ' + j.id + ' was not cancelled';
    }, { class: 'danger' }));
  }
  return out;
}
