// Transactions through node-redis (npm redis 4.7.1) against probly serve.
//
// Usage: node node_redis_tx.js HOST PORT, with NODE_PATH pointing at the
// node_modules folder that .ci/run installs redis into. Prints "ok" and
// exits 0 when every check passes; otherwise prints what failed and exits
// 1. Run by internal/app/txclients_test.go (issue 15.1).
const { createClient } = require('redis');

function check(cond, what) {
  if (!cond) {
    console.log('FAIL: ' + what);
    process.exit(1);
  }
}

async function main() {
  const url = `redis://${process.argv[2]}:${process.argv[3]}`;
  const c = createClient({ url });
  c.on('error', (e) => { console.log('FAIL: client error ' + e); process.exit(1); });
  await c.connect();
  await c.flushAll();

  const res = await c.multi()
    .set('node:a', '1')
    .addCommand(['BF.ADD', 'node:f', 'x'])
    .pfAdd('node:h', ['a', 'b'])
    .get('node:a')
    .exec();
  check(JSON.stringify(res) === JSON.stringify(['OK', 1, true, '1']), 'multi().exec() replies ' + JSON.stringify(res));
  check((await c.sendCommand(['BF.EXISTS', 'node:f', 'x'])) === 1, 'BF.ADD of the transaction applied');

  // A command refused while queuing: EXECABORT, nothing applied.
  let failed = false;
  try {
    await c.multi().set('node:q', '1').addCommand(['BF.ADD', 'node:qf']).exec();
  } catch (e) {
    failed = true;
  }
  check(failed, 'a transaction with a queued error succeeded');
  check((await c.exists(['node:q', 'node:qf'])) === 0, 'a transaction with a queued error applied something');

  // WATCH: a conflicting write from another connection makes EXEC fail.
  const iso = c.duplicate();
  await iso.connect();
  await iso.watch('node:w');
  await c.set('node:w', 'changed');
  let watchFailed = false;
  try {
    await iso.multi().set('node:w', 'mine').exec();
  } catch (e) {
    watchFailed = e.constructor.name === 'WatchError' || /watch/i.test(String(e));
  }
  check(watchFailed, 'EXEC succeeded although a watched key changed');
  check((await c.get('node:w')) === 'changed', 'the failed transaction changed the key');

  await iso.quit();
  await c.quit();
  console.log('ok');
}

main().catch((e) => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
