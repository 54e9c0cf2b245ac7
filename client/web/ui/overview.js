// overview.js: the counter strip (totals over the queues), the queues
// table with counts, pause/resume, "no workers" where a backlog has no
// live worker, and the health findings when the server has jobq_health.

import { get, post } from './api.js';
import { actionButton, clear, fmtNum, h, link, fill } from './dom.js';

const STRIP = ['ready', 'delayed', 'running', 'expired', 'dead', 'completed'];

export function overviewPage(root, ctx) {
  const strip = h('section', { class: 'strip', 'aria-label': 'totals' });
  const table = h('div', { class: 'table-wrap' });
  const health = h('section', { class: 'health' });
  const actions = h('div', { class: 'actions' });
  root.append(h('h1', { text: 'Overview' }), strip, actions, table, health);

  if (ctx.canAct('sweep')) {
    actions.append(actionButton('Sweep now', async () => {
      const r = await post('/sweep', {});
      page.refresh();
      return `swept: ${r.requeued} requeued, ${r.dead} dead, ${r.purged} purged`;
    }));
  }

  const page = {
    async refresh() {
      const ov = await get('/overview');
      let workers = null;
      if (ctx.session.endpoints.workers) {
        try { workers = await get('/workers'); } catch (e) { workers = null; }
      }
      const totals = {};
      for (const k of STRIP) totals[k] = 0;
      for (const q of ov.queues) for (const k of STRIP) totals[k] += Number(q[k] || 0);
      clear(strip);
      for (const k of STRIP) {
        const warn = k === 'expired' && totals[k] > 0 || k === 'dead' && totals[k] > 0;
        strip.append(h('div', { class: 'count ' + k + (warn ? ' warn' : '') },
          h('span', { class: 'n', text: fmtNum(totals[k]) }), h('span', { class: 'k', text: k })));
      }
      fill(table, queuesTable(ov.queues, workers, ctx, page));
      clear(health);
      if (Array.isArray(ov.health) && ov.health.length) {
        health.append(h('h2', { text: 'Health' }),
          h('ul', {}, ov.health.map((f) => h('li', { text: Object.values(f).filter((v) => v !== null).join(' · ') }))));
      }
    },
  };
  return page;
}

function servedBy(workers, queue) {
  return workers.some((w) => w.alive && w.state !== 'stopping' && (w.queues || []).includes(queue));
}

function queuesTable(queues, workers, ctx, page) {
  if (!queues.length) return h('p', { class: 'muted', text: 'No queues yet.' });
  const cols = ['ready', 'delayed', 'running', 'expired', 'dead', 'completed', 'cancelled'];
  const act = ctx.canAct('admin');
  return h('table', { class: 'queues' },
    h('thead', {}, h('tr', {}, h('th', { text: 'queue' }), cols.map((c) => h('th', { class: 'num', text: c })),
      h('th', { text: 'oldest ready' }), act ? h('th', { text: '' }) : null)),
    h('tbody', {}, queues.map((q) => {
      const badge = workers && !q.paused && Number(q.ready) > 0 && !servedBy(workers, q.queue)
        ? h('span', { class: 'badge warn', text: 'no workers' }) : null;
      return h('tr', {},
        h('td', {}, link('jobs?queue=' + encodeURIComponent(q.queue), q.queue),
          q.paused ? h('span', { class: 'badge', text: 'paused' }) : null, badge),
        cols.map((c) => h('td', { class: 'num' + (c === 'expired' && q[c] > 0 ? ' warn' : '') },
          link('jobs?queue=' + encodeURIComponent(q.queue) + '&state=' + (c === 'expired' ? 'running' : c), fmtNum(q[c])))),
        h('td', { text: q.oldest_ready_age || '' }),
        act ? h('td', {}, actionButton(q.paused ? 'Resume' : 'Pause', async () => {
          await post('/queues/' + encodeURIComponent(q.queue) + (q.paused ? '/resume' : '/pause'), {});
          await page.refresh();
          return q.queue + (q.paused ? ' resumed' : ' paused');
        })) : null);
    })));
}
