// The mint benchmark's load generator against a real loopback server: counts, statuses, split responses.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedLoop, httpRequest, openLoop, summarize } from '../../bench/lib/mint-load.js';

let server: Server;
let port: number;
let served = 0;

before(async () => {
  server = createServer((req, res) => {
    served++;
    req.resume();
    req.on('end', () => {
      if (req.url === '/split') {
        // headers and body in separate writes, so responses arrive in pieces
        res.writeHead(201, { 'Content-Length': '10' });
        res.write('01234');
        setTimeout(() => res.end('56789'), 2);
      } else if (req.url === '/missing') {
        res.writeHead(404, { 'Content-Length': '2' }).end('no');
      } else {
        res.writeHead(201, { 'Content-Length': '2' }).end('ok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('closed loop: every answer is counted once, also when it arrives in pieces', async () => {
  served = 0;
  const r = await closedLoop({ host: '127.0.0.1', port, requests: [httpRequest('POST', '/split', {}, '{}')], expectStatus: 201 }, 4, 0.3);
  assert.equal(r.requests, served);
  assert.ok(r.requests > 4);
  assert.deepEqual(r.statuses, { 201: r.requests });
  assert.equal(r.errors, 0);
  assert.ok(r.latency.p50 >= 2, 'a response counts only once its body is complete');
});

test('closed loop: answers with another status than expected are errors', async () => {
  const r = await closedLoop({ host: '127.0.0.1', port, requests: [httpRequest('GET', '/', {}), httpRequest('GET', '/missing', {})], expectStatus: 201 }, 1, 0.2);
  assert.ok((r.statuses['404'] ?? 0) > 0);
  assert.equal(r.errors, r.statuses['404']);
  assert.equal((r.statuses['201'] ?? 0) + (r.statuses['404'] ?? 0), r.requests);
});

test('open loop: sends exactly rate × seconds requests and measures from when each was due', async () => {
  served = 0;
  const r = await openLoop({ host: '127.0.0.1', port, requests: [httpRequest('GET', '/', {})], expectStatus: 201 }, 2, 200, 0.5);
  assert.equal(r.requests, 100);
  assert.equal(served, 100);
  assert.equal(r.errors, 0);
  assert.equal(r.targetRate, 200);
  assert.ok((r.serviceLatency?.p50 ?? Infinity) <= r.latency.p50 + 1e-9);
});

test('percentiles are taken from the sorted samples', () => {
  const samples = Array.from({ length: 1000 }, (_, i) => 1000 - i);
  const s = summarize(samples);
  assert.equal(s.p50, 500);
  assert.equal(s.p99, 990);
  assert.equal(s.p999, 999);
  assert.equal(s.max, 1000);
  assert.equal(s.mean, 500.5);
});
