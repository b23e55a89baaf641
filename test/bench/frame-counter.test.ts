// The events bench's raw WebSocket client against a real ws server: every frame counted whole, whatever its size
// and however TCP splits it; gaps in offsets seen; pings answered; the sampled frames decoded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { openCounter } from '../../bench/lib/frame-counter.js';

let server: WebSocketServer;
let port: number;
const connected: Array<{ socket: WebSocket; headers: Record<string, string | string[] | undefined>; pongs: number }> = [];

before(async () => {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  server.on('connection', (socket, req) => {
    const peer = { socket, headers: req.headers, pongs: 0 };
    socket.on('pong', () => peer.pongs++);
    connected.push(peer);
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const frame = (offset: number, pad: number) => `{"offset":${offset},"event":{"event_metadata":{"timestamp":"2026-01-01T00:00:00.000Z"},"pad":"${'x'.repeat(pad)}"}}`;

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

test('given frames of every length encoding, split by TCP, when counted, then each is counted once, in order, and one in N is sampled', async () => {
  const sampled: string[] = [];
  const counter = await openCounter({ host: '127.0.0.1', port, path: '/events?types=PersonCreated_v1', headers: { 'Service-OrgID': 'o' }, sample: (t) => sampled.push(t), every: 50, phase: 3 });
  const peer = connected.at(-1)!;
  assert.equal(peer.headers['service-orgid'], 'o');
  // 7-bit, 16-bit and 64-bit payload lengths; the 70 KB ones arrive over several reads
  const pads = [10, 300, 70_000];
  for (let offset = 1; offset <= 200; offset++) peer.socket.send(frame(offset, pads[offset % 3] as number));
  peer.socket.ping();
  await until(() => counter.received() === 200 && peer.pongs === 1);
  assert.equal(counter.received(), 200);
  assert.equal(counter.gaps(), 0);
  assert.equal(counter.error(), undefined);
  assert.equal(peer.pongs, 1);
  assert.deepEqual(sampled.map((t) => JSON.parse(t).offset), [4, 54, 104, 154]);
  await counter.close();
});

test('given a skipped offset or a frame that is not a JSON object, then the gap is counted and the bad frame is an error', async () => {
  const counter = await openCounter({ host: '127.0.0.1', port, path: '/events', headers: {}, sample: () => {}, every: 1, phase: 0 });
  const peer = connected.at(-1)!;
  for (const offset of [1, 2, 4, 5]) peer.socket.send(frame(offset, 5));
  await until(() => counter.received() === 4);
  assert.equal(counter.gaps(), 1);
  peer.socket.send('not json');
  await until(() => counter.error() !== undefined);
  assert.match(counter.error() ?? '', /not a whole JSON object/);
  assert.equal(counter.received(), 4);
});

test('given the server closes first, then the close code is reported; given the client closes, then it is not', async () => {
  const cut = await openCounter({ host: '127.0.0.1', port, path: '/events', headers: {}, sample: () => {}, every: 1, phase: 0 });
  connected.at(-1)!.socket.close(4008, 'slow consumer; resume with from=7');
  await until(() => cut.error() !== undefined);
  assert.equal(cut.error(), 'closed by the service: 4008 slow consumer; resume with from=7');
  await cut.close();

  const done = await openCounter({ host: '127.0.0.1', port, path: '/events', headers: {}, sample: () => {}, every: 1, phase: 0 });
  await done.close();
  assert.equal(done.error(), undefined);
});
