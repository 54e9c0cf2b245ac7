// job.js: one job (/jobs/<id>): its fields, payload, result and the error
// of each attempt (the attempt timeline: outcome, worker, when, how long),
// with the actions its state allows.  A payload or result
// that jobq_job cut (past 256 kB) has a link to download it whole.  The
// API never returns the token.

import { get, url } from './api.js';
import { fmtTime, h, link, fill, toast } from './dom.js';
import { jobActions } from './jobs.js';

// a word for a POSIX shell, in single quotes
function sh(s) {
  return "'" + String(s).replace(/'/g, "'\\''") + "'";
}

// the jobq commands that show this job and enqueue a copy of it
function cliCommands(j) {
  const enqueue = ['jobq', 'enqueue', sh(j.queue), sh(JSON.stringify(j.payload === undefined ? null : j.payload))];
  if (j.priority) enqueue.push('--priority=' + j.priority);
  if (j.dedupe_key) enqueue.push('--key=' + sh(j.dedupe_key));
  return ['jobq show ' + j.id, enqueue.join(' ')];
}

function copyBox(lines) {
  const text = lines.join('\n');
  const code = h('pre', { class: 'cli', text });
  const button = h('button', { type: 'button', text: 'Copy' });
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      toast('copied', 'ok');
    } catch (e) {
      const r = document.createRange();
      r.selectNodeContents(code);
      getSelection().removeAllRanges();
      getSelection().addRange(r);
      toast('selected: copy it with your keyboard', 'ok');
    }
  });
  return h('div', {}, code, button);
}

function json(v) {
  return v === null || v === undefined ? '(none)' : JSON.stringify(v, null, 2);
}

// the payload or result as text, and a link to the whole value
function value(j, part, ctx) {
  const v = j[part];
  const cut = j[part + '_truncated'] === true;
  const raw = ctx.session.endpoints.raw && v !== null && v !== undefined
    ? h('a', { class: 'raw', href: url('api/jobs/' + j.id + '/raw/' + part).pathname, download: 'job-' + j.id + '-' + part + '.json' },
      cut ? 'cut at 256 kB: download the whole ' + part : 'download')
    : null;
  return [h('h2', {}, part === 'payload' ? 'Payload' : 'Result', raw ? ' ' : null, raw),
    h('pre', { class: 'json' + (cut ? ' cut' : ''), text: cut ? String(v) + '…' : json(v) })];
}

// how long from a to b, as "1.2 s" ("" when either is missing)
function took(a, b) {
  if (!a || !b) return '';
  const s = (new Date(b) - new Date(a)) / 1000;
  return s < 1 ? Math.round(s * 1000) + ' ms' : s < 120 ? (Math.round(s * 10) / 10) + ' s' : Math.round(s / 60) + ' min';
}

// the attempt history of jobq_job (0.2.0): per attempt its outcome,
// worker, start, end and how long it ran, and its error (never the token)
function attemptsTimeline(attempts) {
  if (!attempts.length) return h('p', { class: 'muted', text: 'Not attempted yet.' });
  return h('ol', { class: 'timeline' }, attempts.map((a) => h('li', { class: 'outcome-' + String(a.outcome || '').replace(/\W+/g, '-') },
    h('div', {}, h('strong', { text: 'attempt ' + a.attempt + ': ' + (a.outcome || '') }),
      h('span', { class: 'muted', text: ' · ' + [a.worker || '', fmtTime(a.claimed_at),
        a.finished_at ? 'ran ' + took(a.claimed_at, a.finished_at) : (a.lease_until ? 'lease until ' + fmtTime(a.lease_until) : '')]
        .filter(Boolean).join(' · ') })),
    a.error !== undefined && a.error !== null
      ? h('pre', { class: 'error-text' + (a.error_truncated ? ' cut' : ''), text: String(a.error) + (a.error_truncated ? '…' : '') }) : null)));
}

// the kept errors (0.1.0's jobq_job, which has no attempt history)
function errorsList(errors) {
  if (!errors.length) return h('p', { class: 'muted', text: 'No errors.' });
  return h('ol', { class: 'timeline' }, errors.map((e) => h('li', {},
    h('div', { class: 'muted', text: [e.attempt !== undefined ? 'attempt ' + e.attempt : '', fmtTime(e.at || e.failed_at || e.finished_at), e.worker || ''].filter(Boolean).join(' · ') }),
    h('pre', { class: 'error-text', text: typeof e === 'string' ? e : (e.error !== undefined ? String(e.error) : JSON.stringify(e)) }))));
}

export function jobPage(root, ctx) {
  const body = h('div');
  const host = h('div', { class: 'confirm-host' });
  root.append(h('h1', { text: 'Job ' + ctx.id }), host, body);
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
        ctx.canAct('admin') ? h('div', { class: 'actions' }, jobActions(j, ctx, page, host)) : null,
        value(j, 'payload', ctx), value(j, 'result', ctx),
        h('h2', { text: 'Attempts and errors' }),
        Array.isArray(j.attempts) ? attemptsTimeline(j.attempts) : errorsList(errors),
        h('h2', { text: 'As a jobq command' }), copyBox(cliCommands(j)));
    },
  };
  return page;
}
