// api.js: the JSON API of jobq-web, relative to the page's <base href>
// (so a --prefix behind a proxy works).  Every unsafe request carries
// X-Jobq-Request: 1 and a JSON body, as the server requires.

const base = new URL(document.baseURI);

export function url(path) {
  return new URL(path.replace(/^\//, ''), base);
}

export function pagePath() {
  // the page's path below the prefix, starting with "/"
  const p = location.pathname;
  const b = base.pathname;
  return '/' + (p.startsWith(b) ? p.slice(b.length) : p.replace(/^\//, ''));
}

async function answer(resp) {
  let body = null;
  try {
    body = await resp.json();
  } catch (e) {
    body = null;
  }
  if (!resp.ok) {
    const err = new Error(body && body.error ? body.error : 'HTTP ' + resp.status);
    err.status = resp.status;
    throw err;
  }
  return body;
}

export async function get(path, params) {
  const u = url('api' + path);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, v);
  }
  return answer(await fetch(u, { headers: { Accept: 'application/json' }, credentials: 'same-origin' }));
}

export async function post(path, body, method) {
  return answer(await fetch(url('api' + path), {
    method: method || 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Jobq-Request': '1', Accept: 'application/json' },
    body: JSON.stringify(body || {}),
  }));
}
