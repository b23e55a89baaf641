// Assertions on the envelope of the contract: results, bare envelopes, 204s and errors that name the problem.
import assert from 'node:assert/strict';
import type { Client, Reply, TestServer } from './server.js';

function jsonType(r: Reply): void {
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/, `content-type of ${r.status}: ${r.text.slice(0, 200)}`);
}

/** A success envelope with a result (and possibly meta), nothing else; returns the result. */
export function expectResult<T = any>(r: Reply, status: number): T {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  jsonType(r);
  assert.equal(typeof r.body, 'object');
  assert.ok('result' in r.body, `no result in ${r.text.slice(0, 300)}`);
  for (const key of Object.keys(r.body)) assert.ok(key === 'result' || key === 'meta', `unexpected envelope key ${key}`);
  return r.body.result as T;
}

/** A bare envelope: JSON, no result, no errors. */
export function expectBare(r: Reply, status: number): void {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  jsonType(r);
  assert.deepEqual(r.body, {});
}

export function expectNoContent(r: Reply): void {
  assert.equal(r.status, 204, `expected 204, got ${r.status}: ${r.text.slice(0, 300)}`);
  assert.equal(r.text, '');
  assert.equal(r.headers.get('content-type'), null);
}

/** An error envelope with exactly one error whose httpcode is the status and whose message names each of `mentions`. */
export function expectError(r: Reply, status: number, ...mentions: Array<string | RegExp>): string {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  jsonType(r);
  assert.deepEqual(Object.keys(r.body), ['errors'], r.text);
  assert.equal(r.body.errors.length, 1);
  const [e] = r.body.errors;
  assert.deepEqual(Object.keys(e).sort(), ['httpcode', 'message']);
  assert.equal(e.httpcode, status);
  assert.equal(typeof e.message, 'string');
  for (const m of mentions) {
    if (typeof m === 'string') assert.ok(e.message.includes(m), `message "${e.message}" does not mention "${m}"`);
    else assert.match(e.message, m);
  }
  return e.message as string;
}

/**
 * Everything an organization holds, read back over HTTP: persons with handles, groups and attributes,
 * groups with their details and members, and the organization's attributes in every bucket.
 */
export async function readAll(client: Client): Promise<unknown> {
  const persons = expectResult<any[]>(await client.get('/persons?limit=1000&fields=handles,groups,attributes'), 200);
  const names = expectResult<string[]>(await client.get('/groups'), 200);
  const groups = [];
  for (const name of names) {
    const g = expectResult(await client.get(`/groups/${encodeURIComponent(name)}`), 200);
    const members = expectResult(await client.get(`/groups/${encodeURIComponent(name)}/persons?limit=1000`), 200);
    groups.push({ ...g, members });
  }
  const buckets = expectResult<Array<{ name: string }>>(await client.get('/organizations/attribute-buckets'), 200);
  const attributes: Record<string, unknown> = {};
  for (const b of buckets) attributes[b.name] = expectResult(await client.get(`/organizations/attributes/${b.name}`), 200);
  const organization = expectResult(await client.get('/organizations'), 200);
  const config = expectResult(await client.get('/organizations/config'), 200);
  const webhooks = [];
  for (const w of expectResult<Array<{ id: string }>>(await client.get('/organizations/webhooks'), 200)) {
    webhooks.push({ ...w, triggers: expectResult(await client.get(`/organizations/webhooks/${w.id}/triggers`), 200) });
  }
  const rbac = {
    permissions: await Promise.all(expectResult<string[]>(await client.get('/rbac/permissions?limit=1000'), 200).map(async (n) => expectResult(await client.get(`/rbac/permissions/${encodeURIComponent(n)}`), 200))),
    roles: await Promise.all(expectResult<string[]>(await client.get('/rbac/roles?limit=1000'), 200).map(async (n) => expectResult(await client.get(`/rbac/roles/${encodeURIComponent(n)}`), 200))),
    persons: await Promise.all(persons.map(async (p) => ({
      roles: expectResult(await client.get(`/persons/${p.person_id}/roles`), 200),
      additional_permissions: expectResult(await client.get(`/persons/${p.person_id}/additional-permissions`), 200),
    }))),
  };
  const sso_credentials = expectResult(await client.get('/organizations/sso/oidc/provider-credentials'), 200);
  const oauth_clients = expectResult(await client.get('/oauth2/clients'), 200);
  return { organization, config, persons, groups, attributes, webhooks, rbac, sso_credentials, oauth_clients };
}

/** The WAL offset of every organization: a write of any kind moves one. */
export function offsets(server: TestServer): Record<string, number> {
  return Object.fromEntries([...server.service.registry.all()].map((a) => [a.id, a.state.offset]));
}

/**
 * Runs `act` and asserts that the organization reads back exactly as before and, given the server, that
 * no organization's WAL moved.
 */
export async function unchanged<T>(client: Client, act: () => Promise<T>, server?: TestServer): Promise<T> {
  const before = await readAll(client);
  const walBefore = server && offsets(server);
  const out = await act();
  if (server) assert.deepEqual(offsets(server), walBefore, 'a WAL entry was written');
  assert.deepEqual(await readAll(client), before, 'the organization changed');
  return out;
}
