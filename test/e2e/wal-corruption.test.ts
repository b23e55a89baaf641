// A torn or corrupt WAL tail is cut at start-up, never applied; a corrupt snapshot falls back to the WAL;
// a good snapshot means only the tail after it is replayed. The damage is done to the real LMDB files.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord, encodeRecord } from '../../src/wal/codec.js';
import { createEventCodec } from '../../src/events/codec.js';
import { decodeEventRecord } from '../../src/wal/event-record.js';
import type { WalEntry } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { email, removeDir, ROOT_ORG, startTestServer, tempDir, type Client, type TestServer } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

function freshDir(): string {
  const dir = tempDir('identity-wal-');
  dirs.push(dir);
  return dir;
}

/** Starts the service on dir, collecting its warnings. */
async function start(dir: string, env: Record<string, string> = {}): Promise<{ server: TestServer; warnings: string[] }> {
  const warnings: string[] = [];
  const server = await startTestServer(env, { warn: (m) => warnings.push(m) }, dir);
  return { server, warnings };
}

/** Opens the stopped service's LMDB environment, as a tool on the operator's machine would. */
async function withStore<T>(dir: string, fn: (store: Store) => T | Promise<T>): Promise<T> {
  const store = openStore(dir, 'local', true);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function lastWalKey(store: Store, org: string): [string, number] {
  const [last] = store.wal.getKeys({ start: [org, Number.MAX_SAFE_INTEGER], end: [org, 0], reverse: true, limit: 1 });
  assert.ok(last, `no WAL entries for ${org}`);
  return last as [string, number];
}

async function createPersons(client: Client, prefix: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= n; i++) {
    const r = await client.post('/persons', email(`${prefix}${i}@wal.test`));
    assert.equal(r.status, 201, r.text);
    ids.push(r.body.result.person_id);
  }
  return ids;
}

async function assertPersons(client: Client, prefix: string, ids: string[]): Promise<void> {
  const list = await client.get('/persons?limit=1000&fields=handles');
  assert.equal(list.status, 200);
  assert.equal(list.body.meta.pagination.total_count, ids.length);
  assert.deepEqual(
    list.body.result.map((p: { person_id: string; handles: unknown }) => [p.person_id, p.handles]),
    ids.map((id, i) => [id, [{ type: 'email_address', value: `${prefix}${i + 1}@wal.test` }]]),
  );
}

const damages: Array<{ name: string; damage(record: Buffer): Buffer; reason: RegExp }> = [
  {
    name: 'flipped bytes',
    damage: (r) => {
      const out = Buffer.from(r);
      for (const i of [4, r.length >> 1, r.length - 1]) out[i] = (out[i] as number) ^ 0xff;
      return out;
    },
    reason: /checksum mismatch/,
  },
  { name: 'a torn write (payload cut short)', damage: (r) => Buffer.from(r.subarray(0, r.length - 7)), reason: /checksum mismatch/ },
  { name: 'a torn write (inside the checksum)', damage: (r) => Buffer.from(r.subarray(0, 3)), reason: /too short/ },
];

for (const { name, damage, reason } of damages) {
  test(`a last WAL record with ${name} is cut with a warning; what came before stays; new writes take its offset`, async () => {
    const dir = freshDir();
    let { server } = await start(dir);
    const ids = await createPersons(server.client, 'p', 5);
    const eventsBefore = await withStoreAfterStop(server, dir, (store) => {
      const key = lastWalKey(store, ROOT_ORG);
      assert.deepEqual(key, [ROOT_ORG, 6], 'the genesis entry and five persons');
      const record = store.wal.getBinary(key) as Buffer;
      store.wal.putSync(key, damage(Buffer.from(record)));
      // As a crash leaves it: the snapshot a clean stop writes would cover the damaged entry.
      store.snapshots.removeSync(ROOT_ORG);
      return [...store.events.getKeys({ start: [ROOT_ORG, 0], end: [ROOT_ORG, Number.MAX_SAFE_INTEGER] })].length;
    });
    assert.equal(eventsBefore, 5, 'one PersonCreated per person');

    const restarted = await start(dir);
    server = restarted.server;
    assert.ok(restarted.warnings.some((w) => /WAL of root-org: entry 6 is corrupt/.test(w) && reason.test(w)), restarted.warnings.join('\n'));
    assert.ok(restarted.warnings.some((w) => /WAL cut at entry 6; state is as of entry 5/.test(w)), restarted.warnings.join('\n'));
    await assertPersons(server.client, 'p', ids.slice(0, 4));
    assert.equal((await server.client.get(`/persons/${ids[4]}`)).status, 404, 'the cut entry is not applied');
    assert.equal(server.service.registry.get(ROOT_ORG)?.state.offset, 5);

    // The handle of the cut person is free again, and the new write lands at the cut offset.
    const again = await server.client.post('/persons', email('p5@wal.test'));
    assert.equal(again.status, 201, again.text);
    const newId = again.body.result.person_id as string;
    assert.equal(server.service.registry.get(ROOT_ORG)?.state.offset, 6);
    await withStoreAfterStop(server, dir, (store) => {
      assert.deepEqual(lastWalKey(store, ROOT_ORG), [ROOT_ORG, 6]);
      const entry = decodeRecord<WalEntry<{ t: string; person?: { person_id: string } }>>(store.wal.getBinary([ROOT_ORG, 6]) as Buffer);
      assert.equal(entry.changes[0]?.t, 'PersonCreated');
      assert.equal(entry.changes[0]?.person?.person_id, newId);
      // The cut entry's event went with it; the new person's event took its offset.
      const events = [...store.events.getRange({ start: [ROOT_ORG, 0], end: [ROOT_ORG, Number.MAX_SAFE_INTEGER] })];
      assert.deepEqual(events.map((e) => e.key[1]), [1, 2, 3, 4, 5]);
      assert.equal((decodeEventRecord(events[4]?.value as Buffer, createEventCodec().decodeEvent).event as { person_id: string }).person_id, newId);
    });

    // The cut is on disk: the next start is clean and has everything.
    const third = await start(dir);
    try {
      assert.deepEqual(third.warnings, []);
      await assertPersons(third.server.client, 'p', [...ids.slice(0, 4), newId]);
    } finally {
      await third.server.stop();
    }
  });
}

/** Stops the server, then works on its files. */
async function withStoreAfterStop<T>(server: TestServer, dir: string, fn: (store: Store) => T): Promise<T> {
  await server.stop();
  return withStore(dir, fn);
}

test('with a snapshot every 5 entries, a restart replays only the tail after the last snapshot', async () => {
  const dir = freshDir();
  const env = { SERVICE_SNAPSHOT_INTERVAL: '5' };
  const first = await start(dir, env);
  const ids = await createPersons(first.server.client, 's', 20);
  // The last periodic snapshot, as a crash would leave it; the clean stop then writes one of the final state.
  const periodic = first.server.service.wal.loadSnapshot<unknown>(ROOT_ORG);
  assert.ok(periodic);
  const snapshotOffset = periodic.offset;
  assert.ok(snapshotOffset > 11 && snapshotOffset <= 21, `snapshot at ${snapshotOffset}, within two intervals of the end`);
  await withStoreAfterStop(first.server, dir, (store) => {
    assert.deepEqual(lastWalKey(store, ROOT_ORG), [ROOT_ORG, 21]);
    assert.equal(decodeRecord<{ offset: number }>(store.snapshots.getBinary(ROOT_ORG) as Buffer).offset, 21, 'the clean stop wrote a snapshot of the final state');
    store.snapshots.putSync(ROOT_ORG, encodeRecord(periodic, 'records'));
  });

  const { server, warnings } = await start(dir, env);
  try {
    assert.deepEqual(warnings, []);
    assert.deepEqual(server.service.recovered, { orgs: 1, replayed: 21 - snapshotOffset });
    await assertPersons(server.client, 's', ids);
    assert.equal(server.service.registry.get(ROOT_ORG)?.state.offset, 21);
  } finally {
    await server.stop();
  }
});

test('a corrupt snapshot is ignored with a warning and the whole WAL is replayed', async () => {
  const dir = freshDir();
  const env = { SERVICE_SNAPSHOT_INTERVAL: '5' };
  const first = await start(dir, env);
  const ids = await createPersons(first.server.client, 'c', 20);
  await withStoreAfterStop(first.server, dir, (store) => {
    const snapshot = Buffer.from(store.snapshots.getBinary(ROOT_ORG) as Buffer);
    snapshot[snapshot.length >> 1] = (snapshot[snapshot.length >> 1] as number) ^ 0x55;
    store.snapshots.putSync(ROOT_ORG, snapshot);
  });

  const { server, warnings } = await start(dir, env);
  try {
    assert.ok(warnings.some((w) => /snapshot of root-org is corrupt \(record checksum mismatch\)/.test(w)), warnings.join('\n'));
    assert.deepEqual(server.service.recovered, { orgs: 1, replayed: 21 }, 'the genesis entry and 20 persons');
    await assertPersons(server.client, 'c', ids);
  } finally {
    await server.stop();
  }
});
