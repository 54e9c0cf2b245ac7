// schedules.js: the recurring jobs (jobq_schedules), when the server has
// them, with pause / resume and "run now" (a manual run) for admins.

import { get, post } from './api.js';
import { actionButton, fmtTime, h, link, listPage } from './dom.js';

export function schedulesPage(root, ctx) {
  const act = ctx.canAct('admin') && ctx.session.endpoints.schedule_actions;
  let page = null;
  const call = (s, verb, label, say) => actionButton(label, async () => {
    const r = await post('/schedules/' + encodeURIComponent(s.name) + '/' + verb, {});
    await page.refresh();
    return say(r);
  });
  page = listPage(root, 'Schedules', () => get('/schedules'), 'No schedules.',
    ['name', 'queue', 'expression', 'zone', 'next run', 'last run', 'last job', 'missed', 'failures', 'last error'].concat(act ? [''] : []),
    (s) => h('tr', { class: s.paused ? 'dim' : '' },
      h('td', {}, s.name, s.paused ? h('span', { class: 'badge', text: 'paused' }) : null),
      h('td', {}, link('jobs?queue=' + encodeURIComponent(s.queue), s.queue)),
      h('td', { text: s.expr }), h('td', { text: s.tz || '' }),
      h('td', { text: fmtTime(s.next_run_at) }), h('td', { text: fmtTime(s.last_run_at) }),
      h('td', {}, s.last_job_id ? [link('jobs/' + s.last_job_id, String(s.last_job_id)), ' ', s.last_job_state || ''] : ''),
      h('td', { class: 'num', text: s.missed_ticks }), h('td', { class: 'num', text: s.failures }),
      h('td', { class: 'error-text', text: s.last_error || '' }),
      act ? h('td', { class: 'acts' },
        s.paused ? call(s, 'resume', 'Resume', (r) => `${s.name} resumed: next run ${fmtTime(r.next_run_at)}`)
          : call(s, 'pause', 'Pause', () => `${s.name} paused`),
        call(s, 'trigger', 'Run now', (r) => `${s.name}: job ${r.id} enqueued`)) : null));
  return page;
}
