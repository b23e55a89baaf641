// The commit bus on a real registry and WAL: one typed record per durable batch (its entries, their events
// flat, the organizations it spawned, whether the key rotated), and a subscriber that throws is warned about
// while the write and the other subscribers carry on.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCommitBus, type CommitRecord } from '../../src/org/commit-bus.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { testRegistry } from '../support/registry.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
const stores: Store[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) removeDir(dir);
});

async function start(warn: (message: string) => void = assert.fail) {
  const dir = tempDir('commit-bus-');
  dirs.push(dir);
  const store = openStore(dir, 'local', false);
  stores.push(store);
  const commits = createCommitBus(warn);
  const registry = testRegistry(store, { commits });
  await registry.bootstrap('org', 'key-0123456789abcdef');
  const actor = registry.get('org');
  assert.ok(actor);
  const records: CommitRecord[] = [];
  commits.subscribe((commit) => void records.push(commit));
  return { registry, commits, actor, records };
}

const eventName = (e: { event: Record<string, unknown> }) => (e.event['event_metadata'] as { event_name: string }).event_name;

test('one batch is one record: its entries, their events flat and in order, nothing spawned, no rotation', async () => {
  const { registry, actor, records } = await start();
  const before = actor.state.offset;
  await Promise.all([
    actor.execute({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: 'ada' }] } }),
    actor.execute({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: 'grace' }] } }),
  ]);
  assert.equal(records.length, 1, 'the two commands shared one batch and one record');
  const [commit] = records as [CommitRecord];
  assert.equal(commit.org, 'org');
  assert.deepEqual(commit.entries.map((e) => e.offset), [before + 1, before + 2]);
  assert.equal(commit.offset, before + 2);
  assert.deepEqual(commit.entries.map((e) => e.changes.map((c) => c.t)), [['PersonCreated'], ['PersonCreated']]);
  assert.deepEqual(commit.events, commit.entries.flatMap((e) => e.events));
  assert.deepEqual(commit.events.map((e) => e.offset), [1, 2]);
  assert.deepEqual(commit.events.map(eventName), ['PersonCreated_v1', 'PersonCreated_v1']);
  assert.deepEqual(commit.spawned, []);
  assert.equal(commit.keyRotated, false);
  assert.equal(actor.durableEventOffset, 2, 'the record is published once the batch is durable');
  await registry.stop();
});

test('a suborganization is in the record as spawned, already found by the registry; a rotated key is flagged', async () => {
  const { registry, commits, actor, records } = await start();
  const found: boolean[] = [];
  commits.subscribe((commit) => void found.push(...commit.spawned.map((g) => registry.get(g.id) !== undefined)));
  const sub = await actor.execute<{ id: string }>({ kind: 'CreateSuborganization', sub_org_name: 'child' });
  assert.deepEqual(records.at(-1)?.spawned.map((g) => [g.id, g.parent_id, g.org_name]), [[sub.reply.id, 'org', 'child']]);
  assert.equal(records.at(-1)?.keyRotated, false);
  assert.deepEqual(found, [true]);

  const rotated = await actor.execute<{ api_key: string }>({ kind: 'RotateApiKey' });
  const commit = records.at(-1);
  assert.equal(commit?.keyRotated, true);
  assert.deepEqual(commit?.spawned, []);
  assert.equal(commit?.events.length, 0);
  // The registry's key index reads the same record: the old key is no longer anyone's, the new one is this one's.
  assert.equal(registry.authenticate('org', 'key-0123456789abcdef').ok, false);
  const old = registry.authenticate(sub.reply.id, 'key-0123456789abcdef');
  assert.equal(old.ok ? 0 : old.error.status, 401);
  assert.equal(registry.authenticate('org', rotated.reply.api_key).ok, true);
  await registry.stop();
});

test('a subscriber that throws does not fail the write; it is warned about and the others still hear', async () => {
  const warnings: string[] = [];
  const { registry, commits, actor, records } = await start((m) => warnings.push(m));
  const unsubscribe = commits.subscribe(() => {
    throw new Error('subscriber broke');
  }, 'a broken subscriber');
  const after: CommitRecord[] = [];
  commits.subscribe((commit) => void after.push(commit));

  const created = await actor.execute<{ person_id: string }>({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: 'ada' }] } });
  assert.ok(actor.state.persons.has(created.reply.person_id), 'the write is answered and applied');
  assert.equal(records.length, 1);
  assert.equal(after.length, 1, 'the subscriber after the broken one heard the commit');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /^a broken subscriber failed on the commit of org through entry \d+: Error: subscriber broke/);

  unsubscribe();
  await actor.execute({ kind: 'CreateGroup', name: 'admins' });
  assert.equal(warnings.length, 1, 'an unsubscribed listener is not called');
  assert.equal(after.length, 2);
  await registry.stop();
});
