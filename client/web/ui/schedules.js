// schedules.js: the recurring jobs (jobq_schedules), when the server has them.

import { get } from './api.js';
import { fmtTime, h, link, listPage } from './dom.js';

export function schedulesPage(root) {
  return listPage(root, 'Schedules', () => get('/schedules'), 'No schedules.',
    ['name', 'queue', 'expression', 'zone', 'next run', 'last run', 'last job', 'missed', 'failures', 'last error'],
    (s) => h('tr', { class: s.paused ? 'dim' : '' },
      h('td', {}, s.name, s.paused ? h('span', { class: 'badge', text: 'paused' }) : null),
      h('td', {}, link('jobs?queue=' + encodeURIComponent(s.queue), s.queue)),
      h('td', { text: s.expr }), h('td', { text: s.tz || '' }),
      h('td', { text: fmtTime(s.next_run_at) }), h('td', { text: fmtTime(s.last_run_at) }),
      h('td', {}, s.last_job_id ? [link('jobs/' + s.last_job_id, String(s.last_job_id)), ' ', s.last_job_state || ''] : ''),
      h('td', { class: 'num', text: s.missed_ticks }), h('td', { class: 'num', text: s.failures }),
      h('td', { class: 'error-text', text: s.last_error || '' })));
}
