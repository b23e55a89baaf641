// The issuing pipeline as its callers use it: a sign-in's authentications, first_token and hook claims, and
// mint-token's refusals before anything is signed or recorded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startReceiver, type Receiver } from '../../scripts/webhook-receiver.js';
import type { SignInIssue } from '../../src/auth/issue.js';
import type { Person } from '../../src/domain/state.js';
import type { OrgActor } from '../../src/org/actor.js';
import { email, removeDir, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let org: OrgActor;
let receiver: Receiver;
before(async () => {
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
  org = server.service.registry.get(ROOT_ORG) as OrgActor;
  // What a token_minted hook adds: reserved names among it are dropped.
  receiver = await startReceiver({ serviceUrl: server.base, orgId: ROOT_ORG, claims: () => ({ tier: 'gold', sub: 'dropped', roles: ['dropped'] }) });
});
after(async () => {
  await receiver.close();
  await server.stop();
  removeDir(server.dataDir);
});

const consistency = { level: 'local_region', timeoutMs: 5000 } as const;

const signIn = (person: Person): SignInIssue => ({
  method: 'password',
  person,
  handle: { type: 'email_address', value: 'sign-in@example.com' },
  authentications: [{ timestamp: '2027-01-15T08:00:00.123456789Z', method: 'password', handle: { type: 'email_address', value: 'sign-in@example.com' } }],
  request_metadata: { client_ip_address: '127.0.0.1', origin: 'https://app.example', user_agent: 'issue-test' },
  consistency,
});
/** What TokenMinted says of the sign-in's authentications. */
const recordedAuthentications = [{ timestamp: '2027-01-15T08:00:00.123456789Z', method: 'password', handle: { type: 'EmailAddress', value: 'sign-in@example.com' } }];

const api = (person_id: string) => ({ method: 'api', person_id, consistency }) as const;

async function addHook(): Promise<void> {
  const w = await server.client.post('/organizations/webhooks', { name: 'token hook', target_url: receiver.url });
  assert.equal(w.status, 201, w.text);
  const t = await server.client.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' });
  assert.equal(t.status, 201, t.text);
}

test('a sign-in token is first_token for the person\'s first token only, and records its authentications', async () => {
  const created = await server.client.post('/persons', email('sign-in@example.com'));
  const personId = created.body.result.person_id as string;
  await addHook();
  const { pipeline } = server.service.tokens;
  const person = () => org.state.persons.get(personId) as Person;
  assert.equal(pipeline.firstToken(org, personId), true);
  const first = await pipeline.issue(org, signIn(person()));
  assert.equal(pipeline.firstToken(org, personId), false);
  const second = await pipeline.issue(org, signIn(person()));

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
  assert.deepEqual(e1?.['authentications'], recordedAuthentications);
  assert.equal(e2?.['first_token'], false);
  assert.ok(second.offset > first.offset, 'each token is its own WAL entry');
});

test('minting for an unknown or inactive person is refused before anything is signed or recorded', async () => {
  const { pipeline } = server.service.tokens;
  const before = server.service.wal.events(ROOT_ORG, 1, 1000).length;
  await assert.rejects(pipeline.issue(org, api('nobody')), (e: { status?: number }) => e.status === 404);
  const created = await server.client.post('/persons', { ...email('inactive@example.com'), active: false });
  await assert.rejects(pipeline.issue(org, api(created.body.result.person_id as string)), (e: { status?: number }) => e.status === 400);
  assert.equal(server.service.wal.events(ROOT_ORG, 1, 1000).length, before + 1, 'only the PersonCreated event');
});

test('a token signed for a person who is deactivated before it is recorded is never handed out', async () => {
  const created = await server.client.post('/persons', email('racing@example.com'));
  const personId = created.body.result.person_id as string;
  const before = server.service.wal.events(ROOT_ORG, 1, 1000).length;
  // Both commands queue in this turn; the deactivation is decided first, the token's record after it.
  const deactivated = org.execute({ kind: 'SetPersonActive', person_id: personId, active: false });
  const minted = server.service.tokens.pipeline.issue(org, api(personId));
  await Promise.all([deactivated, assert.rejects(minted, (e: { status?: number; message?: string }) => e.status === 400 && /not active/.test(e.message ?? ''))]);
  assert.equal(server.service.wal.events(ROOT_ORG, 1, 1000).length, before, 'no TokenMinted event');
  assert.equal(org.state.persons.get(personId)?.token_count, undefined);
  assert.equal(server.service.tokens.pipeline.firstToken(org, personId), true, 'the refused token is not the last one');
});

test("tokens minted for a person while the previous one still commits each name the one before, and no other person's", async () => {
  const ids = await Promise.all(['chain-a@example.com', 'chain-b@example.com'].map(async (a) => (await server.client.post('/persons', email(a))).body.result.person_id as string));
  const [a, b] = ids as [string, string];
  const { pipeline } = server.service.tokens;
  // Issued in one turn: none is recorded before the next is signed, so each one's predecessor is only pending.
  const issued = await Promise.all([api(a), api(b), api(a), api(a), api(b)].map((r) => pipeline.issue(org, r)));
  const prev = issued.map((t) => decodeJwt(t.token)['prev_token_id']);
  assert.deepEqual(prev, [undefined, undefined, issued[0]?.jti, issued[2]?.jti, issued[1]?.jti]);
  // Once all are recorded, the state names each person's newest.
  assert.equal(pipeline.previousToken(org, a), issued[3]?.jti);
  assert.equal(pipeline.previousToken(org, b), issued[4]?.jti);
});
