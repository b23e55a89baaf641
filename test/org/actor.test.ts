// The organization actor when a command's events cannot be stamped: that command alone fails, the state and
// the event offsets stay as they were, and the commands around it in the same batch commit.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { stampEvent } from '../../src/events/stamp.js';
import { createIdSource } from '../../src/lib/ids.js';
import { createCommitBus } from '../../src/org/commit-bus.js';
import { openStore } from '../../src/wal/store.js';
import { testRegistry } from '../support/registry.js';
import { removeDir, tempDir } from '../support/server.js';

const dir = tempDir();
const store = openStore(dir, 'local', true);
after(async () => {
  await store.close();
  removeDir(dir);
});

const eventIds = createIdSource();

test('a failure to stamp an event rejects only its command and changes nothing', async () => {
  const registry = testRegistry(store, {
    stamp: (origin, draft, nowNs) => {
      if (draft.name === 'PersonDeleted_v1') throw new Error('cannot stamp');
      return stampEvent(origin, draft, nowNs, eventIds);
    },
  });
  const root = await registry.bootstrap('org', 'key-0123456789abcdef');
  assert.ok(root);
  const actor = registry.get('org');
  assert.ok(actor);
  const created = await actor.execute<{ person_id: string }>({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: 'ada' }] } });
  const before = { offset: actor.state.offset, events: actor.state.event_offset };

  // One batch: the delete fails at stamping, the group before it and the one after it commit.
  const results = await Promise.allSettled([
    actor.execute({ kind: 'CreateGroup', name: 'first' }),
    actor.execute({ kind: 'DeletePerson', person_id: created.reply.person_id }),
    actor.execute({ kind: 'CreateGroup', name: 'second' }),
  ]);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.ok(actor.state.persons.has(created.reply.person_id), 'the person is still there');
  assert.deepEqual([...actor.state.groups.keys()].sort(), ['first', 'second']);
  assert.equal(actor.state.offset, before.offset + 2);
  assert.equal(actor.state.event_offset, before.events, 'no event offset was used up');
  await registry.stop();
});

test('commands that keep arriving turn after turn while a commit is in flight share the next commit', async () => {
  const commits = createCommitBus(assert.fail);
  // Lifted far above any pause of a busy machine: the batch then ends at the first turn that adds nothing.
  const registry = testRegistry(store, { commits, gatherMaxMs: 60_000 });
  await registry.bootstrap('gather', 'key-0123456789abcdef');
  const actor = registry.get('gather');
  assert.ok(actor);
  const group = (name: string) => actor.execute({ kind: 'CreateGroup', name });
  const settled: Array<Promise<unknown>> = [];
  const batches: number[] = [];
  // Three commands arrive one event-loop turn after another, starting as the first commit becomes durable.
  let arriving = 0;
  const arrive = () => {
    settled.push(group(`late-${arriving}`));
    if (++arriving < 3) setImmediate(arrive);
  };
  const unsubscribe = commits.subscribe((c) => {
    if (batches.push(c.entries.length) === 1) setImmediate(arrive);
  });
  // The first command commits alone; the second arrives the turn after, while that commit is in flight.
  settled.push(group('first'));
  await new Promise((resolve) => setImmediate(resolve));
  settled.push(group('second'));
  await Promise.all(settled);
  unsubscribe();
  assert.deepEqual(batches, [1, 4], 'the second command and the three late ones share one commit');
  await registry.stop();
});
