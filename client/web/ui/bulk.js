// bulk.js: the actions on many jobs.  By selection, one request with the
// ids (jobq_*_many); by filter ("all matching"), a loop of batches
// (jobq_*_where), each its own transaction on the server, with a progress
// bar, a Stop button and a pause between batches, so that a large action
// never holds the database for long and can be stopped half way.

import { post } from './api.js';
import { confirmAction, fill, fmtNum, h, sleep, toast } from './dom.js';

// the states each action takes (doc/sql.md, bulk actions)
export const ACTIONS = [
  { key: 'retry', label: 'Retry', done: 'retried', states: ['dead'] },
  { key: 'run-now', label: 'Run now', done: 'made due now', states: ['delayed'] },
  { key: 'cancel', label: 'Cancel', done: 'cancelled', states: ['ready', 'delayed', 'dead'], danger: true },
  { key: 'delete', label: 'Delete', done: 'deleted', states: ['completed', 'dead', 'cancelled'], danger: true },
];

const BATCH = 1000;
const PAUSE_MS = 250;
// above this many jobs the user types the queue's name to confirm
export const TYPED_ABOVE = 1000;

// a job's state as the actions see it: a ready job whose run_at is ahead is delayed
export function actionState(j) {
  return j.state === 'ready' && j.run_at && new Date(j.run_at) > Date.now() ? 'delayed' : j.state;
}

// by ids: confirm, one request; resolves the server's {affected, skipped} or null
export async function runIds(action, ids, host) {
  const n = ids.length;
  const ok = await confirmAction(host, `${action.label} ${fmtNum(n)} selected job${n === 1 ? '' : 's'}?`,
    { confirm: `${action.label} ${fmtNum(n)}` });
  if (!ok) return null;
  const r = await post('/jobs/' + action.key, { ids });
  toast(`${fmtNum(r.affected)} ${action.done}` + (r.skipped ? `, ${fmtNum(r.skipped)} skipped (not in a state for it, or busy)` : ''), 'ok');
  return r;
}

// by filter: confirm (typed above TYPED_ABOVE), then batches until done or
// stopped; count is {count, capped} of what matches.  Resolves the number
// of jobs changed, or null when not confirmed.
const running = new Set();   // the loops under way, so that a redrawn button cannot start one twice

export async function runWhere(action, where, count, host) {
  const key = JSON.stringify([action.key, where.queue, where.state, where.filters]);
  if (running.has(key)) { toast('that action is already running', 'error'); return null; }
  running.add(key);
  try {
    return await loop(action, where, count, host);
  } finally {
    running.delete(key);
  }
}

async function loop(action, where, count, host) {
  const n = count.capped ? fmtNum(count.count) + '+' : fmtNum(count.count);
  const big = count.capped || count.count > TYPED_ABOVE;
  const what = `${action.label} all ${n} matching ${where.state || ''} job${count.count === 1 ? '' : 's'} of ${where.queue}?`;
  const ok = await confirmAction(host, what + (big ? ' This is a large action, done in batches of ' + fmtNum(BATCH) + '.' : ''),
    { confirm: `${action.label} ${n}`, typed: big ? where.queue : null });
  if (!ok) return null;
  let stopped = false;
  let done = 0;
  let batches = 0;
  const bar = h('progress', { max: Math.max(count.count, 1), value: 0, 'aria-label': action.label + ' progress' });
  const text = h('span', { class: 'progress-text', 'aria-live': 'polite' });
  const stop = h('button', { type: 'button', text: 'Stop', onclick: () => { stopped = true; stop.disabled = true; } });
  fill(host, h('div', { class: 'progress', role: 'group', 'aria-label': 'bulk action' }, bar, text, stop));
  const show = (more) => {
    bar.value = Math.min(done, bar.max);
    text.textContent = `${fmtNum(done)} ${action.done}` + (more ? ` of about ${n}…` : '');
  };
  show(true);
  const body = { queue: where.queue, state: where.state || null, filters: where.filters || {}, max_rows: BATCH, after: null };
  try {
    for (;;) {
      const r = await post('/jobs/' + action.key, body);
      done += Number(r.affected);
      batches++;
      if (!r.more || stopped) { show(false); break; }
      body.after = r.next_cursor;
      show(true);
      await sleep(PAUSE_MS);
      if (stopped) { show(false); break; }
    }
  } finally {
    stop.remove();
  }
  text.textContent = `${fmtNum(done)} ${action.done}` + (stopped ? ' (stopped)' : '') + ` in ${batches} batch${batches === 1 ? '' : 'es'}`;
  toast(text.textContent, 'ok');
  return done;
}

// "Retry dead" of a queue: every dead job, in batches (the overview's and
// the queue page's button); then refresh
export function retryDeadButton(queue, dead, host, refresh) {
  return h('button', { type: 'button', text: 'Retry dead', onclick: async (ev) => {
    const b = ev.currentTarget;
    if (b.disabled) return;
    b.disabled = true;
    try {
      const n = await runWhere(ACTIONS[0], { queue, state: 'dead', filters: {} }, { count: Number(dead), capped: false }, host);
      if (n !== null) await refresh();
    } catch (e) {
      toast(e.message, 'error');
    } finally {
      b.disabled = false;
    }
  } });
}
