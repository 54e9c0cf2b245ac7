// workers.js: the worker registry (jobq_workers), when the server has it.

import { get } from './api.js';
import { fmtTime, h, link, listPage } from './dom.js';

export function workersPage(root) {
  return listPage(root, 'Workers', () => get('/workers'), 'No workers registered.',
    ['name', 'host', 'pid', 'state', 'queues', 'busy', 'running', 'heartbeat', 'alive'],
    (w) => h('tr', { class: w.alive ? '' : 'dim' },
      h('td', { text: w.name }), h('td', { text: w.host || '' }), h('td', { text: w.pid || '' }),
      h('td', { text: w.state }), h('td', { text: (w.queues || []).join(', ') }),
      h('td', { class: 'num', text: w.busy + '/' + w.slots }),
      h('td', {}, (w.running || []).map((id) => [link('jobs/' + id, String(id)), ' '])),
      h('td', { text: fmtTime(w.heartbeat_at) }), h('td', { text: w.alive ? 'yes' : 'no' })));
}
