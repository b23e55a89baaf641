// A data dir written while chain links had a database of their own (test/fixtures/data-v1, scripts/make-fixture.ts)
// opens under event records that carry their link: the stream's links, the independently recomputed chain and
// verify-events agree over the old records, the new ones after them, and retention across the two.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { eventRecordLink } from '../../src/wal/event-record.js';
import { openStore } from '../../src/wal/store.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { runScript } from '../support/process.js';
import { Subscriber } from '../support/ws.js';

const fixtureDir = fileURLToPath(new URL('../fixtures/data-v1', import.meta.url));
const expected = JSON.parse(readFileSync(`${fixtureDir}.json`, 'utf8')) as {
  env: Record<string, string>;
  root: { id: string; api_key: string };
  root_event_count: number;
};
const ORG = expected.root.id;
const StreamFrame = new protobuf.Root().loadSync(fileURLToPath(new URL('../../src/events/events.proto', import.meta.url)), { keepCase: true }).lookupType('events.StreamFrame');

/** Per stored root event: whether its record carries its link, and whether the chains database has one. */
async function storedLinks(dataDir: string): Promise<Array<{ offset: number; inRecord: boolean; apart: boolean }>> {
  const store = openStore(dataDir, 'local', false);
  try {
    return [...store.events.getRange({ start: [ORG, 0], end: [ORG, Number.MAX_SAFE_INTEGER] })].map(({ key, value }) => ({
      offset: key[1],
      inRecord: eventRecordLink(value) !== undefined,
      apart: store.chains.doesExist(key),
    }));
  } finally {
    await store.close();
  }
}

/** Every retained protobuf frame up to `head`, as received. */
async function frames(server: TestServer, head: number): Promise<Array<{ offset: number; event: Buffer; chain: Buffer }>> {
  const sub = await Subscriber.open(server.base, { org: ORG, key: expected.root.api_key, query: { from: '1', format: 'protobuf' } });
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

test('a data dir whose links are in the chains database: old and new links, the stream and verify-events agree', async () => {
  const dir = tempDir('identity-upgrade-v1-');
  cpSync(fixtureDir, dir, { recursive: true });
  try {
    // What makes this test mean something: every fixture event has its link apart, none in its record.
    const before = await storedLinks(dir);
    assert.equal(before.length, expected.root_event_count);
    assert.ok(before.every((l) => l.apart && !l.inRecord), JSON.stringify(before));
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
      const all = await frames(server, head);
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

    // The new events carry their link, and nothing was written apart for them.
    const after = await storedLinks(dir);
    assert.deepEqual(after.filter((l) => l.offset > expected.root_event_count).map((l) => [l.inRecord, l.apart]), Array.from({ length: 5 }, () => [true, false]));
    assert.ok(after.filter((l) => l.offset <= expected.root_event_count).every((l) => l.apart && !l.inRecord));
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
      const retained = await frames(server, head);
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
});
