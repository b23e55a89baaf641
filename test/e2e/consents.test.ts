import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { email, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

test('GDPR consents are replaced whole, keep created_at for kept levels, and emit GdprConsentsChanged', async () => {
  const c = server.client;
  const id = (await c.post('/persons', email('gdpr@example.com'))).body.result.person_id as string;
  const path = `/persons/${id}/consent/gdpr`;
  assert.deepEqual((await c.get(path)).body.result, { consents: [] });

  const first = await c.put(path, { consent_levels: ['necessary', 'analytics', 'necessary'] });
  assert.equal(first.status, 200);
  const levels = first.body.result.consents.map((x: { consent_level: string }) => x.consent_level);
  assert.deepEqual(levels, ['necessary', 'analytics']);
  const necessaryAt = first.body.result.consents[0].created_at as string;
  assert.match(necessaryAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);

  await new Promise((r) => setTimeout(r, 5));
  const second = await c.put(path, { consent_levels: ['necessary', 'marketing'] });
  assert.equal(second.body.result.consents[0].created_at, necessaryAt);
  assert.notEqual(second.body.result.consents[1].created_at, necessaryAt);

  const bad = await c.put(path, { consent_levels: ['everything'] });
  assert.equal(bad.status, 400);
  assert.match(bad.body.errors[0].message, /consent_levels\[0\].*must be one of none, necessary/);
  assert.deepEqual((await c.get(path)).body.result, second.body.result);

  assert.equal((await c.delete(path)).status, 204);
  assert.deepEqual((await c.get(path)).body.result, { consents: [] });
  assert.equal((await c.get(`/persons/nobody/consent/gdpr`)).status, 404);
});
