const WebSocket = require('ws');
const { execFileSync } = require('child_process');
const K = 'testadminkey0123456789', base = 'http://127.0.0.1:18099';
const cli = (p, ...a) => execFileSync('redis-cli', ['-p', String(p), ...a]).toString().trim();
async function write(member, delta, req) {
  for (let i = 0; i < 200; i++) {
    const r = await fetch(base + '/api/v1/boards/demo/scores', {method: 'POST', headers: {Authorization: 'Bearer ' + K}, body: JSON.stringify({member, op: 'incr', delta, req})});
    const j = await r.json();
    if (j.op === 'ack') return {j, tries: i + 1};
    if (j.code !== 'unavailable') throw new Error(JSON.stringify(j));
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('never acked');
}
(async () => {
  const ws = new WebSocket('ws://127.0.0.1:18099/ws');
  let rows = null, snaps = 0, deltas = 0;
  ws.on('message', (m) => { const j = JSON.parse(m); if (j.op === 'snapshot') { snaps++; rows = new Map(j.rows.map((r) => [r.member, r.score])); } else if (j.op === 'delta') { deltas++; for (const r of j.rows) rows.set(r.member, r.score); for (const x of j.removed || []) rows.delete(x); } });
  await new Promise((r) => ws.on('open', r));
  ws.send(JSON.stringify({op: 'subscribe', id: 'a', board: 'demo', view: {top: 50}}));
  const before = Number(cli(7101, '-c', 'zscore', 'rc:{demo|}:z', 'fo') || 0);
  let sum = 0, retried = 0, t0 = Date.now();
  const run = Date.now() + '';
  for (let i = 0; i < 300; i++) {
    if (i === 100) { setTimeout(() => console.log('failover', execFileSync('redis-cli', ['-p', process.argv[2], 'cluster', 'failover']).toString().trim(), Date.now() - t0), 0); }
    const {tries} = await write('fo', 1, run + '-' + i);
    if (tries > 1) retried++;
    sum += 1;
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 1500));
  const after = Number(cli(7101, '-c', 'zscore', 'rc:{demo|}:z', 'fo'));
  console.log({before, after, sum, retried, snaps, deltas, viewer: rows.get('fo'), ms: Date.now() - t0});
  process.exit(0);
})();
