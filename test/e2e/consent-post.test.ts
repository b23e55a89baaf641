// POST /persons/{person_id}/consent/gdpr: levels join the person's set (PUT replaces it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { email, startTestServer, type TestServer } from '../support/server.js';
import { expectError, expectResult, unchanged } from '../support/expect.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';
import { Subscriber } from '../support/ws.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

type Consent = { consent_level: string; created_at: string };

test('POST adds levels, keeps those held with their created_at, and emits GdprConsentsChanged', async () => {
  const c = server.client;
  const id = expectResult(await c.post('/persons', email('consent-post@example.com')), 201).person_id as string;
  const path = `/persons/${id}/consent/gdpr`;
  const first = expectResult<{ consents: Consent[] }>(await c.put(path, { consent_levels: ['necessary'] }), 200);
  const body = { consent_levels: ['analytics', 'necessary'] };
  assertOriginalRequest('POST /persons/{person_id}/consent/gdpr', body);
  const r = await c.post(path, body);
  assertOriginalShape('POST /persons/{person_id}/consent/gdpr', 201, r.body);
  const added = expectResult<{ consents: Consent[] }>(r, 201);
  assert.deepEqual(added.consents.map((x) => x.consent_level), ['necessary', 'analytics']);
  assert.equal(added.consents[0]?.created_at, first.consents[0]?.created_at);
  assert.deepEqual(expectResult(await c.get(path), 200), added);

  // Adding levels held already changes nothing and still answers the set.
  const offset = server.service.registry.get(c.orgId)?.state.offset;
  assert.deepEqual(expectResult(await c.post(path, { consent_levels: ['analytics'] }), 201), added);
  assert.equal(server.service.registry.get(c.orgId)?.state.offset, offset);
});

test('the added levels reach the event stream as GdprConsentsChanged with the old and new sets', async () => {
  const c = server.client;
  const id = expectResult(await c.post('/persons', email('consent-events@example.com')), 201).person_id as string;
  const sub = await Subscriber.open(server.base, { org: c.orgId, key: c.apiKey, query: { types: 'GdprConsentsChanged_v1' } });
  try {
    await c.put(`/persons/${id}/consent/gdpr`, { consent_levels: ['necessary'] });
    const added = expectResult<{ consents: Consent[] }>(await c.post(`/persons/${id}/consent/gdpr`, { consent_levels: ['marketing'] }), 201);
    await sub.waitForCount(2);
    const ev = sub.frames[1]?.event;
    assert.equal(ev.person_id, id);
    assert.deepEqual(ev.new_gdpr_consents, added.consents);
    assert.deepEqual(ev.old_gdpr_consents, sub.frames[0]?.event.new_gdpr_consents);
  } finally {
    await sub.close();
  }
});

test('refusals: an unknown level or person, a missing body field; nothing changes', async () => {
  const c = server.client;
  const id = expectResult(await c.post('/persons', email('consent-refused@example.com')), 201).person_id as string;
  const path = `/persons/${id}/consent/gdpr`;
  await c.put(path, { consent_levels: ['tracking'] });
  const before = expectResult(await c.get(path), 200);
  await unchanged(c, async () => {
    expectError(await c.post(path, { consent_levels: ['everything'] }), 400, 'consent_levels[0]');
    expectError(await c.post(path, {}), 400, 'consent_levels');
    expectError(await c.post('/persons/nobody/consent/gdpr', { consent_levels: ['necessary'] }), 404, '"nobody"');
  }, server);
  assert.deepEqual(expectResult(await c.get(path), 200), before);
});
