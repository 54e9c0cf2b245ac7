// schedules.js: the recurring jobs (jobq_schedules), when the server has them.

import { get } from './api.js';
import { clear, fmtTime, h, link } from './dom.js';

export function schedulesPage(root) {
  const list = h('div', { class: 'table-wrap' });
  root.append(h('h1', { text: 'Schedules' }), list);
  return {
    async refresh() {
      const ss = await get('/schedules');
      if (!ss.length) { clear(list).append(h('p', { class: 'muted', text: 'No schedules.' })); return; }
      clear(list).append(h('table', {},
        h('thead', {}, h('tr', {}, ['name', 'queue', 'expression', 'zone', 'next run', 'last run', 'last job', 'missed', 'failures', 'last error'].map((c) => h('th', { text: c })))),
        h('tbody', {}, ss.map((s) => h('tr', { class: s.paused ? 'dim' : '' },
          h('td', {}, s.name, s.paused ? h('span', { class: 'badge', text: 'paused' }) : null),
          h('td', {}, link('jobs?queue=' + encodeURIComponent(s.queue), s.queue)),
          h('td', { text: s.expr }), h('td', { text: s.tz || '' }),
          h('td', { text: fmtTime(s.next_run_at) }), h('td', { text: fmtTime(s.last_run_at) }),
          h('td', {}, s.last_job_id ? [link('jobs/' + s.last_job_id, String(s.last_job_id)), ' ', s.last_job_state || ''] : ''),
          h('td', { class: 'num', text: s.missed_ticks }), h('td', { class: 'num', text: s.failures }),
          h('td', { class: 'error-text', text: s.last_error || '' }))))));
    },
  };
}
