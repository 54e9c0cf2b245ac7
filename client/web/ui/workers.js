// workers.js: the worker registry (jobq_workers), when the server has it,
// with quiet / resume / stop for admins (jobq_worker_signal; stop asks
// first).

import { get, post } from './api.js';
import { actionButton, confirmAction, fmtTime, h, link, listPage } from './dom.js';

export function workersPage(root, ctx) {
  const act = ctx.canAct('admin') && ctx.session.endpoints.worker_signal;
  const host = h('div', { class: 'confirm-host' });
  let page = null;
  const signal = (w, sig, label, ask) => actionButton(label, async () => {
    if (ask && !await confirmAction(host, `${label} worker ${w.name}? It finishes its running jobs, then exits.`, { confirm: `${label} ${w.name}` })) return null;
    const r = await post('/workers/' + encodeURIComponent(w.worker_id) + '/' + sig, {});
    await page.refresh();
    return r.workers ? `${w.name}: ${sig} sent` : `${w.name} did not take ${sig} (it is stopping or gone)`;
  }, { class: sig === 'stop' ? 'danger' : '' });
  page = listPage(root, 'Workers', () => get('/workers'), 'No workers registered.',
    ['name', 'host', 'pid', 'state', 'queues', 'busy', 'running', 'heartbeat', 'alive'].concat(act ? [''] : []),
    (w) => h('tr', { class: w.alive ? '' : 'dim' },
      h('td', { text: w.name }), h('td', { text: w.host || '' }), h('td', { text: w.pid || '' }),
      h('td', { text: w.state }), h('td', { text: (w.queues || []).join(', ') }),
      h('td', { class: 'num', text: w.busy + '/' + w.slots }),
      h('td', {}, (w.running || []).map((id) => [link('jobs/' + id, String(id)), ' '])),
      h('td', { text: fmtTime(w.heartbeat_at) }), h('td', { text: w.alive ? 'yes' : 'no' }),
      act ? h('td', { class: 'acts' }, w.state === 'stopping' || !w.alive ? null : [
        w.state === 'quiet' ? signal(w, 'resume', 'Resume') : signal(w, 'quiet', 'Quiet'),
        signal(w, 'stop', 'Stop', true)]) : null));
  root.insertBefore(host, root.lastChild);
  return page;
}
