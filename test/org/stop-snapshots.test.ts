// A clean stop stores every organization's final snapshot in few commits, and a restart rebuilds each from it;
// a kill -9 half way through those commits leaves a data dir that recovers every acknowledged write.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { toSnapshot } from '../../src/domain/snapshot.js';
import type { Registry } from '../../src/org/registry.js';
import { openStore } from '../../src/wal/store.js';
import { spawnNode } from '../support/process.js';
import { countCommits, testRegistry } from '../support/registry.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const SUBORGS = 40;

/** The root and SUBORGS suborganizations, three persons each; answers every organization's state as a snapshot. */
async function fill(registry: Registry): Promise<Map<string, unknown>> {
  const root = await registry.bootstrap('root', 'key-0123456789abcdef');
  assert.ok(root);
  const rootActor = registry.get('root');
  assert.ok(rootActor);
  for (let i = 0; i < SUBORGS; i++) await rootActor.execute({ kind: 'CreateSuborganization', sub_org_name: `org-${i}` });
  for (const actor of registry.all()) {
    for (let p = 0; p < 3; p++) await actor.execute({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: `p${p}-${actor.id}` }] } });
  }
  return states(registry);
}

function states(registry: Registry): Map<string, unknown> {
  return new Map([...registry.all()].map((a) => [a.id, JSON.parse(JSON.stringify({ offset: a.state.offset, state: toSnapshot(a.state) }))]));
}

test('a clean stop stores every organization\'s snapshot in one commit, and a restart replays nothing', async () => {
  const dir = tempDir('identity-stop-');
  dirs.push(dir);
  let store = openStore(dir, 'local', true);
  const filling = testRegistry(store);
  const before = await fill(filling);
  await filling.stop();
  // Started again on the same store: each organization logs one entry more, so each needs a final snapshot.
  const registry = testRegistry(store);
  assert.equal((await registry.recover()).orgs, SUBORGS + 1);
  for (const actor of registry.all()) await actor.execute({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: `late-${actor.id}` }] } });
  const expected = states(registry);
  assert.notDeepEqual(expected, before);
  const commits = countCommits(store);
  await registry.stop();
  assert.equal(commits.count, 1, 'the final snapshots share one commit');
  await store.close();

  store = openStore(dir, 'local', true);
  try {
    const restarted = testRegistry(store);
    const recovered = await restarted.recover();
    assert.deepEqual(recovered, { orgs: SUBORGS + 1, replayed: 0 }, 'every organization came back from its snapshot alone');
    assert.deepEqual(states(restarted), expected);
  } finally {
    await store.close();
  }
});

test('a kill -9 half way through a clean stop\'s snapshot commits leaves a data dir that recovers every write', async () => {
  const dir = tempDir('identity-stop-kill-');
  dirs.push(dir);
  let store = openStore(dir, 'local', true);
  const registry = testRegistry(store);
  await fill(registry);
  await registry.stop();
  await store.close();

  const child = await spawnNode({ script: 'test/support/stop-kill.ts', args: [dir], ready: /^recovered (\d+)/ });
  assert.equal(Number(child.ready[1]), SUBORGS + 1);
  const exit = await child.exited;
  assert.equal(exit.signal, 'SIGKILL', `the child was to kill itself half way; its output:\n${child.output()}`);

  store = openStore(dir, 'local', true);
  try {
    const warnings: string[] = [];
    const restarted = testRegistry(store, { warn: (m) => warnings.push(m) });
    const recovered = await restarted.recover();
    assert.equal(recovered.orgs, SUBORGS + 1);
    assert.deepEqual(warnings, [], 'nothing was cut or corrupt');
    // Every organization has its late person, from a final snapshot that made it or from its WAL replayed.
    for (const actor of restarted.all()) {
      const names = [...actor.state.persons.values()].flatMap((p) => p.handles.map((h) => h.value));
      assert.ok(names.includes(`late-${actor.id}`), `${actor.id} lost its late person`);
      assert.equal(actor.state.persons.size, 4);
    }
    assert.ok(recovered.replayed >= Math.ceil((SUBORGS + 1) / 2), 'the organizations whose snapshot was not handed over replayed their late entry');
    await restarted.stop();
  } finally {
    await store.close();
  }
});
