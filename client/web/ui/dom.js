// dom.js: building the page.  Every text goes in through textContent or
// createTextNode, never innerHTML: job payloads and errors are data.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  return put(el, children);
}

// append children: nested arrays flattened, null/undefined/false skipped,
// anything else that is not a node as text
function put(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// replace el's children
export function fill(el, ...children) {
  return put(clear(el), children);
}

export function toast(message, kind) {
  const box = document.getElementById('toasts');
  const t = h('div', { class: 'toast ' + (kind || 'ok'), text: message });
  box.append(t);
  setTimeout(() => t.remove(), 6000);
}

// A button that runs an async action once at a time: disabled while it
// runs, so it cannot be submitted twice.
export function actionButton(label, action, opts) {
  const b = h('button', { type: 'button', class: (opts && opts.class) || '' }, label);
  b.addEventListener('click', async () => {
    if (b.disabled) return;
    b.disabled = true;
    b.setAttribute('aria-busy', 'true');
    try {
      const msg = await action();
      if (msg) toast(msg, 'ok');
    } catch (e) {
      toast(e.message, 'error');
    } finally {
      b.disabled = false;
      b.removeAttribute('aria-busy');
    }
  });
  return b;
}

export function fmtTime(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  return isNaN(d) ? String(ts) : d.toLocaleString();
}

export function fmtNum(n) {
  return n === null || n === undefined ? '' : Number(n).toLocaleString();
}

// a link inside the app (handled by the router in main.js)
export function link(href, text) {
  return h('a', { href, 'data-route': true }, text);
}

// A page that is one table of what GET path returns: the heading, "empty"
// when there is no row, else the columns and one row per item.
export function listPage(root, title, load, empty, columns, row) {
  const list = h('div', { class: 'table-wrap' });
  root.append(h('h1', { text: title }), list);
  return {
    async refresh() {
      const items = await load();
      if (!items.length) { fill(list, h('p', { class: 'muted', text: empty })); return; }
      fill(list, h('table', {},
        h('thead', {}, h('tr', {}, columns.map((c) => h('th', { text: c })))),
        h('tbody', {}, items.map(row))));
    },
  };
}

// confirmAction(host, message, opts): an in-page confirmation (never a
// browser dialog) shown in host; resolves true when confirmed, false when
// kept.  opts.confirm is the button's label; opts.typed a word the user
// must type first (the large bulk actions).
export function confirmAction(host, message, opts) {
  const o = opts || {};
  return new Promise((resolve) => {
    const yes = h('button', { type: 'button', class: 'danger', text: o.confirm || 'Confirm', disabled: !!o.typed });
    const no = h('button', { type: 'button', text: 'Keep' });
    const typed = o.typed ? h('input', { 'aria-label': 'type ' + o.typed + ' to confirm', autocomplete: 'off', spellcheck: 'false' }) : null;
    const box = h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': message },
      h('p', { text: message }),
      typed ? h('label', {}, 'Type ', h('code', { text: o.typed }), ' to confirm ', typed) : null,
      h('div', { class: 'actions' }, yes, no));
    const done = (v) => { box.remove(); resolve(v); };
    if (typed) typed.addEventListener('input', () => { yes.disabled = typed.value.trim() !== o.typed; });
    yes.addEventListener('click', () => { if (!yes.disabled) done(true); });
    no.addEventListener('click', () => done(false));
    fill(host, box);
    (typed || yes).focus();
  });
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

// a count of jobq_counts as shown: a capped one (exact false and at its
// cap: 100,001 for a finished state, 10,001 for delayed and expired) as
// "100,000+"; returns {text, capped, n}
const CAPS = { completed: 100001, dead: 100001, cancelled: 100001, delayed: 10001, expired: 10001 };
export function countOf(q, k) {
  const n = Number(q[k] || 0);
  const capped = q.exact === false && CAPS[k] !== undefined && n >= CAPS[k];
  return { n: capped ? CAPS[k] - 1 : n, capped, text: capped ? fmtNum(CAPS[k] - 1) + '+' : fmtNum(n) };
}
