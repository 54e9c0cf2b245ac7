// queue.js: one queue (/queues/<name>): its counts and settings (edited
// by admins), pause/resume, and charts from jobq_metrics over a chosen range:
// throughput (enqueued, completed, dead per bucket), wait and run latency
// (p95), and the age of the oldest ready job (which a histogram of
// finished jobs cannot show when a queue stalls).

import { get, post } from './api.js';
import { actionButton, countOf, fill, h, link, toast } from './dom.js';
import { fmtSeconds, intervalSeconds, lineChart } from './chart.js';
import { retryDeadButton } from './bulk.js';

// the counters of JOBQ_METRIC_COUNTERS, in their order
const COUNTERS = ['enqueued', 'claimed', 'completed', 'retried', 'dead', 'cancelled', 'lease_expired', 'stale_acks',
  'limit_held', 'rate_held'];
const RANGES = [['1h', 1, '1 minute'], ['6h', 6, '5 minutes'], ['24h', 24, '15 minutes'], ['7d', 168, '1 hour']];

export function queuePage(root, ctx) {
  const name = ctx.queue;
  const range = RANGES.find((r) => r[0] === ctx.params.get('range')) || RANGES[0];
  const head = h('div', { class: 'row' });
  const host = h('div', { class: 'confirm-host' });
  const counts = h('section', { class: 'strip' });
  const charts = h('section', { class: 'charts' });
  const settings = h('section');
  const ranges = h('nav', { class: 'tabs', 'aria-label': 'range' },
    RANGES.map((r) => {
      const a = link('queues/' + encodeURIComponent(name) + '?range=' + r[0], r[0]);
      if (r === range) a.setAttribute('aria-current', 'page');
      return a;
    }));
  fill(root, h('h1', { text: 'Queue ' + name }), head, host, counts,
    ctx.session.endpoints.metrics ? [h('h2', { text: 'Over time' }), ranges, charts] : null, settings);

  // the settings form (admin): an input per setting of GET /api/session,
  // only the changed ones sent (PATCH /api/queues/Q: jobq_alter_queue);
  // the page's refresh leaves it alone while it is open
  let editing = false;
  function settingsForm(qs) {
    const inputs = {};
    const rows = ctx.session.settings.map((d) => {
      const v = qs[d.name];
      let input;
      if (d.kind === 'BOOLEAN') {
        input = h('input', { type: 'checkbox', name: d.name });
        input.checked = v === true;
      } else if (d.kind === 'CHOICE') {
        input = h('select', { name: d.name }, d.choices.map((c) => h('option', { value: c, selected: c === v, text: c })));
      } else if (d.kind === 'INTEGER') {
        input = h('input', { type: 'number', name: d.name, min: d.min, max: d.max, step: 1, value: v === null ? '' : v });
      } else {
        input = h('input', { name: d.name, value: v === null ? '' : v, placeholder: 'e.g. 5 minutes', autocomplete: 'off' });
      }
      inputs[d.name] = { d, input, before: v };
      return [h('dt', {}, h('label', { text: d.name })), h('dd', {}, input)];
    });
    const form = h('form', { class: 'settings' }, h('h2', { text: 'Settings' }), h('dl', { class: 'fields' }, rows));
    const save = h('button', { type: 'submit', text: 'Save' });
    const cancel = h('button', { type: 'button', text: 'Cancel', onclick: () => { editing = false; page.refresh(); } });
    form.append(h('div', { class: 'actions' }, save, cancel));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (save.disabled) return;
      const changes = {};
      for (const [k, { d, input, before }] of Object.entries(inputs)) {
        let v;
        if (d.kind === 'BOOLEAN') v = input.checked;
        else if (d.kind === 'INTEGER') v = input.value === '' ? null : Number(input.value);
        else v = input.value.trim() === '' ? null : input.value.trim();
        if (v !== null && String(v) !== String(before)) changes[k] = v;
      }
      if (!Object.keys(changes).length) { editing = false; page.refresh(); return; }
      save.disabled = true;
      try {
        await post('/queues/' + encodeURIComponent(name), changes, 'PATCH');
        toast(name + ': ' + Object.keys(changes).join(', ') + ' changed', 'ok');
        editing = false;
        await page.refresh();
      } catch (e) {
        toast(e.message, 'error');
      } finally {
        save.disabled = false;
      }
    });
    return form;
  }

  const page = {
    async refresh() {
      const ov = await get('/overview');
      const q = ov.queues.find((x) => x.queue === name);
      if (!q) { fill(head, h('p', { text: 'No such queue.' })); return; }
      fill(head, q.paused ? h('span', { class: 'badge', text: 'paused' }) : null,
        link('jobs?queue=' + encodeURIComponent(name), 'jobs'),
        ctx.canAct('admin') ? actionButton(q.paused ? 'Resume' : 'Pause', async () => {
          await post('/queues/' + encodeURIComponent(name) + (q.paused ? '/resume' : '/pause'), {});
          await page.refresh();
          return name + (q.paused ? ' resumed' : ' paused');
        }) : null,
        ctx.canAct('admin') && ctx.session.endpoints.bulk && Number(q.dead) > 0
          ? retryDeadButton(name, q.dead, host, () => page.refresh()) : null);
      const qs = (await get('/queues')).find((x) => x.queue === name);
      // a grouped queue's groups (jobq_counts, where the server has them):
      // those running a job, those a dead head blocks (to the groups page)
      const grouped = qs && qs.group_mode && qs.group_mode !== 'none' && q.groups_active !== undefined;
      fill(counts, ['ready', 'delayed', 'running', 'expired', 'dead', 'completed', 'cancelled'].map((k) =>
        h('div', { class: 'count' + (k === 'expired' && q[k] > 0 ? ' warn' : '') },
          h('span', { class: 'n', text: countOf(q, k).text }), h('span', { class: 'k', text: k }))),
        grouped ? [['groups_active', 'groups active', ''], ['groups_blocked', 'groups blocked', '&blocked=1']].map(([k, label, b]) =>
          h('div', { class: 'count' + (k === 'groups_blocked' && Number(q[k]) > 0 ? ' warn' : '') },
            h('span', { class: 'n', text: countOf(q, k).text }),
            h('a', { href: 'groups?queue=' + encodeURIComponent(name) + b, 'data-route': true, class: 'k' }, label))) : null);
      if (qs && !editing) {
        const canEdit = ctx.canAct('admin') && (ctx.session.settings || []).length;
        fill(settings, h('h2', {}, 'Settings', canEdit ? ' ' : null,
          canEdit ? h('button', { type: 'button', text: 'Edit', onclick: () => { editing = true; fill(settings, settingsForm(qs)); } }) : null),
          h('dl', { class: 'fields' },
            Object.entries(qs).filter(([k]) => k !== 'queue').map(([k, v]) => [h('dt', { text: k }), h('dd', { text: v === null ? '' : String(v) })])));
      }
      if (!ctx.session.endpoints.metrics) return;
      // the period ends at the next whole minute, so every tab asks the
      // same question for a minute and the server's cache answers them
      const until = new Date(Math.ceil(Date.now() / 60000) * 60000);
      const since = new Date(until.getTime() - range[1] * 3600 * 1000);
      const rows = await get('/metrics', { queue: name, since: since.toISOString(), until: until.toISOString(), bucket: range[2] });
      const times = rows.map((r) => r.bucket);
      const counter = (c) => rows.map((r) => Number((r.counters || [])[COUNTERS.indexOf(c)] || 0));
      const secs = (k) => rows.map((r) => intervalSeconds(r[k]));
      fill(charts,
        lineChart('jobs per ' + range[2], times, [
          { name: 'enqueued', values: counter('enqueued'), colour: '#2457a6' },
          { name: 'completed', values: counter('completed'), colour: '#2e7d32' },
          { name: 'dead', values: counter('dead'), colour: '#a3161a' }]),
        lineChart('latency p95', times, [
          { name: 'wait', values: secs('wait_p95'), colour: '#a35a00' },
          { name: 'run', values: secs('run_p95'), colour: '#6a3d9a' }], fmtSeconds),
        lineChart('oldest ready job', times, [
          { name: 'age', values: secs('oldest_ready_age'), colour: '#a35a00' }], fmtSeconds),
        rows.some((r) => r.complete === false) ? h('p', { class: 'muted', text: 'Some buckets are incomplete (not over yet, or not seen by the live counters).' }) : null);
    },
  };
  return page;
}
