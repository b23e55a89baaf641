// DELETE /organizations over HTTP: the caller and every organization below it leave service at once and leave
// nothing in LMDB; the root refuses; a deletion killed with SIGKILL half way is finished by the next start.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrgRemoval } from '../../src/wal/org-removal.js';
import { openStore } from '../../src/wal/store.js';
import { expectError, expectResult } from '../support/expect.js';
import { spawnService, type ServiceProcess } from '../support/process.js';
import { Subscriber } from '../support/ws.js';
import { email, removeDir, startTestServer, tempDir, type Client } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

async function createSub(parent: Client, name: string): Promise<{ id: string; client: Client }> {
  const sub = expectResult(await parent.post('/organizations/suborganizations', { sub_org_name: name }), 200);
  return { id: sub.id, client: parent.as(sub.id, sub.api_key) };
}

/** Every key of the local LMDB environment that belongs to one of `orgs`, named by database (the service stopped). */
async function storedKeysOf(dataDir: string, orgs: readonly string[]): Promise<string[]> {
  const store = openStore(dataDir, 'local', false);
  const found: string[] = [];
  try {
    const dbs = { wal: store.wal, snapshots: store.snapshots, events: store.events, chains: store.chains, orgs: store.orgs, meta: store.meta, deliveries: store.deliveries, dead_letters: store.deadLetters, sso_tokens: store.ssoTokens };
    for (const [name, db] of Object.entries(dbs)) {
      for (const key of (db as { getKeys(): Iterable<unknown> }).getKeys()) {
        const first = Array.isArray(key) ? String(key[0]) : String(key);
        if (orgs.some((org) => first === org || first.includes(org))) found.push(`${name} ${JSON.stringify(key)}`);
      }
    }
  } finally {
    await store.close();
  }
  return found;
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('DELETE /organizations removes the caller and every suborganization below it, keys and stored data alike; the root refuses', async () => {
  const dataDir = tempDir();
  dirs.push(dataDir);
  let server = await startTestServer({}, {}, dataDir);
  const root = server.client;
  const a = await createSub(root, 'Doomed');
  const b = await createSub(a.client, 'Doomed child');
  const c = await createSub(b.client, 'Doomed grandchild');
  const keep = await createSub(root, 'Kept');
  const person = expectResult(await a.client.post('/persons', email('ada@example.com')), 201).person_id;
  assert.equal((await a.client.put(`/persons/${person}/credentials/password`, { password: 'correct horse battery staple' })).status, 204);
  assert.equal((await a.client.post('/groups', { name: 'editors' })).status, 201);
  expectResult(await a.client.post('/organizations/webhooks', { name: 'auth', target_url: 'https://hooks.example.com/auth' }), 201);
  const machine = expectResult(await a.client.post('/oauth2/clients', { client_name: 'front', scopes: ['front.read'], grant_types: ['client_credentials'] }), 201);
  const token = expectResult<string>(await a.client.post(`/persons/${person}/mint-token`, {}), 201);
  const validate = () => root.post('/token/validate', { token }, { 'Service-OrgID': '', 'Service-API-Key': '' });
  const clientCredentials = () =>
    fetch(`${root.base}/oauth2/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${machine.client_id}:${machine.client_secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
  assert.equal(expectResult(await validate(), 200).valid, true);
  assert.equal((await clientCredentials()).status, 200);
  expectResult(await b.client.post('/persons', email('grace@example.com')), 201);
  expectResult(await keep.client.post('/persons', email('kept@example.com')), 201);

  expectError(await root.delete('/organizations'), 400, 'root organization');
  expectError(await b.client.as(b.id, 'not-the-key-0123456789').delete('/organizations'), 401);

  const subscriber = await Subscriber.open(server.base, { org: b.id, key: b.client.apiKey });
  const rootEvents = server.service.events.log.read(root.orgId, 1, 100_000).length;
  // Writes racing the deletion (a password is hashed before its command reaches the organization): committed
  // before it, or refused as the deleted organization's, never a 5xx.
  const racing = [
    ...Array.from({ length: 10 }, (_, i) => a.client.post('/persons', email(`racer${i}@example.com`))),
    ...Array.from({ length: 4 }, () => a.client.put(`/persons/${person}/credentials/password`, { password: 'another horse battery staple' })),
  ];
  const deleted = await a.client.delete('/organizations');
  assert.equal(deleted.status, 204, deleted.text);
  for (const r of await Promise.all(racing)) assert.ok([201, 204, 401].includes(r.status), `${r.status} ${r.text}`);
  for (const gone of [a, b, c]) {
    expectError(await gone.client.get('/organizations'), 401);
    expectError(await gone.client.get('/persons'), 401);
  }
  const closed = await subscriber.closed;
  assert.equal(closed.code, 4001);
  assert.match(closed.reason, /^organization deleted/);
  const subs = expectResult<string[]>(await root.get('/organizations/suborganizations'), 200);
  assert.deepEqual(subs, [keep.id], 'only the kept suborganization is left below the root');
  assert.equal(expectResult(await root.get('/organizations/quota/usage'), 200).num_suborganizations, 1);
  assert.equal(expectResult<unknown[]>(await keep.client.get('/persons'), 200).length, 1, 'a sibling keeps its persons');
  assert.equal(expectResult(await validate(), 200).valid, false, "a token of a deleted organization's person is no longer valid");
  assert.equal((await clientCredentials()).status, 401, "a deleted organization's OAuth client is unknown");
  assert.equal(server.service.events.log.read(root.orgId, 1, 100_000).length, rootEvents, 'the original has no event for a deleted organization');

  await server.service.deletions.settled();
  await server.stop();
  assert.deepEqual(await storedKeysOf(dataDir, [a.id, b.id, c.id]), [], 'LMDB holds nothing of the deleted organizations');
  assert.notDeepEqual(await storedKeysOf(dataDir, [keep.id]), [], 'the sibling is still stored');

  server = await startTestServer({}, {}, dataDir);
  try {
    assert.deepEqual(expectResult<string[]>(await server.client.get('/organizations/suborganizations'), 200), [keep.id], 'the parent forgot them durably');
    expectError(await server.client.as(a.id, 'x'.repeat(32)).get('/organizations'), 404);
    assert.equal(expectResult<unknown[]>(await server.client.as(keep.id, keep.client.apiKey).get('/persons'), 200).length, 1);
  } finally {
    await server.stop();
  }
});

test('a deletion killed with SIGKILL half way is finished by the next start', async () => {
  const dataDir = tempDir();
  dirs.push(dataDir);
  // A few keys per transaction and a long wait after each: the kill lands between two of them.
  let service: ServiceProcess = await spawnService({ SERVICE_ORG_DELETE_BATCH: '5', SERVICE_ORG_DELETE_PAUSE_MS: '600000' }, dataDir);
  try {
    const doomed = await createSub(service.client, 'Doomed');
    const below = await createSub(doomed.client, 'Below');
    for (let i = 0; i < 20; i++) expectResult(await doomed.client.post('/persons', email(`p${i}@example.com`)), 201);
    expectResult(await below.client.post('/persons', email('below@example.com')), 201);

    assert.equal((await doomed.client.delete('/organizations')).status, 204);
    expectError(await doomed.client.get('/organizations'), 401);
    await until('the first removal', () => (new RegExp(`deleting organization ${doomed.id}: \\d+ stored key`).test(service.process.output()) ? true : undefined));
    await service.kill('SIGKILL');
    const left = await storedKeysOf(dataDir, [doomed.id, below.id]);
    assert.ok(left.length > 20, `the kill came half way: ${left.length} keys left`);

    service = await spawnService({ SERVICE_ORG_DELETE_BATCH: '5' }, dataDir);
    expectError(await service.client.as(doomed.id, doomed.client.apiKey).get('/organizations'), 401);
    expectError(await service.client.as(below.id, below.client.apiKey).get('/organizations'), 401);
    await until('the deletion to finish', () => (service.process.output().includes(`deleted organization ${doomed.id} and 1 below it`) ? true : undefined));
    assert.deepEqual(expectResult<string[]>(await service.client.get('/organizations/suborganizations'), 200), []);
    await service.stop();
    assert.deepEqual(await storedKeysOf(dataDir, [doomed.id, below.id]), [], 'LMDB holds nothing of them after the start finished the deletion');
  } finally {
    await service.kill('SIGKILL');
  }
});

test('a crash right after the deletion was recorded, before anything else: the next start makes the parent forget it and removes it', async () => {
  const dataDir = tempDir();
  dirs.push(dataDir);
  let server = await startTestServer({}, {}, dataDir);
  const doomed = await createSub(server.client, 'Doomed');
  const below = await createSub(doomed.client, 'Below');
  expectResult(await doomed.client.post('/persons', email('ada@example.com')), 201);
  await server.stop();
  // What DELETE /organizations writes first, and all a crash just after it leaves.
  const store = openStore(dataDir, 'local', true);
  await createOrgRemoval(store).record({ org: doomed.id, parent: server.client.orgId, orgs: [doomed.id, below.id] });
  await store.close();

  server = await startTestServer({}, {}, dataDir);
  try {
    expectError(await server.client.as(doomed.id, doomed.client.apiKey).get('/organizations'), 401);
    await server.service.deletions.settled();
    assert.deepEqual(expectResult<string[]>(await server.client.get('/organizations/suborganizations'), 200), []);
  } finally {
    await server.stop();
  }
  assert.deepEqual(await storedKeysOf(dataDir, [doomed.id, below.id]), []);
});
