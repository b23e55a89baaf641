// Slow consumers on WS /events: a live subscriber that stops reading is cut off with close code 4008 and the
// offset to resume from, while a fast one on the same organization keeps up; a replaying one is paused, not cut.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';
import { Subscriber, range, type JsonFrame } from '../support/ws.js';

// The stream's bound on a live subscriber's queue. Each burst below stays under it, so a subscriber that has read
// everything before a burst can never be cut off by it, however slowly the machine runs.
const MAX_BUFFER = 512 * 1024;
const BURST_EVENTS = 200;
let server: TestServer;
const open: Subscriber[] = [];

async function subscribe(query: Record<string, string> = {}): Promise<Subscriber> {
  const sub = await Subscriber.open(server.base, { query });
  open.push(sub);
  return sub;
}

/**
 * The most bytes the kernel can hold for a TCP connection that is never read: the sender's and the receiver's
 * buffers at their largest (tcp_wmem and tcp_rmem maxima). Past that, the server's own queue must grow.
 */
function kernelBufferCeiling(): number {
  const max = (file: string) => {
    try {
      return Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]) || 0;
    } catch {
      return 0;
    }
  };
  const sum = max('/proc/sys/net/ipv4/tcp_rmem') + max('/proc/sys/net/ipv4/tcp_wmem');
  return sum > 0 ? sum : 64 * 1024 * 1024;
}

const frameBytes = (frames: readonly JsonFrame[]) => frames.reduce((n, f) => n + Buffer.byteLength(JSON.stringify(f)), 0);

/** Appends `n` test events of a large message (about 1 KB each as JSON); resolves to the last offset. */
async function burst(n: number): Promise<number> {
  const items = Array.from({ length: Math.ceil(n / 100) }, (_, i) => ({ event_name: 'GateRequestHandled_v1', count: Math.min(100, n - i * 100) }));
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
  // ws's own pause: pausing the raw socket is undone by ws whenever its parser drains, and the subscriber reads again.
  slow.socket.pause();
  assert.equal(stream.count(), 2);

  // The paused subscriber's backlog grows by each burst; the fast one reads each burst whole before the next, so its
  // queue on the server is empty when a burst starts and the burst is under the bound. The loop ends at the cut-off,
  // which must come before the kernel's buffers and the bound are all full.
  const ceiling = kernelBufferCeiling() + MAX_BUFFER;
  let last = 0;
  let sent = 0;
  while (stream.count() === 2 && sent <= ceiling) {
    const before = fast.frames.length;
    last = await burst(BURST_EVENTS);
    await fast.waitUntil(() => fast.frames.at(-1)?.offset === last, 30_000, `offset ${last} on the fast subscriber`);
    const bytes = frameBytes(fast.frames.slice(before));
    assert.ok(bytes < MAX_BUFFER, `a burst of ${bytes} bytes must stay under the bound of ${MAX_BUFFER}`);
    sent += bytes;
  }
  assert.equal(stream.count(), 1, `the paused subscriber was not cut off after ${sent} bytes`);
  slow.socket.resume();

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
  replay.socket.pause();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(stream.count(), before + 1, 'the replaying subscriber is still there');
  replay.socket.resume();
  await replay.waitUntil(() => replay.frames.at(-1)?.offset === last, 30_000, `offset ${last}`);
  assert.deepEqual(replay.offsets(), range(1, last));
});
