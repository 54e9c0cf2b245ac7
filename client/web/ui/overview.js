// overview.js: the counter strip (totals over the queues), the queues
// table with counts, pause/resume, "no workers" where a backlog has no
// live worker, and the health findings when the server has jobq_health.

import { get, post } from './api.js';
import { actionButton, clear, countOf, fmtNum, h, link, fill, toast } from './dom.js';
import { fmtSeconds, intervalSeconds, sparkline } from './chart.js';
import { retryDeadButton } from './bulk.js';

// the counter strip; "waiting" (jobs waiting for their dependencies) where
// the server counts it (flows)
const STRIP = ['ready', 'delayed', 'running', 'expired', 'dead', 'completed'];
const withWaiting = (queues, ks) => (queues.some((q) => q.waiting !== undefined) ? ks.concat(['waiting']) : ks);

export function overviewPage(root, ctx) {
  const strip = h('section', { class: 'strip', 'aria-label': 'totals' });
  const table = h('div', { class: 'table-wrap' });
  const health = h('section', { class: 'health' });
  const actions = h('div', { class: 'actions' });
  const host = h('div', { class: 'confirm-host' });
  root.append(h('h1', { text: 'Overview' }), strip, actions, host, table, health);

  if (ctx.canAct('sweep')) {
    actions.append(actionButton('Sweep now', async () => {
      const r = await post('/sweep', {});
      page.refresh();
      return `swept: ${r.requeued} requeued, ${r.dead} dead, ${r.purged} purged`;
    }));
  }

  let enqueueForm = null;
  const page = {
    async refresh() {
      const ov = await get('/overview');
      if (ctx.canAct('enqueue') && !enqueueForm && ov.queues.length) {
        enqueueForm = enqueueBox(ov.queues.map((q) => q.queue), page);
        root.append(enqueueForm);
      }
      let workers = null;
      if (ctx.session.endpoints.workers) {
        try { workers = await get('/workers'); } catch (e) { workers = null; }
      }
      // the last hour's completions per minute of every queue, one request
      // (the period ends at the next whole minute: every tab asks the same)
      let spark = null;
      if (ctx.session.endpoints.metrics) {
        const until = new Date(Math.ceil(Date.now() / 60000) * 60000);
        const since = new Date(until.getTime() - 3600 * 1000);
        try {
          spark = {};
          for (const r of await get('/metrics', { since: since.toISOString(), until: until.toISOString(), bucket: '1 minute' })) {
            (spark[r.queue] = spark[r.queue] || []).push(Number((r.counters || [])[2] || 0));
          }
        } catch (e) {
          spark = null;
        }
      }
      // totals: a capped count of one queue makes its total a lower bound
      const strip_ = withWaiting(ov.queues, STRIP);
      const totals = {};
      const capped = {};
      for (const k of strip_) { totals[k] = 0; capped[k] = false; }
      for (const q of ov.queues) {
        for (const k of strip_) {
          const c = countOf(q, k);
          totals[k] += c.n;
          capped[k] = capped[k] || c.capped;
        }
      }
      clear(strip);
      for (const k of strip_) {
        const warn = k === 'expired' && totals[k] > 0 || k === 'dead' && totals[k] > 0;
        strip.append(h('div', { class: 'count ' + k + (warn ? ' warn' : '') },
          h('span', { class: 'n', text: fmtNum(totals[k]) + (capped[k] ? '+' : '') }), h('span', { class: 'k', text: k })));
      }
      fill(table, queuesTable(ov.queues, workers, spark, ctx, page, host));
      clear(health);
      if (Array.isArray(ov.health) && ov.health.length) {
        // the findings to act on in full; the checks that found nothing folded
        const line = (f) => h('li', { class: 'sev-' + f.severity },
          h('strong', { text: f.severity }), ' · ', [f.check, f.subject, f.detail].filter((v) => v).join(' · '),
          f.advice && f.severity !== 'ok' ? h('div', { class: 'muted', text: f.advice }) : null);
        const bad = ov.health.filter((f) => f.severity !== 'ok');
        const ok = ov.health.filter((f) => f.severity === 'ok');
        health.append(h('h2', { text: 'Health' }),
          bad.length ? h('ul', {}, bad.map(line)) : h('p', { class: 'muted', text: 'No findings.' }),
          ok.length ? h('details', {}, h('summary', { text: ok.length + ' checks found nothing to do' }), h('ul', {}, ok.map(line))) : null);
      }
    },
  };
  return page;
}

function servedBy(workers, queue) {
  return workers.some((w) => w.alive && w.state !== 'stopping' && (w.queues || []).includes(queue));
}

function queuesTable(queues, workers, spark, ctx, page, host) {
  if (!queues.length) return h('p', { class: 'muted', text: 'No queues yet.' });
  const cols = withWaiting(queues, ['ready', 'delayed', 'running', 'expired', 'dead', 'completed', 'cancelled']);
  const act = ctx.canAct('admin');
  return h('table', { class: 'queues' },
    h('thead', {}, h('tr', {}, h('th', { text: 'queue' }), cols.map((c) => h('th', { class: 'num', text: c })),
      h('th', { class: 'num', text: 'oldest ready' }), spark ? h('th', { text: 'completed, last hour' }) : null,
      act ? h('th', { text: '' }) : null)),
    h('tbody', {}, queues.map((q) => {
      const badge = workers && !q.paused && Number(q.ready) > 0 && !servedBy(workers, q.queue)
        ? h('span', { class: 'badge warn', text: 'no workers' }) : null;
      return h('tr', {},
        h('td', {}, link('queues/' + encodeURIComponent(q.queue), q.queue),
          q.paused ? h('span', { class: 'badge', text: 'paused' }) : null, badge),
        cols.map((c) => h('td', { class: 'num' + (c === 'expired' && q[c] > 0 ? ' warn' : '') },
          link('jobs?queue=' + encodeURIComponent(q.queue) + '&state=' + (c === 'expired' ? 'running' : c), countOf(q, c).text))),
        h('td', { class: 'num', text: q.oldest_ready_age ? fmtSeconds(intervalSeconds(q.oldest_ready_age)) : '' }),
        spark ? h('td', {}, sparkline(spark[q.queue] || [], 'completed per minute in ' + q.queue)) : null,
        act ? h('td', { class: 'acts' }, actionButton(q.paused ? 'Resume' : 'Pause', async () => {
          await post('/queues/' + encodeURIComponent(q.queue) + (q.paused ? '/resume' : '/pause'), {});
          await page.refresh();
          return q.queue + (q.paused ? ' resumed' : ' paused');
        }), ctx.session.endpoints.bulk && Number(q.dead) > 0 ? retryDeadButton(q.queue, q.dead, host, () => page.refresh()) : null) : null);
    })));
}

// The enqueue form: the queue from the existing ones, the payload checked
// as JSON before it is sent (the server checks it again).
function enqueueBox(queues, page) {
  const queue = h('select', { name: 'queue', 'aria-label': 'queue' }, queues.map((q) => h('option', { value: q, text: q })));
  const payload = h('textarea', { name: 'payload', rows: 4, spellcheck: 'false', 'aria-label': 'payload (JSON)' }, '{}');
  const priority = h('input', { name: 'priority', type: 'number', min: -1000, max: 1000, value: 0, 'aria-label': 'priority' });
  const delay = h('input', { name: 'delay', placeholder: 'e.g. 5 minutes', 'aria-label': 'delay' });
  const send = h('button', { type: 'submit', text: 'Enqueue' });
  const form = h('form', { class: 'enqueue' },
    h('label', {}, 'queue', queue), h('label', { class: 'wide' }, 'payload (JSON)', payload),
    h('label', {}, 'priority', priority), h('label', {}, 'delay', delay), send);
  payload.addEventListener('input', () => payload.setCustomValidity(''));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (send.disabled) return;
    let value;
    try {
      value = JSON.parse(payload.value);
    } catch (e) {
      payload.setCustomValidity('not valid JSON: ' + e.message);
      payload.reportValidity();
      return;
    }
    const body = { queue: queue.value, payload: value, priority: Number(priority.value || 0) };
    if (delay.value.trim()) body.delay = delay.value.trim();
    send.disabled = true;
    try {
      const r = await post('/enqueue', body);
      toast('job ' + r.id + ' enqueued in ' + body.queue, 'ok');
      await page.refresh();
    } catch (e) {
      toast(e.message, 'error');
    } finally {
      send.disabled = false;
    }
  });
  return h('section', { class: 'box' }, h('h2', { text: 'Enqueue a job' }), form);
}
