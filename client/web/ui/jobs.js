// jobs.js: the jobs of a queue by state, filtered, a keyset page at a
// time.  Everything is in the URL (queue, state, filters, after), so a
// link can be shared; the cursors of the pages before are kept in the
// history entry, so "Previous" and the browser's back button agree.
// Admins select jobs (the visible ones, or all that match the filter of a
// state tab) and act on them in bulk (bulk.js).

import { get, post } from './api.js';
import { actionButton, clear, confirmAction, countOf, fmtNum, fmtTime, h, link, fill } from './dom.js';
import { ACTIONS, actionState, runIds, runWhere } from './bulk.js';

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
  const bulkBar = h('div', { class: 'bulk', 'aria-label': 'selection' });
  const host = h('div', { class: 'confirm-host' });
  root.append(h('h1', { text: 'Jobs' }), h('div', { class: 'row' }, h('label', { for: 'queue', text: 'queue ' }), queueSel),
    tabs, form, bulkBar, host, list, pager);
  const canBulk = ctx.canAct('admin') && ctx.session.endpoints.bulk;
  // the selection: ids of the page (kept across refreshes), or every job
  // the filter matches (allMatching, with its capped count)
  const selected = new Map();   // id -> action state
  let allMatching = null;       // null or {count, capped}
  let shown = [];               // the jobs of the page

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
      shown = r.jobs;
      for (const id of [...selected.keys()]) if (!shown.some((j) => String(j.id) === id)) selected.delete(id);
      fill(list, jobsTable(r.jobs, ctx, page, canBulk ? { selected, changed: drawBulk } : null, host));
      drawBulk();
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

  // the bar above the table: what is selected and what can be done to it
  function drawBulk() {
    if (!canBulk || !queue) { clear(bulkBar); return; }
    const filt = JSON.stringify(filters) === '{}' ? {} : filters;
    let label;
    let actions;
    if (allMatching) {
      label = `All ${fmtNum(allMatching.count)}${allMatching.capped ? '+' : ''} matching jobs selected`;
      actions = ACTIONS.filter((a) => a.states.includes(state));
    } else {
      label = selected.size ? `${fmtNum(selected.size)} selected` : 'Select jobs to act on them';
      const states = new Set(selected.values());
      actions = ACTIONS.filter((a) => a.states.some((s) => states.has(s)));
    }
    const run = (a) => actionButton(a.label, async () => {
      if (allMatching) {
        const n = await runWhere(a, { queue, state, filters: filt }, allMatching, host);
        if (n === null) return null;
        allMatching = null;
      } else {
        const r = await runIds(a, [...selected.keys()].map(Number), host);
        if (r === null) return null;
        selected.clear();
      }
      await page.refresh();
      return null;
    }, { class: a.danger ? 'danger' : '' });
    fill(bulkBar, h('span', { class: 'sel', text: label }), actions.map(run),
      !allMatching && state && ACTIONS.some((a) => a.states.includes(state)) ? h('button', { type: 'button', text: 'Select all matching', onclick: async () => {
        allMatching = await countMatching(queue, state, filt);
        selected.clear();
        for (const c of list.querySelectorAll('input.pick')) c.checked = false;
        drawBulk();
      } }) : null,
      allMatching || selected.size ? h('button', { type: 'button', text: 'Clear selection', onclick: () => {
        allMatching = null;
        selected.clear();
        for (const c of list.querySelectorAll('input.pick, input.pick-all')) c.checked = false;
        drawBulk();
      } }) : null);
  }
  return page;
}

// how many jobs of the queue in the state the filter selects: the exact
// count of jobq_counts without a filter, else jobq_list's, capped at 10,000
async function countMatching(queue, state, filters) {
  if (JSON.stringify(filters) === '{}') {
    const ov = await get('/overview');
    const q = ov.queues.find((x) => x.queue === queue);
    if (q && q[state] !== undefined) {
      const c = countOf(q, state);
      return { count: c.n, capped: c.capped };
    }
  }
  return get('/jobs/count', { queue, state, filters: JSON.stringify(filters) === '{}' ? '' : JSON.stringify(filters) });
}

function jobsTable(jobs, ctx, page, pick, host) {
  if (!jobs.length) return h('p', { class: 'muted', text: 'No jobs.' });
  const act = ctx.canAct('admin');
  const all = pick ? h('input', { type: 'checkbox', class: 'pick-all', 'aria-label': 'select the jobs shown' }) : null;
  const boxes = [];
  if (all) {
    all.checked = jobs.every((j) => pick.selected.has(String(j.id)));
    all.addEventListener('change', () => {
      for (const [j, b] of boxes) {
        b.checked = all.checked;
        if (all.checked) pick.selected.set(String(j.id), actionState(j)); else pick.selected.delete(String(j.id));
      }
      pick.changed();
    });
  }
  const pickCell = (j) => {
    const b = h('input', { type: 'checkbox', class: 'pick', 'aria-label': 'select job ' + j.id });
    b.checked = pick.selected.has(String(j.id));
    b.addEventListener('change', () => {
      if (b.checked) pick.selected.set(String(j.id), actionState(j)); else pick.selected.delete(String(j.id));
      all.checked = boxes.every(([, x]) => x.checked);
      pick.changed();
    });
    boxes.push([j, b]);
    return h('td', { class: 'pick' }, b);
  };
  return h('table', { class: 'jobs' },
    h('thead', {}, h('tr', {}, pick ? h('th', { class: 'pick' }, all) : null,
      ['id', 'state', 'prio', 'attempt', 'run at', 'enqueued', 'finished', 'worker', 'last error'].map((c) => h('th', { text: c })), act ? h('th', {}) : null)),
    h('tbody', {}, jobs.map((j) => h('tr', {},
      pick ? pickCell(j) : null,
      h('td', {}, link('jobs/' + j.id, String(j.id))),
      h('td', { text: j.state }),
      h('td', { class: 'num', text: j.priority }),
      h('td', { class: 'num', text: j.attempt + '/' + j.max_attempts }),
      h('td', { text: fmtTime(j.run_at) }),
      h('td', { text: fmtTime(j.enqueued_at) }),
      h('td', { text: fmtTime(j.finished_at) }),
      h('td', { text: j.worker || '' }),
      h('td', { class: 'error-text', text: j.last_error || '' }),
      act ? h('td', { class: 'acts' }, jobActions(j, ctx, page, host)) : null))));
}

// the actions on one job that its state allows; cancel and delete ask
// first (in host), retry and run now do not (they are undone by waiting)
export function jobActions(j, ctx, page, host) {
  const st = actionState(j);
  const bulk = ctx.session.endpoints.bulk;
  const one = (key, label, done, ask, cls) => actionButton(label, async () => {
    if (ask && !await confirmAction(host, `${label} job ${j.id}?`, { confirm: `${label} job ${j.id}` })) return null;
    const r = await post('/jobs/' + j.id + '/' + key, {});
    await page.refresh();
    return r.changed ? `job ${j.id} ${done}` : `job ${j.id} was not ${done} (its state changed)`;
  }, { class: cls || '' });
  return [
    st === 'dead' ? one('retry', 'Retry', 'retried', false) : null,
    bulk && st === 'delayed' ? one('run-now', 'Run now', 'made due now', false) : null,
    ['ready', 'delayed', 'dead'].includes(st) ? one('cancel', 'Cancel', 'cancelled', true, 'danger') : null,
    bulk && ['completed', 'dead', 'cancelled'].includes(st) ? one('delete', 'Delete', 'deleted', true, 'danger') : null,
  ].filter(Boolean);
}
