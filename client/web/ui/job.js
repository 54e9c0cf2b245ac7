// job.js: one job (/jobs/<id>): its fields, payload, result and the error
// of each attempt, with retry and cancel where they apply.  The API never
// returns the token.

import { get } from './api.js';
import { fmtTime, h, link, fill } from './dom.js';
import { jobActions } from './jobs.js';

function json(v) {
  return v === null || v === undefined ? '(none)' : JSON.stringify(v, null, 2);
}

export function jobPage(root, ctx) {
  const body = h('div');
  root.append(h('h1', { text: 'Job ' + ctx.id }), body);
  const page = {
    async refresh() {
      let j;
      try {
        j = await get('/jobs/' + ctx.id);
      } catch (e) {
        if (e.status === 404) { fill(body, h('p', { text: 'No such job (or it was purged).' })); return; }
        throw e;
      }
      const fields = ['queue', 'state', 'priority', 'attempt', 'max_attempts', 'run_at', 'locked_until', 'worker',
        'enqueued_at', 'claimed_at', 'finished_at', 'dedupe_key'];
      const errors = Array.isArray(j.errors) ? j.errors : [];
      fill(body, 
        h('dl', { class: 'fields' }, fields.map((f) => [h('dt', { text: f }),
          h('dd', {}, f === 'queue' ? link('jobs?queue=' + encodeURIComponent(j.queue), j.queue)
            : /_at$|_until$/.test(f) ? fmtTime(j[f]) : (j[f] === null ? '' : String(j[f])))])),
        ctx.canAct('admin') ? h('div', { class: 'actions' }, jobActions(j, page)) : null,
        h('h2', { text: 'Payload' }), h('pre', { class: 'json', text: json(j.payload) }),
        h('h2', { text: 'Result' }), h('pre', { class: 'json', text: json(j.result) }),
        h('h2', { text: 'Attempts and errors' }),
        errors.length ? h('ol', { class: 'timeline' }, errors.map((e) => h('li', {},
          h('div', { class: 'muted', text: [e.attempt !== undefined ? 'attempt ' + e.attempt : '', fmtTime(e.at || e.failed_at || e.finished_at), e.worker || ''].filter(Boolean).join(' · ') }),
          h('pre', { class: 'error-text', text: typeof e === 'string' ? e : (e.error !== undefined ? String(e.error) : JSON.stringify(e)) }))))
          : h('p', { class: 'muted', text: 'No errors.' }));
    },
  };
  return page;
}
