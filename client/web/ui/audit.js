// audit.js: the audit trail (jobq_audit), newest first, a page of 100 at a
// time ("Older" passes the smallest id of the page as before): who did
// what, to how many jobs.  Shown to admins (jobq_audit is jobq_admin's).

import { get } from './api.js';
import { clear, fill, fmtNum, fmtTime, h, link } from './dom.js';

const PAGE = 100;

export function auditPage(root, ctx) {
  const list = h('div', { class: 'table-wrap' });
  const pager = h('div', { class: 'pager' });
  const before = ctx.params.get('before') || '';
  const queue = ctx.params.get('queue') || '';
  root.append(h('h1', { text: 'Audit' + (queue ? ' of ' + queue : '') }), list, pager);
  const what = (a) => {
    if (Array.isArray(a.ids) && a.ids.length) return a.ids.slice(0, 10).join(', ') + (a.ids.length > 10 ? ' …' : '');
    const f = a.filters && JSON.stringify(a.filters) !== '{}' ? JSON.stringify(a.filters) : '';
    const d = a.detail ? (typeof a.detail === 'string' ? a.detail : JSON.stringify(a.detail)) : '';
    return [f, d].filter(Boolean).join(' ');
  };
  return {
    async refresh() {
      const rows = await get('/audit', { queue, before, limit: PAGE });
      clear(pager);
      if (!rows.length) { fill(list, h('p', { class: 'muted', text: 'Nothing recorded.' })); return; }
      fill(list, h('table', { class: 'audit' },
        h('thead', {}, h('tr', {}, ['at', 'actor', 'role', 'action', 'queue', 'affected', 'jobs, filters, detail'].map((c) => h('th', { text: c })))),
        h('tbody', {}, rows.map((a) => h('tr', {},
          h('td', { text: fmtTime(a.at) }), h('td', { text: a.actor || '' }), h('td', { text: a.role || '' }),
          h('td', { text: a.action }),
          h('td', {}, a.queue ? link('audit?queue=' + encodeURIComponent(a.queue), a.queue) : ''),
          h('td', { class: 'num', text: fmtNum(a.affected) }),
          h('td', { class: 'detail', text: what(a) }))))));
      if (rows.length === PAGE) {
        const q = new URLSearchParams();
        if (queue) q.set('queue', queue);
        q.set('before', String(rows[rows.length - 1].id));
        pager.append(link('audit?' + q.toString(), 'Older →'));
      }
    },
  };
}
