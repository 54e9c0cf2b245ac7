// flow.js: one flow (/flows/<id>, jobq_flow_jobs), when the server has
// flows: its jobs drawn by depth (a job right of everything it depends on,
// an edge per dependency in the colour of its state) as inline SVG, then
// the table of jobs; admins cancel the flow's ready and waiting jobs.
// /flows without an id asks for one.

import { get, post } from './api.js';
import { actionButton, confirmAction, fill, fmtTime, h, link } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const STATE_FILL = { waiting: '#eef1f6', ready: '#e3ecfa', delayed: '#e3ecfa', running: '#fff3df',
  completed: '#e6f4ea', dead: '#fde8e8', cancelled: '#ececec', purged: '#f7f7f7' };
const EDGE = { pending: '#9aa3ad', satisfied: '#2e7d32', blocked: '#a3161a', cascaded: '#a35a00' };

function el(tag, attrs, ...kids) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k);
  return e;
}

// depth of each job: 0 without dependencies in the flow, else one more
// than its deepest dependency (the flow is acyclic: the server refuses cycles)
function depths(jobs) {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const d = new Map();
  const depth = (j, seen) => {
    if (d.has(j.id)) return d.get(j.id);
    if (seen.has(j.id)) return 0;
    seen.add(j.id);
    let x = 0;
    for (const dep of j.depends_on || []) if (byId.has(dep)) x = Math.max(x, depth(byId.get(dep), seen) + 1);
    d.set(j.id, x);
    return x;
  };
  for (const j of jobs) depth(j, new Set());
  return d;
}

function graph(jobs) {
  const d = depths(jobs);
  const cols = [];
  for (const j of jobs) (cols[d.get(j.id)] = cols[d.get(j.id)] || []).push(j);
  const W = 130;
  const H = 40;
  const GX = 50;
  const GY = 14;
  const pos = new Map();
  cols.forEach((col, c) => col.forEach((j, r) => pos.set(j.id, { x: 8 + c * (W + GX), y: 8 + r * (H + GY) })));
  const width = 16 + cols.length * (W + GX) - GX;
  const height = 16 + Math.max(...cols.map((c) => c.length)) * (H + GY) - GY;
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, class: 'flow', role: 'img', 'aria-label': 'the jobs of the flow and their dependencies' });
  for (const j of jobs) {
    (j.depends_on || []).forEach((dep, i) => {
      const a = pos.get(dep);
      const b = pos.get(j.id);
      if (!a) return;
      const st = (j.dep_states || [])[i] || 'pending';
      svg.append(el('line', { x1: a.x + W, y1: a.y + H / 2, x2: b.x, y2: b.y + H / 2, stroke: EDGE[st] || EDGE.pending, 'stroke-width': 1.6 },
        el('title', {}, `${dep} → ${j.id}: ${st}`)));
    });
  }
  for (const j of jobs) {
    const p = pos.get(j.id);
    svg.append(el('g', { class: 'node' },
      el('rect', { x: p.x, y: p.y, width: W, height: H, rx: 5, fill: STATE_FILL[j.state] || '#fff', stroke: '#9aa3ad' }),
      el('text', { x: p.x + 8, y: p.y + 16, 'font-size': 12, fill: '#1d1f21' }, `${j.id} · ${j.queue}`),
      el('text', { x: p.x + 8, y: p.y + 32, 'font-size': 11, fill: '#6b6f73' }, j.state),
      el('title', {}, `job ${j.id} (${j.queue}): ${j.state}`)));
  }
  return h('div', { class: 'table-wrap' }, svg);
}

export function flowPage(root, ctx) {
  const body = h('div');
  const host = h('div', { class: 'confirm-host' });
  if (!ctx.id) {
    const input = h('input', { name: 'flow', inputmode: 'numeric', 'aria-label': 'flow id', autocomplete: 'off' });
    const form = h('form', { class: 'filters' }, h('label', {}, 'flow id', input), h('button', { type: 'submit', text: 'Show' }));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (/^\d+$/.test(input.value.trim())) ctx.navigate('flows/' + input.value.trim());
    });
    root.append(h('h1', { text: 'Flows' }), form,
      h('p', { class: 'muted', text: 'A flow is named by the id of its first job (jobq_flow returns it).' }));
    return { async refresh() {} };
  }
  root.append(h('h1', { text: 'Flow ' + ctx.id }), host, body);
  const page = {
    async refresh() {
      let f;
      try {
        f = await get('/flows/' + ctx.id);
      } catch (e) {
        if (e.status === 404) { fill(body, h('p', { text: 'No such flow (or none of its jobs is left).' })); return; }
        throw e;
      }
      const live = f.jobs.filter((j) => ['waiting', 'ready', 'delayed'].includes(j.state)).length;
      fill(body,
        ctx.canAct('admin') && live ? h('div', { class: 'actions' }, actionButton('Cancel flow', async () => {
          if (!await confirmAction(host, `Cancel the ${live} ready and waiting jobs of flow ${ctx.id}? Running jobs finish.`,
            { confirm: 'Cancel flow ' + ctx.id })) return null;
          const r = await post('/flows/' + ctx.id + '/cancel', {});
          await page.refresh();
          return `flow ${ctx.id}: ${r.cancelled} jobs cancelled`;
        }, { class: 'danger' })) : null,
        graph(f.jobs),
        h('div', { class: 'table-wrap' }, h('table', { class: 'flow-jobs' },
          h('thead', {}, h('tr', {}, ['id', 'queue', 'state', 'depends on', 'waits for', 'enqueued', 'finished'].map((c) => h('th', { text: c })))),
          h('tbody', {}, f.jobs.map((j) => h('tr', {},
            h('td', {}, link('jobs/' + j.id, String(j.id))), h('td', { text: j.queue }), h('td', { text: j.state }),
            h('td', {}, (j.depends_on || []).map((d, i) => [link('jobs/' + d, String(d)), ' (' + ((j.dep_states || [])[i] || '') + ') '])),
            h('td', { class: 'num', text: j.pending_deps }),
            h('td', { text: fmtTime(j.enqueued_at) }), h('td', { text: fmtTime(j.finished_at) })))))));
    },
  };
  return page;
}
