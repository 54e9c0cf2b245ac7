// examples/node/consumer.js: claim jobs in batches of 10 and complete them
// with node-postgres, until a claim finds nothing.
//
//   node consumer.js QUEUE          (the connection from PGHOST, PGPORT, PGUSER, ...)
//
// node-postgres runs each query in autocommit mode, so a claim commits at
// once.  The queues go as a JS array cast with $1::text[]: an untyped
// parameter would pick jobq_claim(text) and ask for a queue named
// '{"ex-node"}' (22023).  Ids are bigint and come back as strings; pass them, and the
// token, back as they came.
'use strict';
const { Client } = require('pg');

async function main() {
  const [queue] = process.argv.slice(2);
  const client = new Client();
  await client.connect();
  let completed = 0;
  try {
    for (;;) {
      const { rows } = await client.query(
        'SELECT id, token, payload FROM jobq_claim($1::text[], worker => $2, max_jobs => 10)',
        [[queue], 'node-consumer']);
      if (rows.length === 0) break;
      for (const job of rows) {
        // job.payload is already an object (jsonb is parsed); the work goes here
        const res = await client.query('SELECT jobq_complete($1, $2) AS ok', [job.id, job.token]);
        if (res.rows[0].ok) completed++;
        // false: the token is stale (the lease ran out); nothing changed
      }
    }
  } finally {
    await client.end();
  }
  console.log(`completed ${completed}`);
}

main().catch((err) => {
  console.error(`consumer: ${err.message} (SQLSTATE ${err.code})`);
  process.exit(1);
});
