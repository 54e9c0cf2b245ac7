// examples/node/producer.js: enqueue N jobs, each {"n": i}, with node-postgres.
//
//   node producer.js QUEUE N        (the connection from PGHOST, PGPORT, PGUSER, ...)
//
// The payload goes as JSON.stringify(...) text.  node-postgres would turn a
// JS array into a PostgreSQL array literal ('{1,2}'), which is not JSON
// (22P02); stringify every payload, objects included, and it always works.
'use strict';
const { Client } = require('pg');

async function main() {
  const [queue, nText] = process.argv.slice(2);
  const n = Number(nText);
  const client = new Client();
  await client.connect();
  try {
    for (let i = 1; i <= n; i++) {
      await client.query('SELECT jobq_enqueue($1, $2)', [queue, JSON.stringify({ n: i })]);
    }
  } finally {
    await client.end();
  }
  console.log(`enqueued ${n}`);
}

main().catch((err) => {
  console.error(`producer: ${err.message} (SQLSTATE ${err.code})`);
  process.exit(1);
});
