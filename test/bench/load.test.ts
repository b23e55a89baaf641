// The load generator against real loopback servers: what it counts, how it frames, when its open loop sends.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeRequest } from '../../bench/lib/connection.js';
import { runLoad } from '../../bench/lib/load.js';

let server: Server;
let url: string;
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
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

const get = (path: string) => encodeRequest('127.0.0.1', { method: 'GET', path });

test('given a closed loop, then every answer is counted once, also when it arrives in pieces, and only after it is whole', async () => {
  served = 0;
  const split = encodeRequest('127.0.0.1', { method: 'POST', path: '/split', body: '{}' });
  const r = await runLoad({ url, request: () => split, connections: 4, durationMs: 300 });
  assert.equal(r.mode, 'closed');
  assert.equal(r.requests, served);
  assert.ok(r.requests > 4);
  assert.deepEqual(r.statuses, { 201: r.requests });
  assert.equal(r.errors, 0);
  assert.equal(r.latency.count, r.requests);
  assert.ok(r.latency.p50_us >= 2000, `p50 ${r.latency.p50_us} µs: a response counts only once its body is complete`);
});

test('given a warm-up, then only requests sent after it count', async () => {
  served = 0;
  const r = await runLoad({ url, request: () => get('/split'), connections: 1, durationMs: 300, warmupMs: 100 });
  assert.ok(r.requests > 0);
  // The first request leaves at the start, inside the warm-up, so at least that one is served and not counted.
  assert.ok(served > r.requests, `${served} served, ${r.requests} counted`);
});

test('given answers with a status the run does not accept, then they are errors and have no latency', async () => {
  const r = await runLoad({ url, request: (i) => get(i % 2 ? '/missing' : '/'), connections: 1, durationMs: 200, ok: (s) => s === 201 });
  assert.ok((r.statuses['404'] ?? 0) > 0);
  assert.equal(r.errors, r.statuses['404']);
  assert.equal((r.statuses['201'] ?? 0) + (r.statuses['404'] ?? 0), r.requests);
  assert.equal(r.latency.count, r.statuses['201']);
});

test('given an open loop, then it sends exactly rate × duration requests and measures each from when it was due', async () => {
  served = 0;
  const r = await runLoad({ url, request: () => get('/'), connections: 2, durationMs: 500, rate: 200 });
  assert.equal(r.mode, 'open');
  assert.equal(r.requests, 100);
  assert.equal(served, 100);
  assert.equal(r.errors, 0);
  assert.equal(r.rate, 200);
  assert.ok((r.serviceLatency?.p50_us ?? Infinity) <= r.latency.p50_us);
  assert.equal(r.sendLag?.count, 100);
  // Linux has /proc/stat, so the machine's steal time over the window is known, as a share.
  assert.ok(r.stealPercent !== undefined && r.stealPercent >= 0 && r.stealPercent <= 100, `steal ${r.stealPercent}`);
});

test('given an open loop with a warm-up, then requests due in the warm-up are sent but not counted', async () => {
  served = 0;
  const r = await runLoad({ url, request: () => get('/'), connections: 2, durationMs: 250, warmupMs: 250, rate: 200 });
  assert.equal(r.requests, 50);
  assert.equal(served, 100);
});

test('given an open loop faster than one connection can serve, then the wait for a connection counts in the latency', async () => {
  // One connection, each answer takes ≥ 2 ms, 1000 requests/s due: the backlog grows and so does latency.
  const r = await runLoad({ url, request: () => get('/split'), connections: 1, durationMs: 200, rate: 1000 });
  assert.equal(r.requests, 200);
  assert.ok((r.maxBacklog ?? 0) > 10, `backlog ${r.maxBacklog}`);
  assert.ok(r.latency.p99_us > 5 * (r.serviceLatency?.p99_us ?? Infinity), `latency p99 ${r.latency.p99_us} µs, service p99 ${r.serviceLatency?.p99_us} µs`);
});

test('given a server that refuses connections, then the run fails instead of reporting nothing', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  await assert.rejects(runLoad({ url: `http://127.0.0.1:${port}`, request: () => get('/'), connections: 2, durationMs: 100 }), /ECONNREFUSED/);
});

test('given a server that closes every connection after one answer, then the run fails instead of reporting a few', async () => {
  const rude = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { Connection: 'close', 'Content-Length': '2' }).end('ok'));
  });
  await new Promise<void>((resolve) => rude.listen(0, '127.0.0.1', resolve));
  try {
    const target = `http://127.0.0.1:${(rude.address() as AddressInfo).port}`;
    // The window is long so that it outlasts a slow first answer on a busy machine: the run ends at the failure.
    await assert.rejects(runLoad({ url: target, request: () => get('/'), connections: 2, durationMs: 5_000 }), /all 2 connections failed/);
    await assert.rejects(runLoad({ url: target, request: () => get('/'), connections: 2, durationMs: 5_000, rate: 100 }), /all 2 connections failed/);
  } finally {
    rude.closeAllConnections();
    await new Promise<void>((resolve) => rude.close(() => resolve()));
  }
});
