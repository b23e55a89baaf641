// Stop the service and start it again on the same data dir: everything acknowledged is still there,
// whether it comes back from the WAL alone or from a snapshot plus the WAL after it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectNoContent, expectResult, offsets, readAll } from '../support/expect.js';
import { encodeRecord } from '../../src/wal/codec.js';
import { openStore } from '../../src/wal/store.js';
import { Client, ROOT_KEY, ROOT_ORG, email, removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

interface Built {
  sub: { id: string; key: string; oldKey: string };
  cursor: string;
  cursorPage: string[];
  deletedHandle: string;
}

/** Persons, handles, groups, memberships, attributes of every kind, a suborganization with a rotated key. */
async function build(root: Client): Promise<Built> {
  for (const name of ['alpha', 'beta', 'gamma', 'doomed']) await root.post('/groups', { name, description: `the ${name} group` });
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const p = expectResult(await root.post('/persons', { handles: [{ type: 'email_address', value: `P${i}@Example.com` }, { type: 'username', value: `user${i}` }], groups: i % 2 ? ['alpha', 'doomed'] : ['beta'] }), 201);
    ids.push(p.person_id);
  }
  await root.put(`/persons/${ids[0]}/groups`, { groups: ['gamma', 'alpha'] });
  await root.put(`/persons/${ids[1]}/groups`, { groups: [] });
  await root.patch(`/persons/${ids[2]}`, { active: false });
  await root.put('/persons', { handles: [{ type: 'email_address', value: 'p3@example.com' }, { type: 'phone_number', value: '+442071234567' }] });
  expectNoContent(await root.put(`/persons/${ids[3]}/attributes/end_user_read_write`, { ['é'.repeat(35)]: 'multibyte', big: 'b'.repeat(65_534), nested: { a: [1, null, { b: true }] } }));
  expectNoContent(await root.patch(`/persons/${ids[3]}/attributes/end_user_read_write`, { merged: 1 }));
  expectNoContent(await root.put(`/persons/${ids[4]}/attributes/person_pool-end_user_no_access`, { x: 1, y: 2 }));
  expectNoContent(await root.delete(`/persons/${ids[4]}/attributes/person_pool-end_user_no_access?attributes=x`));
  expectNoContent(await root.put('/organizations/attributes/end_user_read_only', { plan: 'pro', seats: 10 }));
  expectNoContent(await root.put('/organizations/attributes/end_user_no_access', { gone: 1 }));
  expectNoContent(await root.delete('/organizations/attributes/end_user_no_access'));
  const deleted = ids[5] as string;
  expectNoContent(await root.delete(`/persons/${deleted}`));
  assert.equal((await root.delete('/groups/doomed')).status, 200);

  const sub = expectResult(await root.post('/organizations/suborganizations', { sub_org_name: 'kept' }), 200);
  const rotated = expectResult(await root.as(sub.id, sub.api_key).put('/organizations/api-keys'), 200).api_key as string;
  const subClient = root.as(sub.id, rotated);
  await subClient.post('/groups', { name: 'alpha' });
  expectResult(await subClient.post('/persons', { ...email('p0@example.com'), groups: ['alpha'] }), 201);
  expectNoContent(await subClient.put('/organizations/attributes/end_user_read_write', { sub: true }));
  const grandchild = expectResult(await subClient.post('/organizations/suborganizations', { sub_org_name: 'grandchild' }), 200);
  assert.ok(grandchild.id);

  const page = await root.get('/persons?paging=cursor&limit=2');
  const cursor = page.body.meta.cursor_pagination.next_cursor as string;
  const next = await root.get(`/persons?cursor=${encodeURIComponent(cursor)}`);
  return {
    sub: { id: sub.id, key: rotated, oldKey: sub.api_key },
    cursor,
    cursorPage: next.body.result.map((p: any) => p.person_id),
    deletedHandle: 'p5@example.com',
  };
}

async function everything(s: TestServer, built: Built) {
  const sub = s.client.as(built.sub.id, built.sub.key);
  return {
    root: await readAll(s.client),
    sub: await readAll(sub),
    subs: expectResult<string[]>(await s.client.get('/organizations/suborganizations'), 200).sort(),
    attributes: await Promise.all(
      expectResult<any[]>(await s.client.get('/persons?limit=1000'), 200).map(async (p) => expectResult(await s.client.get(`/persons/${p.person_id}/attributes`), 200)),
    ),
  };
}

/**
 * Stops the server and leaves its store as a crash would have: the periodic snapshots it had (none below the
 * default interval) instead of the one of the final state that a clean stop writes.
 */
async function stopAsCrashed(server: TestServer, dir: string): Promise<void> {
  const periodic = server.service.wal.organizations().map((org) => [org, server.service.wal.loadSnapshot<unknown>(org)] as const);
  await server.stop();
  const store = openStore(dir, 'local', true);
  try {
    for (const [org, snapshot] of periodic) {
      if (snapshot) store.snapshots.putSync(org, encodeRecord(snapshot, 'records'));
      else store.snapshots.removeSync(org);
    }
  } finally {
    await store.close();
  }
}

for (const [label, env, stop] of [
  ['from the WAL alone', {}, 'crash'],
  ['from a snapshot after every entry', { SERVICE_SNAPSHOT_INTERVAL: '1' }, 'crash'],
  ['from a snapshot and the WAL after it', { SERVICE_SNAPSHOT_INTERVAL: '4' }, 'crash'],
  ['from the snapshot a clean stop writes', {}, 'clean'],
] as const) {
  describe(`a restart recovers everything ${label}`, () => {
    test('persons, handles, groups, memberships, attributes, organizations, keys and cursors', async () => {
      const dir = tempDir();
      let server = await startTestServer(env, {}, dir);
      try {
        const built = await build(server.client);
        const before = await everything(server, built);
        const entries = Object.values(offsets(server)).reduce((a, b) => a + b, 0);
        if (stop === 'crash') await stopAsCrashed(server, dir);
        else await server.stop();
        const logs: string[] = [];
        server = await startTestServer(env, { log: (m) => logs.push(m) }, dir);
        const replayed = Number(/replayed (\d+) WAL entries/.exec(logs.join('\n'))?.[1]);
        // the snapshot interval decides how much of the log is replayed: proof that the snapshot was used
        if (stop === 'clean') assert.equal(replayed, 0, 'a clean stop leaves nothing to replay');
        else if (!('SERVICE_SNAPSHOT_INTERVAL' in env)) assert.equal(replayed, entries);
        else assert.ok(replayed < Number(env.SERVICE_SNAPSHOT_INTERVAL) * 3 && replayed < entries, `replayed ${replayed} of ${entries}`);
        assert.equal(server.service.root, undefined, 'the root organization was created again');
        assert.deepEqual(await everything(server, built), before);

        // keys: the rotated one works, the old one does not, the root's is unchanged
        expectError(await server.client.as(built.sub.id, built.sub.oldKey).get('/organizations'), 401);
        assert.equal((await server.client.as(built.sub.id, built.sub.key).get('/organizations')).status, 200);
        assert.equal((await server.client.as(ROOT_ORG, ROOT_KEY).get('/organizations')).status, 200);
        // handles: taken ones still conflict, freed ones are free, case still ignored for email
        expectError(await server.client.post('/persons', email('P0@EXAMPLE.COM')), 409);
        expectError(await server.client.post('/persons', { handles: [{ type: 'phone_number', value: '+442071234567' }] }), 409);
        expectResult(await server.client.post('/persons', email(built.deletedHandle)), 201);
        // a cursor issued before the restart still reads the same page
        const again = await server.client.get(`/persons?cursor=${encodeURIComponent(built.cursor)}`);
        assert.deepEqual(expectResult<any[]>(again, 200).map((p) => p.person_id), built.cursorPage);

        // and writes go on where they left off, surviving a second restart
        const more = expectResult(await server.client.post('/persons', { ...email('after@example.com'), groups: ['gamma'] }), 201);
        const second = await everything(server, built);
        await server.stop();
        server = await startTestServer(env, {}, dir);
        assert.deepEqual(await everything(server, built), second);
        assert.deepEqual(expectResult(await server.client.get(`/persons/${more.person_id}`), 200).groups, ['gamma']);
      } finally {
        await server.stop();
        removeDir(dir);
      }
    });
  });
}
