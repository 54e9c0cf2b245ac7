// groups.js: the groups of a queue that groups its jobs (jobq_groups),
// when the server has them: /groups?queue=Q[&blocked=1][&after=KEY].  All
// of them a keyset page at a time, or the blocked ones (jobq_blocked_groups:
// the dead head that holds each, since when, its error).  Admins retry a
// blocked head (it runs again, first) or skip what holds a group
// (jobq_skip_head, asked first).

import { get, post } from './api.js';
import { actionButton, clear, confirmAction, fill, fmtNum, fmtTime, h, link } from './dom.js';

const PAGE = 100;

export function groupsPage(root, ctx) {
  const p = ctx.params;
  const queue = p.get('queue') || '';
  const blocked = p.get('blocked') === '1';
  const after = p.get('after') || '';
  const queueSel = h('select', { id: 'gqueue', 'aria-label': 'queue' });
  const tabs = h('nav', { class: 'tabs', 'aria-label': 'groups' });
  const host = h('div', { class: 'confirm-host' });
  const list = h('div', { class: 'table-wrap' });
  const pager = h('div', { class: 'pager' });
  root.append(h('h1', { text: 'Groups' }), h('div', { class: 'row' }, h('label', { for: 'gqueue', text: 'queue ' }), queueSel),
    tabs, host, list, pager);
  const href = (changes) => {
    const q = new URLSearchParams();
    const v = Object.assign({ queue, blocked: blocked ? '1' : '', after: '' }, changes);
    for (const [k, x] of Object.entries(v)) if (x) q.set(k, x);
    return 'groups?' + q.toString();
  };
  for (const [label, b] of [['all', ''], ['blocked', '1']]) {
    const a = link(href({ blocked: b }), label);
    if ((b === '1') === blocked) a.setAttribute('aria-current', 'page');
    tabs.append(a);
  }
  queueSel.addEventListener('change', () => ctx.navigate(href({ queue: queueSel.value, after: '' })));
  const act = ctx.canAct('admin');
  let page = null;
  const skip = (key) => actionButton('Skip head', async () => {
    if (!await confirmAction(host, `Cancel what holds group ${key} of ${queue} (its dead head, or its next job)?`,
      { confirm: 'Skip head of ' + key })) return null;
    const r = await post('/groups/skip-head', { queue, key });
    await page.refresh();
    return r.id ? `job ${r.id} cancelled: group ${key} goes on` : `nothing holds group ${key}`;
  }, { class: 'danger' });
  const retry = (id) => actionButton('Retry head', async () => {
    const r = await post('/jobs/' + id + '/retry', {});
    await page.refresh();
    return r.changed ? `job ${id} retried: it runs first` : `job ${id} was not retried`;
  });
  let queuesLoaded = false;
  page = {
    async refresh() {
      if (!queuesLoaded) {
        const qs = (await get('/queues')).filter((q) => q.group_mode && q.group_mode !== 'none');
        fill(queueSel, h('option', { value: '', text: '—' }), qs.map((q) => h('option', { value: q.queue, selected: q.queue === queue, text: q.queue })));
        queuesLoaded = true;
      }
      clear(pager);
      if (!queue) { fill(list, h('p', { class: 'muted', text: 'Choose a queue that groups its jobs.' })); return; }
      if (blocked) {
        const rows = await get('/groups/blocked', { queue });
        if (!rows.length) { fill(list, h('p', { class: 'muted', text: 'No group is blocked.' })); return; }
        fill(list, h('table', { class: 'groups' },
          h('thead', {}, h('tr', {}, ['group', 'blocked by', 'since', 'error'].map((c) => h('th', { text: c })), act ? h('th', {}) : null)),
          h('tbody', {}, rows.map((g) => h('tr', {},
            h('td', { text: g.key }), h('td', {}, link('jobs/' + g.blocked_by, String(g.blocked_by))),
            h('td', { text: fmtTime(g.since) }), h('td', { class: 'error-text', text: g.error || '' }),
            act ? h('td', { class: 'acts' }, retry(g.blocked_by), skip(g.key)) : null)))));
        return;
      }
      const rows = await get('/groups', { queue, after, limit: PAGE });
      if (!rows.length) { fill(list, h('p', { class: 'muted', text: 'No groups.' })); return; }
      fill(list, h('table', { class: 'groups' },
        h('thead', {}, h('tr', {}, ['group', 'running', 'live', 'next job', 'due', 'blocked by', 'eligible', 'next allowed', 'last claim']
          .map((c) => h('th', { text: c })), act ? h('th', {}) : null)),
        h('tbody', {}, rows.map((g) => h('tr', { class: g.blocked_by ? 'warn' : '' },
          h('td', { text: g.key }), h('td', { class: 'num', text: fmtNum(g.running) }),
          h('td', { class: 'num', text: fmtNum(g.live) + (g.live_capped ? '+' : '') }),
          h('td', {}, g.head_id ? link('jobs/' + g.head_id, String(g.head_id)) : ''),
          h('td', { text: fmtTime(g.head_run_at) }),
          h('td', {}, g.blocked_by ? link('jobs/' + g.blocked_by, String(g.blocked_by)) : ''),
          h('td', { text: g.eligible ? 'yes' : 'no' }), h('td', { text: fmtTime(g.tat) }),
          h('td', { text: fmtTime(g.last_claim_at) }),
          act ? h('td', { class: 'acts' }, g.blocked_by ? retry(g.blocked_by) : null,
            g.blocked_by || (g.head_id && !g.running) ? skip(g.key) : null) : null)))));
      if (rows.length === PAGE) pager.append(link(href({ after: rows[rows.length - 1].key }), 'Next →'));
    },
  };
  return page;
}
