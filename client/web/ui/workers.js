// workers.js: the worker registry (jobq_workers), when the server has it.

import { get } from './api.js';
import { clear, fmtTime, h, link } from './dom.js';

export function workersPage(root) {
  const list = h('div', { class: 'table-wrap' });
  root.append(h('h1', { text: 'Workers' }), list);
  return {
    async refresh() {
      const ws = await get('/workers');
      if (!ws.length) { clear(list).append(h('p', { class: 'muted', text: 'No workers registered.' })); return; }
      clear(list).append(h('table', {},
        h('thead', {}, h('tr', {}, ['name', 'host', 'pid', 'state', 'queues', 'busy', 'running', 'heartbeat', 'alive'].map((c) => h('th', { text: c })))),
        h('tbody', {}, ws.map((w) => h('tr', { class: w.alive ? '' : 'dim' },
          h('td', { text: w.name }), h('td', { text: w.host || '' }), h('td', { text: w.pid || '' }),
          h('td', { text: w.state }), h('td', { text: (w.queues || []).join(', ') }),
          h('td', { class: 'num', text: w.busy + '/' + w.slots }),
          h('td', {}, (w.running || []).map((id) => [link('jobs/' + id, String(id)), ' '])),
          h('td', { text: fmtTime(w.heartbeat_at) }), h('td', { text: w.alive ? 'yes' : 'no' }))))));
    },
  };
}
