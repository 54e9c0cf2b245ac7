// client/web/test/screenshots.mjs: the README's pictures of jobq-web, taken
// in Debian's chromium (playwright-core) from a running dashboard:
//
//   WEB_URL=http://127.0.0.1:8411/ OUT=doc/img node client/web/test/screenshots.mjs
//
// writes OUT/jobq-web-overview.png and OUT/jobq-web-queue.png (the queue
// named by QUEUE, default "demo") at 1100 x 760, the first screen only.
// doc/jobq-web.md says how they were made (the demo, kept up).

import { chromium } from 'playwright-core';

const base = process.env.WEB_URL;
const out = process.env.OUT;
const queue = process.env.QUEUE || 'demo';
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  await page.goto(base);
  await page.waitForSelector('table.queues svg.spark');
  await page.screenshot({ path: out + '/jobq-web-overview.png' });
  await page.goto(base + 'queues/' + encodeURIComponent(queue) + '?range=1h');
  await page.waitForSelector('svg.chart');
  await page.screenshot({ path: out + '/jobq-web-queue.png' });
} finally {
  await browser.close();
}
