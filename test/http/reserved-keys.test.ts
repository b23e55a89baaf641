// Objects keyed by a caller's input refuse __proto__, constructor and prototype with a 400 naming the key,
// and change nothing; values below a key (an attribute's JSON) keep constructor and prototype exactly.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { email, removeDir, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let personId: string;
let webhookId: string;

before(async () => {
  server = await startTestServer();
  const p = await server.client.post('/persons', email('reserved@example.com'));
  assert.equal(p.status, 201, p.text);
  personId = p.body.result.person_id;
  const w = await server.client.post('/organizations/webhooks', { name: 'hook', target_url: 'https://hooks.example.com/x' });
  assert.equal(w.status, 201, w.text);
  webhookId = w.body.result.id;
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const KEYS = ['__proto__', 'constructor', 'prototype'];

/** A JSON object text with `key` as an own member: JSON.stringify of an object literal would lose __proto__. */
const member = (key: string, value: unknown) => `{${JSON.stringify(key)}:${JSON.stringify(value)}}`;

async function unchanged(path: string, act: () => Promise<{ status: number; text: string }>, message: RegExp): Promise<void> {
  const before = (await server.client.get(path)).text;
  const r = await act();
  assert.equal(r.status, 400, r.text);
  assert.match(r.text, message);
  assert.equal((await server.client.get(path)).text, before, 'nothing changed');
}

describe('webhook custom_headers', () => {
  for (const key of KEYS) {
    it(`${key}: 400 naming it on create and on change`, async () => {
      await unchanged('/organizations/webhooks', () => server.client.post('/organizations/webhooks', `{"name":"h2","target_url":"https://hooks.example.com/y","custom_headers":${member(key, ['1'])}}`), new RegExp(`custom_headers: \\\\"${key}\\\\" is a reserved name`));
      await unchanged(`/organizations/webhooks/${webhookId}`, () => server.client.patch(`/organizations/webhooks/${webhookId}`, `{"custom_headers":${member(key, ['1'])}}`), new RegExp(`\\\\"${key}\\\\" is a reserved name`));
    });
  }
});

describe('attribute names', () => {
  for (const key of KEYS) {
    it(`${key}: 400 naming it, for the organization and for a person, and in POST /persons`, async () => {
      await unchanged('/organizations/attributes/end_user_read_write', () => server.client.put('/organizations/attributes/end_user_read_write', member(key, 1)), new RegExp(`attribute name \\\\"${key}\\\\" is reserved`));
      await unchanged(`/persons/${personId}/attributes`, () => server.client.put(`/persons/${personId}/attributes/end_user_read_write`, member(key, 1)), new RegExp(`attribute name \\\\"${key}\\\\" is reserved`));
      await unchanged('/persons', () => server.client.post('/persons', `{"handles":[{"type":"email_address","value":"x-${key}@example.com"}],"attributes":{"end_user_read_write":${member(key, 1)}}}`), new RegExp(`\\\\"${key}\\\\" is reserved`));
    });
  }

  it('constructor and prototype inside a value are kept exactly', async () => {
    const value = { nested: { constructor: 'c', prototype: ['p'] } };
    const r = await server.client.put(`/persons/${personId}/attributes/end_user_read_write`, { kept: value });
    assert.equal(r.status, 204, r.text);
    const back = await server.client.get(`/persons/${personId}/attributes/end_user_read_write`);
    assert.deepEqual(back.body.result, { kept: value });
    assert.ok(Object.hasOwn(back.body.result.kept.nested, 'constructor'));
  });
});

describe('custom claims and the groups claim name', () => {
  for (const key of KEYS) {
    it(`${key}: a custom claim is a 400 naming it; no token is minted`, async () => {
      const r = await server.client.post(`/persons/${personId}/mint-token`, `{"custom_claims":${member(key, 'x')}}`);
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, new RegExp(`custom_claims: \\\\"${key}\\\\" is a reserved claim name`));
    });

    it(`${key}: as groups_claim_name is a 400 naming it`, async () => {
      await unchanged('/organizations/config', () => server.client.patch('/organizations/config', { groups_claim_name: key }), new RegExp(`groups_claim_name: \\\\"${key}\\\\"`));
    });
  }
});
