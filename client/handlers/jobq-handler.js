'use strict';
// jobq-handler: run a JavaScript function as a persistent jobq-worker handler.
//
//   // handler.js
//   const { run, Retry, Permanent, RateLimited } = require('./jobq-handler');
//   run(async (job) => {          // job: { id, queue, attempt, max_attempts, payload,
//                                 //        checkpoint (an earlier attempt's, if any) }
//     await deliver(job.payload);
//     return { sent: true };      // completed, with this result
//   }, { jobs: 16 });             // at most 16 jobs at a time in this process
//
//   $ jobq-worker -q mails -c 16 --persistent=1 -- node handler.js
//
// The (awaited) return value is the job's result. Throw new Retry('why', 30)
// to try again after 30 s (or the queue's backoff without a delay), new
// Permanent('why') to fail for good (the job goes to dead), new
// RateLimited('429', 30) when the upstream asks to slow down (back after 30 s,
// the attempt not counted); any other error
// fails the attempt (retried while attempts are left) with its stack as the
// error. No dependencies. The line protocol: doc/jobq-worker.md, "Persistent
// handlers".
class Retry extends Error {
  constructor(message, delay) {
    super(message || 'retry');
    this.delay = delay;
  }
}

class Permanent extends Error {}

// The upstream said "too many requests": the job comes back after retryAfter
// seconds (or 60) without counting the attempt, and the queue's (or the
// group's) rate is held that long.
class RateLimited extends Error {
  constructor(message, retryAfter) {
    super(message || 'rate limited');
    this.retryAfter = retryAfter;
  }
}

// Answers wait in `out` until the current turn of the event loop is over,
// then go out in one write: the answers of every job that finished in the
// same turn (all the no-op jobs of one chunk of stdin) cost one system call,
// and a lone answer still goes out at once.
let out = [];
let flushing = false;

function flush() {
  flushing = false;
  const data = out.join('');
  out = [];
  process.stdout.write(data);
}

function write(obj) {
  let line;
  try {
    line = JSON.stringify(obj);
  } catch (e) {
    line = JSON.stringify({ id: obj.id, status: 'failed', error: `result is not JSON: ${e.message}` });
  }
  out.push(line + '\n');
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

async function answer(fn, job) {
  try {
    const result = await fn(job);
    return { id: job.id, status: 'completed', result: result === undefined ? null : result };
  } catch (e) {
    if (e instanceof Retry) {
      const a = { id: job.id, status: 'retry', error: e.message };
      if (e.delay !== undefined && e.delay !== null) a.delay = e.delay;
      return a;
    }
    if (e instanceof Permanent) return { id: job.id, status: 'failed', error: e.message || 'failed' };
    if (e instanceof RateLimited) {
      const a = { id: job.id, status: 'rate_limited', error: e.message };
      if (e.retryAfter !== undefined && e.retryAfter !== null) a.retry_after = e.retryAfter;
      return a;
    }
    return { id: job.id, status: 'retry', error: (e && e.stack) || String(e) };
  }
}

// Serve jobs from jobq-worker on stdin; the returned promise resolves when
// the worker closes stdin and every job has been answered.
function run(fn, { jobs = 1 } = {}) {
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 1000) {
    throw new RangeError('jobs must be an integer from 1 to 1000');
  }
  write({ ready: true, jobs });
  const pending = new Set();
  const start = (line) => {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line === '') return;
    const job = JSON.parse(line);
    const p = answer(fn, job).then(write);
    pending.add(p);
    p.finally(() => pending.delete(p));
  };
  // the lines of a chunk of stdin, split by hand (readline costs more per line)
  let rest = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) start(line);
  });
  return new Promise((resolve) => {
    process.stdin.on('end', () => {
      if (rest !== '') start(rest);
      Promise.all([...pending]).then(() => {
        if (out.length > 0) flush();
        resolve();
      });
    });
  });
}

// Store how far job got (any JSON, at most 256 kB): its next attempt, after a
// crash or a retry, finds it in job.checkpoint and resumes there
// (doc/flows.md, "Checkpoints"). Checkpoint per step, not per item.
function checkpoint(job, state) {
  write({ id: job.id, checkpoint: state === undefined ? null : state });
}

module.exports = { run, Retry, Permanent, RateLimited, checkpoint };
