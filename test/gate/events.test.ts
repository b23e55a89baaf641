// Gate's events on the real path: one GateRequestHandled per request matching what client and upstream saw
// (JSON and the shipped .proto), heartbeats with gaps exactly where the fault proxy refused sends, renewals
// that leave the sequence alone, a reset to 1 after kill -9, and nothing lost or duplicated while the service
// is unreachable.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import protobuf from 'protobufjs';
import { eventually, gateDoc, spawnGate, startEchoUpstream, startFaultProxy, startTestGate, type EchoUpstream, type FaultProxy } from '../support/gate.js';
import { email, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber } from '../support/ws.js';

const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../src/events/events.proto', import.meta.url)), { keepCase: true });
let server: TestServer;
let upstream: EchoUpstream;
let fault: FaultProxy;
let gate: Awaited<ReturnType<typeof startTestGate>>;
let sub: Subscriber;
let binary: Subscriber;
let token: string;

before(async () => {
  server = await startTestServer();
  upstream = await startEchoUpstream();
  fault = await startFaultProxy(server.base);
  const person = (await server.client.post('/persons', email('events-person@example.com'))).body.result.person_id;
  token = (await server.client.post(`/persons/${person}/mint-token`, {})).body.result;
  sub = await Subscriber.open(server.base);
  binary = await Subscriber.open(server.base, { query: { format: 'protobuf' } });
  gate = await startTestGate(
    gateDoc(fault.base, {
      default: { target: upstream.base },
      urls: [{ pattern: '*/auth/*', plugins: { limit: { enabled: true }, jwt: { enabled: true } } }],
      plugins: [
        { id: 'limit', type: 'ratelimit', enabled: false, parameters: { limits: [{ key: 'ip', interval: '1ms', burst: 1000 }] } },
        { id: 'jwt', type: 'validate-jwt', enabled: false, parameters: { service_base_url: server.base } },
      ],
      events: { server_started_renewal: '300ms', heartbeat: { enabled: true, interval: '100ms' } },
    }),
  );
});
after(async () => {
  await sub.close();
  await binary.close();
  await gate.close();
  await fault.close();
  await upstream.close();
  await server.stop();
});

const events = (name: string) => sub.frames.map((f) => f.event).filter((e) => e.event_metadata.event_name === name);
const handled = (tag: string) => events('GateRequestHandled_v1').filter((e) => e.http_request_metadata.url.includes(tag));
const beats = (instance: string) => events('GateHeartbeat_v1').filter((e) => e.analytics_metadata.analytics_correlation_id === instance).map((e) => Number(e.sequence));

async function send(path: string, init: RequestInit = {}) {
  const res = await fetch(`${gate.base}${path}`, init);
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, length: body.length };
}

test('one GateRequestHandled per request: status and byte counts as the client and the upstream saw them, plugins in order, decodable with the .proto', async () => {
  const tag = randomUUID();
  const n = upstream.seen.length;
  const got = [
    await send(`/plain?t=${tag}&i=0`),
    await send(`/plain?t=${tag}&i=1`, { method: 'POST', body: Buffer.alloc(12_345, 1) }),
    await send(`/bytes?t=${tag}&i=2&n=5000`),
    await send(`/auth/x?t=${tag}&i=3`),
    await send(`/auth/x?t=${tag}&i=4`, { headers: { authorization: `Bearer ${token}` } }),
  ];
  assert.deepEqual(got.map((g) => g.status), [200, 200, 200, 401, 200]);
  await sub.waitUntil(() => handled(tag).length >= 5, 30_000, 'five GateRequestHandled');
  await new Promise((r) => setTimeout(r, 300));
  const mine = handled(tag).sort((a, b) => Number(new URL(a.http_request_metadata.url).searchParams.get('i')) - Number(new URL(b.http_request_metadata.url).searchParams.get('i')));
  assert.equal(mine.length, 5, 'exactly one per request');
  const upstreamLengths = [upstream.seen[n]!.bodyLength, upstream.seen[n + 1]!.bodyLength, 0, 0, 0];
  for (const [i, e] of mine.entries()) {
    const m = e.http_request_metadata;
    assert.equal(m.status_code, got[i]!.status, `status of ${i}`);
    assert.equal(Number(m.response_length), got[i]!.length, `response bytes of ${i}`);
    assert.equal(Number(m.request_length), upstreamLengths[i], `request bytes of ${i}`);
    assert.equal(m.method, i === 1 ? 'POST' : 'GET');
    assert.equal(e.event_metadata.source, 'Gate');
    const start = Date.parse(e.timing_metadata.start);
    const end = Date.parse(e.timing_metadata.end);
    assert.ok(start <= end);
    assert.ok(Math.abs(e.timing_metadata.elapsed * 1000 - (end - start)) < 2, 'elapsed in seconds');
  }
  assert.equal(Number(mine[1].http_request_metadata.request_length), 12_345);
  assert.deepEqual(mine[0].plugins ?? [], []);
  assert.deepEqual(mine[3].plugins.map((p: any) => [p.plugin_index, p.plugin_id, p.plugin_type]), [[0, 'limit', 'ratelimit'], [1, 'jwt', 'validate-jwt']]);
  assert.equal(mine[3].plugins[1].plugin_metadata.decision, 'deny');
  assert.equal(mine[4].plugins[1].plugin_metadata.decision, 'allow');

  // The same events on the protobuf stream, decoded with the checked-in .proto.
  const frameType = root.lookupType('events.StreamFrame');
  const eventType = root.lookupType('events.GateRequestHandled_v1');
  await binary.waitUntil(() => binary.binary.length >= sub.frames.length, 30_000, 'the binary stream to catch up');
  const decoded = binary.binary
    .map((b) => frameType.toObject(frameType.decode(b), { longs: String }))
    .filter((f) => f['event_name'] === 'GateRequestHandled_v1')
    .map((f) => eventType.toObject(eventType.decode(f['event'] as Uint8Array), { longs: String, enums: String }) as any)
    .filter((e) => e.http_request_metadata.url.includes(tag));
  assert.equal(decoded.length, 5);
  const byId = new Map(decoded.map((d) => [d.event_metadata.event_id, d]));
  for (const e of mine) {
    const d = byId.get(e.event_metadata.event_id);
    assert.ok(d);
    assert.equal(d.http_request_metadata.status_code, e.http_request_metadata.status_code);
    assert.equal(d.http_request_metadata.response_length, e.http_request_metadata.response_length);
    assert.equal(d.event_metadata.source, 'Gate');
    assert.equal((d.plugins ?? []).length, (e.plugins ?? []).length);
  }
});

test('heartbeats: gaps exactly where the fault proxy refused sends; renewals keep the same instance and leave the sequence alone', async () => {
  const id = gate.instanceId;
  await eventually(() => beats(id).length >= 3, 'three heartbeats');
  fault.mode = 'refuse';
  await eventually(() => fault.heartbeats('refuse').length >= 3, 'three refused heartbeats');
  fault.mode = 'pass';
  const refused = fault.heartbeats('refuse');
  const top = Math.max(...refused);
  await eventually(() => beats(id).some((s) => s > top + 1), 'heartbeats after the refusals');
  const seen = beats(id);
  const last = Math.max(...seen);
  assert.equal(new Set(seen).size, seen.length, 'no sequence twice');
  for (let s = 1; s <= last; s++) assert.ok(seen.includes(s) !== refused.includes(s), `sequence ${s} is either delivered or refused: seen ${seen}, refused ${refused}`);
  assert.ok(refused.length >= 3);

  const started = events('GateServerStarted_v1').filter((e) => e.analytics_metadata.analytics_correlation_id === id);
  assert.ok(started.length >= 2, 'the start and at least one renewal');
  assert.equal(started[0].comment, undefined);
  assert.equal(started[0].version.variant, 'community');
  assert.ok(started.slice(1).every((e) => e.comment === 'renewal'));
});

test('the service unreachable: traffic keeps flowing on cached keys; a batch whose answer was lost is resent and not duplicated', async () => {
  const tag = randomUUID();
  assert.equal((await send(`/auth/warm?t=${tag}`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  fault.mode = 'refuse';
  for (let i = 0; i < 5; i++) assert.equal((await send(`/auth/down?t=${tag}&i=${i}`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  await eventually(() => fault.log.some((p) => p.outcome === 'refuse' && p.path === '/gate/events' && JSON.stringify(p.body).includes(`down?t=${tag}`)), 'a refused batch');
  fault.mode = 'drop-answer';
  await eventually(() => fault.log.some((p) => p.outcome === 'drop-answer' && JSON.stringify(p.body).includes(`down?t=${tag}`)), 'a batch committed without its answer');
  fault.mode = 'pass';
  // Waited for, not timed: the resend comes after the gate's backoff, however long a busy machine makes it.
  const resent = () => fault.log.filter((p) => p.outcome === 'pass' && JSON.stringify(p.body).includes(`down?t=${tag}`));
  await eventually(() => resent().length >= 1, 'the batch sent again');
  // The gate has one batch in flight at a time: a later batch passing means the resent one was answered.
  const at = fault.log.indexOf(resent()[0] as (typeof fault.log)[number]);
  await eventually(() => fault.log.slice(at + 1).some((p) => p.outcome === 'pass' && p.path === '/gate/events'), 'a batch after the resent one');
  // Whatever the resend committed is in the stream before a marker written after it.
  const marker = await server.client.post('/test-events', [{ event_name: 'ServiceSDKLoaded_v1' }]);
  assert.equal(marker.status, 201, marker.text);
  const markerOffset = marker.body.result[0].offset as number;
  await sub.waitUntil(() => sub.frames.some((f) => f.offset === markerOffset), 30_000, 'the marker');
  const ids = sub.frames.map((f) => f.event.event_metadata.event_id);
  assert.equal(new Set(ids).size, ids.length, 'no event twice in the log');
  assert.equal(handled(`down?t=${tag}`).length, 5);
});

test('a full queue drops request events and counts them; requests are not held back', async () => {
  const down = await startFaultProxy(server.base);
  down.mode = 'refuse';
  const small = await startTestGate(gateDoc(down.base, { default: { target: upstream.base }, events: { buffer_limit: 5 } }));
  try {
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`${small.base}/x?i=${i}`)).status, 200);
    const metrics = await (await fetch(`${small.base}/metrics`)).text();
    const dropped = Number(/gate_events_dropped_total\{reason="queue_full"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(dropped >= 15, metrics);
    assert.match(metrics, /gate_events_queued \d/);
    assert.equal(small.sender?.queued(), 5);
    // The start event is never the one dropped.
    down.mode = 'pass';
    await eventually(() => events('GateServerStarted_v1').some((e) => e.analytics_metadata.analytics_correlation_id === small.instanceId), 'the delayed GateServerStarted');
  } finally {
    await small.close();
    await down.close();
  }
});

test('kill -9 and restart: a new GateServerStarted without comment, and heartbeats from 1 under a new instance', async () => {
  const doc = gateDoc(server.base, { default: { target: upstream.base }, events: { heartbeat: { enabled: true, interval: '100ms' } } });
  const first = await spawnGate(doc);
  let firstId = '';
  try {
    await eventually(() => {
      const ids = new Set(events('GateHeartbeat_v1').map((e) => e.analytics_metadata.analytics_correlation_id as string));
      ids.delete(gate.instanceId);
      firstId = [...ids][0] ?? '';
      return firstId !== '' && beats(firstId).length >= 2;
    }, 'the child\'s heartbeats');
  } finally {
    await first.proc.kill('SIGKILL');
  }
  const second = await spawnGate(doc);
  try {
    let secondId = '';
    await eventually(() => {
      // The restarted process: a start event without comment under an instance that also sends heartbeats.
      const s = events('GateServerStarted_v1').find((e) => {
        const id = e.analytics_metadata.analytics_correlation_id as string;
        return ![gate.instanceId, firstId].includes(id) && e.comment === undefined && beats(id).length >= 1;
      });
      secondId = s?.analytics_metadata.analytics_correlation_id ?? '';
      return secondId !== '';
    }, 'the restarted Gate\'s start and heartbeat');
    assert.equal(beats(secondId)[0], 1);
    assert.ok(Math.max(...beats(firstId)) >= 2);
  } finally {
    await second.proc.kill('SIGTERM');
  }
});
