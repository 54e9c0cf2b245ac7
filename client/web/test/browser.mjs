// client/web/test/browser.mjs: jobq-web in a real browser (Debian's
// chromium, driven by playwright-core; run by t/089_web_browser.pl).
//
// Environment: WEB_URL (the dashboard, ending in "/"), SHOTS (a directory
// for the screenshots), XSS_ID and DEAD_ID (job ids), MAILS_READY (the
// ready count of queue "mails" the overview must show), BULK_MATCHING (the
// dead jobs of queue "bulkq" whose error says timeout).  Prints one JSON
// line per check: {"ok": true|false, "name": ..., "detail": ...}.
//
// Every page fails its checks on any request that leaves 127.0.0.1, any
// CSP violation, console error, page error or dialog.

import { chromium } from 'playwright-core';

const base = process.env.WEB_URL;
const shots = process.env.SHOTS;

function check(ok, name, detail) {
  console.log(JSON.stringify({ ok: !!ok, name, detail: detail === undefined ? null : String(detail) }));
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

async function open(user, pass, viewport) {
  const ctx = await browser.newContext({
    httpCredentials: { username: user, password: pass },
    viewport: viewport || { width: 1280, height: 900 },
  });
  const problems = [];
  await ctx.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname !== '127.0.0.1') {
      problems.push('request leaving 127.0.0.1: ' + u.href);
      return route.abort();
    }
    return route.continue();
  });
  await ctx.addInitScript(() => {
    document.addEventListener('securitypolicyviolation',
      (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));
  });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console error: ' + m.text()); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('dialog', (d) => { problems.push('dialog: ' + d.message()); d.dismiss(); });
  return { ctx, page, problems };
}

// true, or the elements wider than the viewport
async function noHorizontalScroll(page) {
  return page.evaluate(() => {
    const w = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= w) return true;
    const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > w + 1)
      .map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const r = document.createRange();
      r.selectNodeContents(n);
      if (r.getBoundingClientRect().right > w + 1) wide.push('text "' + n.textContent.slice(0, 40) + '" in ' + n.parentNode.tagName);
    }
    return 'scrollWidth ' + document.documentElement.scrollWidth + ' > ' + w + ': ' + wide.slice(0, 6).join(', ');
  });
}

try {
  // --- the admin: overview, job page, retry
  const a = await open('admin', 's3cret');

  // keyset paging while a worker drains queue drain: each page ascending,
  // the next page wholly after the first, none twice
  await a.page.goto(base + 'jobs?queue=drain&state=ready');
  await a.page.waitForSelector('table.jobs');
  const idsOf = async () => (await a.page.locator('table.jobs tbody tr td:nth-child(2)').allTextContents()).map(Number);
  const page1 = await idsOf();
  await a.page.getByRole('button', { name: 'Next →' }).click();
  await a.page.waitForURL(/after=/);
  await a.page.waitForFunction((first) => {
    const c = document.querySelector('table.jobs tbody tr td:nth-child(2)');
    return c && Number(c.textContent) > first;
  }, page1[page1.length - 1]);
  const page2 = await idsOf();
  const ascending = (xs) => xs.every((x, i) => i === 0 || xs[i - 1] < x);
  check(page1.length === 50 && page2.length === 50 && ascending(page1) && ascending(page2) &&
    page2[0] > page1[page1.length - 1], 'keyset pages while a worker drains: ascending, the second after the first',
    page1.slice(-3).join(',') + ' | ' + page2.slice(0, 3).join(','));
  await a.page.goto(base);
  await a.page.waitForSelector('table.queues');
  const row = a.page.locator('table.queues tr', { hasText: 'mails' });
  const cells = await row.locator('td').allTextContents();
  check(cells[1] === process.env.MAILS_READY, 'the overview shows the ready count of mails', cells.join('|'));
  const strip = (await a.page.locator('.strip .count .k').allTextContents()).join(',');
  check(strip === 'ready,delayed,running,expired,dead,completed' || strip === 'ready,delayed,running,expired,dead,completed,waiting',
    'the counter strip has the six counts (and waiting where the server has flows)', strip);
  const archive = await a.page.locator('table.queues tr', { hasText: 'archive' }).locator('td').allTextContents();
  check(archive[6] === '100,000+' && (await a.page.locator('.strip .count.completed .n').textContent()).endsWith('+'),
    'a count past jobq_counts\' cap shows as 100,000+, and so does its total', archive.join('|'));
  await a.page.waitForSelector('table.queues svg.spark');
  check(await a.page.locator('table.queues svg.spark').count() === await a.page.locator('table.queues tbody tr').count(), 'a sparkline per queue');
  check(await a.page.getByRole('button', { name: 'Pause' }).count() > 0, 'the admin sees Pause');
  check(await a.page.locator('#auto').isChecked(), 'the auto switch is on by default');
  await a.page.screenshot({ path: shots + '/overview.png', fullPage: true });

  // the enqueue form: bad JSON is refused before sending, good JSON enqueues
  const form = a.page.locator('form.enqueue');
  await form.locator('select').selectOption('mails');
  await form.locator('textarea').fill('{"from": ');
  let posted = 0;
  a.page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/api/enqueue')) posted++; });
  await form.getByRole('button', { name: 'Enqueue' }).click();
  check(await form.locator('textarea').evaluate((t) => !t.validity.valid) && posted === 0,
    'the enqueue form refuses JSON that does not parse, without sending it');
  await form.locator('textarea').fill('{"from": "the form"}');
  await form.getByRole('button', { name: 'Enqueue' }).click();
  await a.page.locator('#toasts .toast', { hasText: 'enqueued in mails' }).waitFor();
  check(posted === 1, 'the enqueue form sends once and says so');

  await a.page.goto(base + 'jobs/' + process.env.XSS_ID);
  await a.page.waitForSelector('pre.json');
  const payload = await a.page.locator('pre.json').first().textContent();
  check(payload.includes('<img src=x onerror=alert(1)>') && payload.includes('</script><script>'),
    'the payload shows as text', payload);
  const errors = await a.page.locator('ol.timeline').textContent();
  check(errors.includes('<img src=x onerror=alert(1)>'), 'the error shows as text', errors);
  check(/attempt 1: failed · ui-test · .* · ran \d/.test(errors), 'the attempt timeline: outcome, worker, start, how long', errors);
  check(await a.page.locator('main img, main script').count() === 0, 'no element was made from job text');
  const cli = await a.page.locator('pre.cli').textContent();
  check(cli.startsWith('jobq show ' + process.env.XSS_ID + '\njobq enqueue \'mails\' \'{"end":"</script>'),
    'the job page has it as jobq commands', cli);
  await a.page.screenshot({ path: shots + '/job.png', fullPage: true });

  await a.page.goto(base + 'jobs?queue=mails&state=dead');
  await a.page.waitForSelector('table.jobs');
  check(await a.page.locator('#queue').inputValue() === 'mails', 'the queue chooser shows the queue of the URL');
  const retry = a.page.locator(`table.jobs tr:has(a[href="jobs/${process.env.DEAD_ID}"])`)
    .getByRole('button', { name: 'Retry' });
  await retry.click();
  await a.page.locator('#toasts .toast', { hasText: 'job ' + process.env.DEAD_ID + ' retried' }).waitFor();
  check(true, 'Retry on a dead job: the toast says retried');
  await a.page.screenshot({ path: shots + '/jobs.png', fullPage: true });
  // the queue page: counts, settings and three charts
  await a.page.goto(base + 'queues/mails?range=6h');
  await a.page.waitForSelector('svg.chart');
  check(await a.page.locator('figure svg.chart').count() === 3, 'the queue page draws three charts');
  const tip = await a.page.locator('svg.chart').first().locator('rect.hover title').last().textContent();
  check(/\nenqueued: \d+\ncompleted: \d+\ndead: \d+$/.test(tip), 'a chart\'s buckets have their values as a tooltip', tip);
  check((await a.page.locator('.fields').textContent()).includes('max_attempts'), 'the queue page shows the settings');
  // the admin edits a setting: only the changed one is sent (t/089 checks the database)
  await a.page.locator('main h2', { hasText: 'Settings' }).getByRole('button', { name: 'Edit' }).click();
  let patch = null;
  a.page.on('request', (r) => { if (r.method() === 'PATCH') patch = r.postData(); });
  await a.page.locator('form.settings input[name=max_attempts]').fill('4');
  await a.page.locator('form.settings').getByRole('button', { name: 'Save' }).click();
  await a.page.locator('#toasts .toast', { hasText: 'mails: max_attempts changed' }).waitFor();
  check(patch === '{"max_attempts":4}', 'editing a setting sends only that setting', patch);
  await a.page.screenshot({ path: shots + '/queue.png', fullPage: true });
  await a.page.goto(base + 'schedules');
  await a.page.waitForSelector('main table');
  check((await a.page.locator('main table tbody tr').allTextContents()).join('|').includes('nightly'),
    'the schedules page lists the schedule');
  await a.page.locator('main tr', { hasText: 'nightly' }).getByRole('button', { name: 'Run now' }).click();
  await a.page.locator('#toasts .toast', { hasText: 'nightly: job ' }).waitFor();
  check(true, 'Run now on a schedule: the toast names its job');
  await a.page.goto(base + 'workers');
  await a.page.waitForSelector('main table');
  await a.page.locator('main tr', { hasText: 'ui-worker' }).getByRole('button', { name: 'Quiet' }).click();
  await a.page.locator('#toasts .toast', { hasText: 'ui-worker: quiet sent' }).waitFor();
  await a.page.locator('main tr', { hasText: 'ui-worker' }).getByRole('button', { name: 'Resume' }).waitFor();
  check(true, 'Quiet on a worker: sent, and the worker offers Resume');

  // filter -> select all matching -> retry: typed confirmation (above
  // 1,000 jobs), progress in batches, the database agrees (t/089 checks)
  const filters = encodeURIComponent(JSON.stringify({ error: 'timeout' }));
  await a.page.goto(base + 'jobs?queue=bulkq&state=dead&filters=' + filters);
  await a.page.waitForSelector('table.jobs');
  check(await a.page.locator('form.filters input[name=error]').inputValue() === 'timeout', 'the filter is kept in the URL and shown');
  await a.page.getByRole('button', { name: 'Select all matching' }).click();
  await a.page.locator('.bulk .sel', { hasText: 'All ' + Number(process.env.BULK_MATCHING).toLocaleString() + ' matching jobs selected' }).waitFor();
  check(true, 'select all matching counts the filter\'s jobs');
  await a.page.locator('.bulk').getByRole('button', { name: 'Retry' }).click();
  const confirmBtn = a.page.locator('.confirm').getByRole('button', { name: 'Retry ' + Number(process.env.BULK_MATCHING).toLocaleString() });
  check(await confirmBtn.isDisabled(), 'above 1,000 jobs the confirmation needs the queue name typed');
  await a.page.locator('.confirm input').fill('bulkq');
  await confirmBtn.click();
  await a.page.locator('.progress progress').waitFor();
  check(true, 'the bulk retry shows a progress bar');
  await a.page.locator('#toasts .toast', { hasText: 'retried in 2 batches' }).waitFor({ timeout: 20000 });
  const said = await a.page.locator('.progress-text').textContent();
  check(said === Number(process.env.BULK_MATCHING).toLocaleString() + ' retried in 2 batches', 'the bulk retry says what it did', said);

  // select the visible jobs -> cancel them (one request by ids)
  await a.page.goto(base + 'jobs?queue=bulkq&state=dead');
  await a.page.waitForSelector('table.jobs');
  await a.page.locator('input.pick-all').check();
  await a.page.locator('.bulk .sel', { hasText: '50 selected' }).waitFor();
  await a.page.locator('.bulk').getByRole('button', { name: 'Cancel' }).click();
  await a.page.locator('.confirm').getByRole('button', { name: 'Cancel 50' }).click();
  await a.page.locator('#toasts .toast', { hasText: '50 cancelled' }).waitFor();
  check(true, 'select the visible jobs, Cancel: 50 cancelled');
  await a.page.screenshot({ path: shots + '/bulk.png', fullPage: true });

  // groups (where the server has them): the blocked tab, Skip head
  if (process.env.GROUPS === '1') {
    // the queue page counts the blocked group, and links to the blocked tab
    await a.page.goto(base + 'queues/fifob');
    const blockedCount = a.page.locator('.strip .count.warn', { hasText: 'groups blocked' });
    await blockedCount.waitFor();
    check((await blockedCount.locator('.n').textContent()) === '1', 'the queue page: 1 group blocked');
    await blockedCount.getByRole('link', { name: 'groups blocked' }).click();
    await a.page.waitForURL(/groups\?queue=fifob&blocked=1/);
    await a.page.goto(base + 'groups?queue=fifob&blocked=1');
    await a.page.locator('table.groups tr', { hasText: 'acct-9' }).getByRole('button', { name: 'Skip head' }).click();
    await a.page.locator('.confirm').getByRole('button', { name: 'Skip head of acct-9' }).click();
    await a.page.locator('#toasts .toast', { hasText: 'cancelled: group acct-9 goes on' }).waitFor();
    await a.page.locator('main p.muted', { hasText: 'No group is blocked.' }).waitFor();
    check(true, 'a blocked group on the groups page: Skip head, and nothing is blocked');
  }

  // a flow (where the server has flows): its graph, its jobs, Cancel flow
  if (process.env.FLOW_ID) {
    await a.page.goto(base + 'flows/' + process.env.FLOW_ID);
    await a.page.waitForSelector('svg.flow');
    const nodes = await a.page.locator('svg.flow g.node').count();
    const edges = await a.page.locator('svg.flow line').count();
    await a.page.getByRole('button', { name: 'Cancel flow' }).click();
    await a.page.locator('.confirm').getByRole('button', { name: 'Cancel flow ' + process.env.FLOW_ID }).click();
    await a.page.locator('#toasts .toast', { hasText: 'flow ' + process.env.FLOW_ID + ': 3 jobs cancelled' }).waitFor();
    check(nodes === 3 && edges === 3, 'a flow page draws its 3 jobs and 3 dependencies, and Cancel flow cancels them', nodes + ' ' + edges);
  }

  // the audit trail names the dashboard user
  await a.page.goto(base + 'audit');
  await a.page.waitForSelector('table.audit');
  const trail = await a.page.locator('table.audit tbody').innerText();
  check(/admin\s+jobq_admin\s+cancel_many\s+bulkq\s+50/.test(trail) && /admin\s+jobq_admin\s+retry_where\s+bulkq/.test(trail),
    'the audit page shows the actions with the dashboard user', trail.slice(0, 400));
  check(a.problems.length === 0, 'admin pages: no foreign request, CSP violation, console error or dialog',
    a.problems.join('; '));
  await a.ctx.close();

  // --- the viewer (jobq_monitor): no action anywhere
  const v = await open('viewer', 'look');
  await v.page.goto(base);
  await v.page.waitForSelector('table.queues');
  check(await v.page.locator('main button').count() === 0, 'the viewer sees no action on the overview');
  await v.page.goto(base + 'jobs?queue=mails&state=cancelled');
  await v.page.waitForSelector('table.jobs, main p.muted');
  check(await v.page.locator('table.jobs button, table.jobs input.pick, .bulk button').count() === 0, 'the viewer sees no action or selection on the jobs');
  for (const path of ['workers', 'schedules']) {
    await v.page.goto(base + path);
    await v.page.waitForSelector('main table');
    check(await v.page.locator('main button').count() === 0, 'the viewer sees no action on /' + path);
  }
  check(await v.page.locator('#nav-audit').isHidden(), 'the viewer has no audit page in the bar');
  await v.page.goto(base + 'jobs/' + process.env.XSS_ID);
  await v.page.waitForSelector('pre.json');
  const text = await v.page.locator('main').innerText();
  check(!text.includes('[object') && !/(^|\n)(null|undefined)(\n|$)/.test(text) &&
    await v.page.getByRole('button', { name: /Retry|Cancel/ }).count() === 0,
    'the viewer\'s job page: no action, no stray text', text);
  check(v.problems.length === 0, 'viewer pages: no foreign request, CSP violation, console error or dialog',
    v.problems.join('; '));
  await v.ctx.close();

  // --- a phone's width: no horizontal scrolling
  const p = await open('admin', 's3cret', { width: 390, height: 844 });
  for (const path of ['', 'jobs?queue=mails', 'jobs/' + process.env.XSS_ID, 'queues/mails', 'audit']) {
    await p.page.goto(base + path);
    await p.page.waitForLoadState('networkidle');
    const r = await noHorizontalScroll(p.page);
    check(r === true, 'phone width, /' + path + ': no horizontal scroll', r);
  }
  await p.page.goto(base);
  await p.page.waitForSelector('table.queues');
  await p.page.screenshot({ path: shots + '/phone.png', fullPage: true });
  check(p.problems.length === 0, 'phone pages: no problems', p.problems.join('; '));
} catch (e) {
  check(false, 'the browser session ran to the end', e.stack);
} finally {
  await browser.close();
}
