// The organization actor when a command's events cannot be stamped: that command alone fails, the state and
// the event offsets stay as they were, and the commands around it in the same batch commit.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { stampEvent } from '../../src/events/stamp.js';
import { createIdSource } from '../../src/lib/ids.js';
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
