// Slow consumers on WS /events: a live subscriber that stops reading is cut off with close code 4008 and the
// offset to resume from, while a fast one on the same organization keeps up; a replaying one is paused, not cut.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';
import { Subscriber, range } from '../support/ws.js';

const MAX_BUFFER = 64 * 1024;
let server: TestServer;
const open: Subscriber[] = [];

async function subscribe(query: Record<string, string> = {}): Promise<Subscriber> {
  const sub = await Subscriber.open(server.base, { query });
  open.push(sub);
  return sub;
}

const rawSocket = (sub: Subscriber) => (sub.socket as unknown as { _socket: Socket })._socket;

/** Appends `n` test events of a large message (about 1 KB each as JSON); resolves to the last offset. */
async function burst(n: number): Promise<number> {
  const items = Array.from({ length: Math.ceil(n / 100) }, () => ({ event_name: 'GateRequestHandled_v1', count: 100 }));
  const res = await server.client.post('/test-events', items);
  assert.equal(res.status, 201, res.text);
  return res.body.result.at(-1).offset as number;
}

before(async () => {
  server = await startTestServer({ SERVICE_WS_MAX_BUFFER: String(MAX_BUFFER) });
});
after(async () => {
  await Promise.all(open.map((s) => s.close()));
  await server.stop();
});

test('a live subscriber that stops reading is closed with 4008 and the offset to resume from; a fast one keeps up', async () => {
  const stream = server.service.events.stream;
  const fast = await subscribe();
  const slow = await subscribe();
  rawSocket(slow).pause();
  assert.equal(stream.count(), 2);

  // The kernel's socket buffers absorb megabytes before the server's own buffer grows: write until it gives up.
  let last = 0;
  for (let i = 0; i < 40 && stream.count() === 2; i++) last = await burst(2000);
  assert.equal(stream.count(), 1, 'the paused subscriber was not cut off');
  rawSocket(slow).resume();

  await slow.waitUntil(() => slow.socket.readyState === slow.socket.CLOSED, 30_000, 'the close frame');
  const closed = await slow.closed;
  assert.equal(closed.code, 4008);
  const resumeFrom = Number(/^slow consumer; resume with from=(\d+)$/.exec(closed.reason)?.[1]);
  // Everything queued before the close frame arrives first, in order; the reason names the next offset.
  assert.deepEqual(slow.offsets(), range(1, resumeFrom - 1));
  assert.ok(resumeFrom > 1 && resumeFrom <= last, `resume offset ${resumeFrom} within 1..${last}`);

  await fast.waitUntil(() => fast.frames.at(-1)?.offset === last, 30_000, `offset ${last} on the fast subscriber`);
  assert.deepEqual(fast.offsets(), range(1, last));

  // Resuming where the close said loses nothing and repeats nothing.
  const resumed = await subscribe({ from: String(resumeFrom) });
  await resumed.waitUntil(() => resumed.frames.at(-1)?.offset === last, 30_000, `offset ${last} on the resumed subscriber`);
  assert.deepEqual([...slow.offsets(), ...resumed.offsets()], range(1, last));
  assert.match((await server.client.get('/metrics')).text, /^events_ws_slow_consumers_total 1$/m);
});

test('a replaying subscriber that stops reading is paused, not cut off, and gets everything once it reads again', async () => {
  const stream = server.service.events.stream;
  const before = stream.count();
  const last = await burst(1000);
  const replay = await subscribe({ from: '1' });
  rawSocket(replay).pause();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(stream.count(), before + 1, 'the replaying subscriber is still there');
  rawSocket(replay).resume();
  await replay.waitUntil(() => replay.frames.at(-1)?.offset === last, 30_000, `offset ${last}`);
  assert.deepEqual(replay.offsets(), range(1, last));
});
