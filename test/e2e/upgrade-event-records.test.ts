// Data dirs written with earlier event record formats (scripts/make-fixture.ts) open under records of protobuf bytes:
// test/fixtures/data-v1 while chain links had a database of their own (format 0), data-v2 while records held their
// link and the msgpack event (format 1). The stream's links, the independently recomputed chain and verify-events
// agree over the old records, the new ones after them, and retention across the two.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { eventRecordFormat } from '../../src/wal/event-record.js';
import { openStore } from '../../src/wal/store.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { runScript } from '../support/process.js';
import { Subscriber } from '../support/ws.js';

interface Fixture {
  env: Record<string, string>;
  root: { id: string; api_key: string };
  root_event_count: number;
}
const fixtureDir = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const fixture = (name: string): Fixture => JSON.parse(readFileSync(`${fixtureDir(name)}.json`, 'utf8')) as Fixture;
// Both fixtures were written with the same root organization.
const ORG = fixture('data-v1').root.id;
/** What the new code writes: the link and the event's protobuf bytes. */
const CURRENT = 2;
const StreamFrame = new protobuf.Root().loadSync(fileURLToPath(new URL('../../src/events/events.proto', import.meta.url)), { keepCase: true }).lookupType('events.StreamFrame');

/** Per stored root event: its record's format, and whether the chains database has its link. */
async function storedLinks(dataDir: string): Promise<Array<{ offset: number; format: number; apart: boolean }>> {
  const store = openStore(dataDir, 'local', false);
  try {
    return [...store.events.getRange({ start: [ORG, 0], end: [ORG, Number.MAX_SAFE_INTEGER] })].map(({ key, value }) => ({
      offset: key[1],
      format: eventRecordFormat(value),
      apart: store.chains.doesExist(key),
    }));
  } finally {
    await store.close();
  }
}

/** Every retained protobuf frame up to `head`, as received. */
async function frames(server: TestServer, apiKey: string, head: number): Promise<Array<{ offset: number; event: Buffer; chain: Buffer }>> {
  const sub = await Subscriber.open(server.base, { org: ORG, key: apiKey, query: { from: '1', format: 'protobuf' } });
  try {
    const oldest = Number(sub.upgradeHeaders['service-events-oldest-offset']);
    await sub.waitForCount(head - oldest + 1);
    return sub.binary.map((b) => {
      const f = StreamFrame.decode(b) as unknown as { offset: unknown; event: Uint8Array; chain: Uint8Array };
      return { offset: Number(String(f.offset)), event: Buffer.from(f.event), chain: Buffer.from(f.chain) };
    });
  } finally {
    await sub.close();
  }
}

const verifyEvents = (dataDir: string) => runScript('scripts/verify-events.ts', ['--data-dir', dataDir, '--org', ORG]);

describe('data dirs of earlier event record formats', () => {
  for (const [name, format, apart] of [
    ['data-v1', 0, true],
    ['data-v2', 1, false],
  ] as const) {
    test(`${name} (format ${format}, links ${apart ? 'apart' : 'in the records'}): old and new links, the stream and verify-events agree`, () => upgrades(name, format, apart));
  }
});

async function upgrades(name: string, format: number, apart: boolean): Promise<void> {
  const expected = fixture(name);
  const dir = tempDir(`identity-upgrade-${name}-`);
  cpSync(fixtureDir(name), dir, { recursive: true });
  try {
    // What makes this test mean something: every fixture event is stored in the earlier format.
    const before = await storedLinks(dir);
    assert.equal(before.length, expected.root_event_count);
    assert.ok(before.every((l) => l.format === format && l.apart === apart), JSON.stringify(before));
    const verifiedBefore = await verifyEvents(dir);
    assert.equal(verifiedBefore.code, 0, verifiedBefore.out);

    let server = await startTestServer({ ...expected.env }, {}, dir);
    let head: number;
    let seen: Map<number, string>;
    try {
      const root = server.client.as(ORG, expected.root.api_key);
      const res = await root.post('/test-events', [{ event_name: 'PersonCreated_v1', count: 4 }, { event_name: 'TokenMinted_v1' }]);
      assert.equal(res.status, 201, res.text);
      head = (res.body.result.at(-1) as { offset: number }).offset;
      assert.equal(head, expected.root_event_count + 5);
      // The chain recomputed here from zero over the bytes received: the old links and the new ones continue it.
      const all = await frames(server, expected.root.api_key, head);
      assert.deepEqual(all.map((f) => f.offset), Array.from({ length: head }, (_, i) => i + 1));
      let previous: Uint8Array = Buffer.alloc(32);
      for (const f of all) {
        previous = createHash('sha256').update(previous).update(f.event).digest();
        assert.equal(f.chain.toString('hex'), Buffer.from(previous).toString('hex'), `chain of event ${f.offset}`);
      }
      seen = new Map(all.map((f) => [f.offset, f.chain.toString('hex')]));
    } finally {
      await server.stop();
    }

    // The new events are stored in the current format, and nothing was written apart for them; the old stay as they were.
    const after = await storedLinks(dir);
    assert.deepEqual(after.filter((l) => l.offset > expected.root_event_count).map((l) => [l.format, l.apart]), Array.from({ length: 5 }, () => [CURRENT, false]));
    assert.ok(after.filter((l) => l.offset <= expected.root_event_count).every((l) => l.format === format && l.apart === apart));
    const verified = await verifyEvents(dir);
    assert.equal(verified.code, 0, verified.out);

    // Retention that cuts into the new records: the link below the oldest retained stays, and all still verifies.
    const keep = 3;
    server = await startTestServer({ ...expected.env, SERVICE_EVENT_RETENTION: String(keep), SERVICE_EVENT_PRUNE_INTERVAL_MS: '20' }, {}, dir);
    try {
      const deadline = Date.now() + 30_000;
      while (server.service.events.log.oldest(ORG) !== head - keep + 1) {
        assert.ok(Date.now() < deadline, 'the pruning job did not run within 30 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      const retained = await frames(server, expected.root.api_key, head);
      assert.deepEqual(retained.map((f) => [f.offset, f.chain.toString('hex')]), retained.map((f) => [f.offset, seen.get(f.offset)]));
    } finally {
      await server.stop();
    }
    const pruned = await verifyEvents(dir);
    assert.equal(pruned.code, 0, pruned.out);
    assert.match(pruned.out, new RegExp(`events ${head - keep + 1}-${head}`));
  } finally {
    removeDir(dir);
  }
}
