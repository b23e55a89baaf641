// The minter as the sign-in code calls it: authentications, first_token and custom claims from a hook.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import type { OrgActor } from '../../src/org/actor.js';
import { email, removeDir, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let org: OrgActor;
before(async () => {
  server = await startTestServer();
  org = server.service.registry.get(ROOT_ORG) as OrgActor;
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const signIn = (custom_claims?: Record<string, unknown>) => ({
  authenticated_methods: ['password'],
  authentications: [{ timestamp: '2027-01-15T08:00:00.123456789Z', method: 'password', handle: { type: 'EmailAddress', value: 'sign-in@example.com' } }],
  mint_token_api: false,
  ...(custom_claims === undefined ? {} : { custom_claims }),
});

test('a sign-in token is first_token for the person\'s first token only, and records its authentications', async () => {
  const created = await server.client.post('/persons', email('sign-in@example.com'));
  const personId = created.body.result.person_id as string;
  const { minter } = server.service.tokens;
  assert.equal(minter.firstToken(org, personId), true);
  const first = await minter.mint(org, personId, signIn({ tier: 'gold', sub: 'dropped', roles: ['dropped'] }));
  assert.equal(minter.firstToken(org, personId), false);
  const second = await minter.mint(org, personId, signIn());

  const c1 = decodeJwt(first.token);
  const c2 = decodeJwt(second.token);
  assert.equal(c1['first_token'], true);
  assert.equal(c2['first_token'], false);
  assert.deepEqual(c1['authenticated_methods'], ['password']);
  assert.equal(c1['tier'], 'gold');
  assert.equal(c1.sub, personId, 'reserved claims from a hook are dropped');
  assert.equal('roles' in c1, false);
  assert.equal(c2['prev_token_id'], first.jti);

  const events = server.service.wal.events(ROOT_ORG, 1, 1000).map((e) => e.event as Record<string, any>).filter((e) => e['event_metadata'].event_name === 'TokenMinted_v1');
  const [e1, e2] = events.slice(-2);
  assert.equal(e1?.['token_id'], first.jti);
  assert.equal(e1?.['mint_token_api'], false);
  assert.equal(e1?.['first_token'], true);
  assert.deepEqual(e1?.['authentications'], signIn().authentications);
  assert.equal(e2?.['first_token'], false);
  assert.ok(second.offset > first.offset, 'each token is its own WAL entry');
});

test('minting for an unknown or inactive person is refused before anything is signed or recorded', async () => {
  const { minter } = server.service.tokens;
  const before = server.service.wal.events(ROOT_ORG, 1, 1000).length;
  await assert.rejects(minter.mint(org, 'nobody', signIn()), (e: { status?: number }) => e.status === 404);
  const created = await server.client.post('/persons', { ...email('inactive@example.com'), active: false });
  await assert.rejects(minter.mint(org, created.body.result.person_id as string, signIn()), (e: { status?: number }) => e.status === 400);
  assert.equal(server.service.wal.events(ROOT_ORG, 1, 1000).length, before + 1, 'only the PersonCreated event');
});

test('a token signed for a person who is deactivated before it is recorded is never handed out', async () => {
  const created = await server.client.post('/persons', email('racing@example.com'));
  const personId = created.body.result.person_id as string;
  const before = server.service.wal.events(ROOT_ORG, 1, 1000).length;
  // Both commands queue in this turn; the deactivation is decided first, the token's record after it.
  const deactivated = org.execute({ kind: 'SetPersonActive', person_id: personId, active: false });
  const minted = server.service.tokens.minter.mint(org, personId, signIn());
  await Promise.all([deactivated, assert.rejects(minted, (e: { status?: number; message?: string }) => e.status === 400 && /not active/.test(e.message ?? ''))]);
  assert.equal(server.service.wal.events(ROOT_ORG, 1, 1000).length, before, 'no TokenMinted event');
  assert.equal(org.state.persons.get(personId)?.token_count, undefined);
  assert.equal(server.service.tokens.minter.firstToken(org, personId), true, 'the refused token is not the last one');
});
