// The tamper-evident event log, end to end: the chain on every frame recomputed independently (node:crypto over
// the protobuf frames as received), a checkpoint verified with jose against the JWKS, the chain continuous across
// a signing-key rotation, a restart and retention, and verify-events finding an event altered on disk.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import protobuf from 'protobufjs';
import { createEventCodec } from '../../src/events/codec.js';
import { decodeEventRecord, encodeEventRecord } from '../../src/wal/event-record.js';
import { openStore } from '../../src/wal/store.js';
import { ROOT_KEY, ROOT_ORG, removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { runScript } from '../support/process.js';
import { Subscriber } from '../support/ws.js';

const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../src/events/events.proto', import.meta.url)), { keepCase: true });
const StreamFrame = root.lookupType('events.StreamFrame');

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

interface Frame {
  offset: number;
  event: Buffer;
  chain: Buffer;
}

/** Every retained frame from `from` up to `head`, in protobuf, as received. */
async function protobufFrames(server: TestServer, from: number, head: number): Promise<Frame[]> {
  const sub = await Subscriber.open(server.base, { query: { from: String(from), format: 'protobuf' } });
  try {
    const oldest = Number(sub.upgradeHeaders['service-events-oldest-offset']);
    await sub.waitForCount(head - Math.max(from, oldest) + 1);
    return sub.binary.map((b) => {
      const f = StreamFrame.decode(b) as unknown as { offset: unknown; event: Uint8Array; chain: Uint8Array };
      return { offset: Number(String(f.offset)), event: Buffer.from(f.event), chain: Buffer.from(f.chain) };
    });
  } finally {
    await sub.close();
  }
}

/** The chain recomputed here, independently of the service: SHA-256(previous ‖ event bytes), 32 zero bytes first. */
function recompute(frames: Frame[], anchor: Uint8Array = Buffer.alloc(32)): Buffer[] {
  let previous: Uint8Array = anchor;
  return frames.map((f) => (previous = createHash('sha256').update(previous).update(f.event).digest()));
}

async function verifiedCheckpoint(server: TestServer): Promise<{ claims: any; kid: string }> {
  const res = await server.client.get('/events/checkpoint');
  assert.equal(res.status, 200);
  const jwks = (await (await fetch(`${server.base}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  const { payload, protectedHeader } = await compactVerify(res.body.result.checkpoint, createLocalJWKSet(jwks));
  assert.equal(protectedHeader.typ, 'event-checkpoint+jwt');
  const claims = JSON.parse(Buffer.from(payload).toString('utf8'));
  assert.deepEqual(Object.keys(claims).sort(), ['chain', 'issued_at', 'offset', 'organization_id']);
  assert.equal(claims.organization_id, ROOT_ORG);
  return { claims, kid: protectedHeader.kid as string };
}

const verifyEvents = (args: string[]) => runScript('scripts/verify-events.ts', args);

async function emit(server: TestServer, count: number): Promise<number> {
  const res = await server.client.post('/test-events', [{ event_name: 'PersonCreated_v1', count }, { event_name: 'TokenMinted_v1' }]);
  assert.equal(res.status, 201);
  return (res.body.result.at(-1) as { offset: number }).offset;
}

test('the chain: recomputed independently, checkpointed, continuous across key rotation, restart and retention, and checked by verify-events', async () => {
  const dataDir = tempDir();
  dirs.push(dataDir);
  let server = await startTestServer({}, {}, dataDir);
  let head: number;
  const seen = new Map<number, string>();
  try {
    head = await emit(server, 4);
    const frames = await protobufFrames(server, 1, head);
    assert.deepEqual(frames.map((f) => f.offset), Array.from({ length: head }, (_, i) => i + 1));
    const links = recompute(frames);
    frames.forEach((f, i) => assert.equal(f.chain.toString('hex'), (links[i] as Buffer).toString('hex'), `chain of offset ${f.offset}`));
    for (const f of frames) seen.set(f.offset, f.chain.toString('hex'));

    // The JSON frames carry the same links, in hex.
    const json = await Subscriber.open(server.base, { query: { from: '1' } });
    await json.waitForCount(head);
    await json.close();
    assert.deepEqual(json.frames.map((f) => f.chain), frames.map((f) => f.chain.toString('hex')));

    const before = await verifiedCheckpoint(server);
    assert.equal(before.claims.offset, head);
    assert.equal(before.claims.chain, seen.get(head));

    // A new signing key: the chain goes on, and the checkpoint is signed by the new key.
    await server.service.tokens.keys.rotate();
    head = await emit(server, 2);
    const rotated = await verifiedCheckpoint(server);
    assert.notEqual(rotated.kid, before.kid);
    const all = await protobufFrames(server, 1, head);
    const relinked = recompute(all);
    assert.equal(rotated.claims.chain, (relinked.at(-1) as Buffer).toString('hex'));
    all.forEach((f, i) => assert.equal(f.chain.toString('hex'), (relinked[i] as Buffer).toString('hex')));
    for (const f of all) seen.set(f.offset, f.chain.toString('hex'));
  } finally {
    await server.stop();
  }

  // Restarted with a short retention: the old links are the same, and the chain continues from the oldest retained.
  server = await startTestServer({ SERVICE_EVENT_RETENTION: '5', SERVICE_EVENT_PRUNE_INTERVAL_MS: '20' }, {}, dataDir);
  try {
    head = await emit(server, 3);
    const deadline = Date.now() + 30_000;
    while (server.service.events.log.oldest(ROOT_ORG) !== head - 4) {
      assert.ok(Date.now() < deadline, 'the pruning job did not run within 30 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    const retained = await protobufFrames(server, 1, head);
    assert.equal(retained[0]?.offset, head - 4);
    for (const f of retained) if (seen.has(f.offset)) assert.equal(f.chain.toString('hex'), seen.get(f.offset), `offset ${f.offset} kept its link`);
    // From the oldest retained frame's link on, everything recomputes.
    const rest = retained.slice(1);
    const links = recompute(rest, (retained[0] as Frame).chain);
    rest.forEach((f, i) => assert.equal(f.chain.toString('hex'), (links[i] as Buffer).toString('hex'), `chain of offset ${f.offset}`));
    const checkpoint = await verifiedCheckpoint(server);
    assert.equal(checkpoint.claims.offset, head);
    assert.equal(checkpoint.claims.chain, (links.at(-1) as Buffer).toString('hex'));

    const live = await verifyEvents(['--url', server.base, '--org', ROOT_ORG, '--api-key', ROOT_KEY]);
    assert.equal(live.code, 0, live.out);
    // A periodic checkpoint is stored for the offline check.
    assert.ok((await server.service.checkpoints.emit()) >= 0);
  } finally {
    await server.stop();
  }

  const clean = await verifyEvents(['--data-dir', dataDir, '--org', ROOT_ORG]);
  assert.equal(clean.code, 0, clean.out);
  assert.match(clean.out, /checkpoint at offset/);

  // An event's bytes changed in a copy of the data dir (its record re-framed, so only the chain can tell).
  const copy = tempDir();
  dirs.push(copy);
  cpSync(dataDir, copy, { recursive: true });
  const altered = head - 2;
  const store = openStore(copy, 'local', true);
  const codec = createEventCodec();
  const stored = decodeEventRecord(store.events.getBinary([ROOT_ORG, altered]) as Uint8Array, codec.decodeEvent);
  const event = stored.event as any;
  event.event_metadata.event_id = '00000000-0000-4000-8000-000000000000';
  // the record keeps the link it was written with, and holds the event's protobuf bytes
  assert.ok(stored.chain && stored.wire);
  const name = stored.wire.name;
  await store.events.put([ROOT_ORG, altered], encodeEventRecord(undefined, stored.chain, { name, bytes: codec.encodeEvent(name, event) }));
  await store.close();
  const tampered = await verifyEvents(['--data-dir', copy, '--org', ROOT_ORG]);
  assert.equal(tampered.code, 1, tampered.out);
  assert.match(tampered.out, new RegExp(`first differing offset ${altered}\\b`));
});
