// Gate as a reverse proxy: routing by host and path in order, the default target, hop-by-hop headers,
// X-Forwarded-* and Via, streamed bodies, 502/504, WebSocket upgrades, /health and /metrics.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { startEchoUpstream, startTestGate, type EchoUpstream } from '../support/gate.js';

let a: EchoUpstream;
let b: EchoUpstream;
let gate: Awaited<ReturnType<typeof startTestGate>>;

before(async () => {
  a = await startEchoUpstream();
  b = await startEchoUpstream();
  gate = await startTestGate({
    gate: {
      port: 0,
      host: '127.0.0.1',
      upstream_timeout: '300ms',
      default: { target: a.base },
      urls: [
        { pattern: 'api.test/v2/*', target: b.base },
        { pattern: '*/b/*', target: b.base },
        { pattern: '*/dead/*', target: 'http://127.0.0.1:1' },
      ],
    },
  });
});
after(async () => {
  await gate.close();
  await a.close();
  await b.close();
});

interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gate.base}${path}`, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

test('patterns route by host and path in order; anything else goes to the default target', async () => {
  const before = { a: a.seen.length, b: b.seen.length };
  assert.equal((await send('/b/x?q=1')).status, 200);
  assert.equal((await send('/v2/y', { headers: { host: 'api.test' } })).status, 200);
  assert.equal((await send('/v2/y', { headers: { host: 'other.test' } })).status, 200);
  assert.equal((await send('/')).status, 200);
  assert.deepEqual(b.seen.slice(before.b).map((s) => s.url), ['/b/x?q=1', '/v2/y']);
  assert.deepEqual(a.seen.slice(before.a).map((s) => s.url), ['/v2/y', '/']);
});

test('hop-by-hop headers are stripped both ways; X-Forwarded-* and Via are set; the body streams through whole', async () => {
  const body = Buffer.alloc(300_000, 7);
  const res = await send('/b/post', { method: 'POST', body, headers: { connection: 'keep-alive, x-secret-hop', 'x-secret-hop': '1', 'keep-alive': 'timeout=5', te: 'trailers', 'x-forwarded-for': '10.0.0.1', 'x-kept': 'yes' } });
  assert.equal(res.status, 200);
  const echoed = JSON.parse(res.body.toString('utf8'));
  assert.equal(echoed.body_length, body.length);
  assert.equal(echoed.headers['x-secret-hop'], undefined);
  assert.equal(echoed.headers['keep-alive'], undefined);
  assert.equal(echoed.headers['te'], undefined);
  assert.equal(echoed.headers['x-kept'], 'yes');
  assert.equal(echoed.headers['x-forwarded-for'], '10.0.0.1, 127.0.0.1');
  assert.equal(echoed.headers['x-forwarded-proto'], 'http');
  assert.equal(echoed.headers['x-forwarded-host'], `127.0.0.1:${gate.port}`);
  assert.equal(echoed.headers['via'], '1.1 gate');
  assert.equal(res.headers['via'], '1.1 gate');
  assert.equal(res.headers['x-upstream'], 'echo');

  const big = await send('/bytes?n=1000000');
  assert.equal(big.body.length, 1_000_000);
  assert.equal(big.headers['keep-alive'], undefined, 'the upstream\'s hop-by-hop header does not reach the client');
});

test('an unreachable upstream is a 502, a slow one a 504', async () => {
  assert.equal((await send('/dead/x')).status, 502);
  const slow = await send('/slow?ms=5000');
  assert.equal(slow.status, 504);
  assert.match(slow.body.toString('utf8'), /did not answer in time/);
});

test('WebSocket upgrades are forwarded and frames flow both ways', async () => {
  const ws = new WebSocket(`${gate.base.replace('http', 'ws')}/b/ws`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const echoed = new Promise<string>((resolve) => ws.once('message', (d) => resolve(d.toString())));
  ws.send('hello through gate');
  assert.equal(await echoed, 'hello through gate');
  ws.close();
  const upgrade = b.seen.findLast((s) => s.url === '/b/ws');
  assert.equal(upgrade?.headers['upgrade'], 'websocket');
  assert.equal(upgrade?.headers['via'], '1.1 gate');
});

test('/health and /metrics are Gate\'s own', async () => {
  const health = await send('/health');
  assert.equal(health.status, 200);
  assert.equal(JSON.parse(health.body.toString('utf8')).status, 'ok');
  const metrics = (await send('/metrics')).body.toString('utf8');
  assert.match(metrics, /gate_requests_total\{status="200"\} \d+/);
  assert.match(metrics, /gate_requests_total\{status="502"\} 1/);
  assert.match(metrics, /gate_requests_total\{status="504"\} 1/);
});
