// The success answers of the original's operations we serve, checked against its OpenAPI shapes
// (test/fixtures/original-openapi.json): a client generated from that document reads them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startTestServer, tempDir, type Reply, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, type Org } from '../support/auth.js';
import { assertOriginalShape, original } from '../support/original.js';

let server: TestServer;
let org: Org;
let person: string;
const dir = tempDir();

before(async () => {
  server = await startTestServer({}, {}, dir);
  org = await newOrg(server, 'shapes');
  person = await personWithPassword(org, 'ada@example.com', 'correct horse battery staple');
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

/** Calls an operation and checks its answer against the original's shape for that status. */
async function conforms(operation: string, status: number, call: () => Promise<Reply>): Promise<Reply> {
  const r = await call();
  assert.equal(r.status, status, `${operation}: ${r.text}`);
  assertOriginalShape(operation, r.status, r.body ?? null);
  return r;
}

describe(`success answers match ${original.document}`, () => {
  test('persons and their handles, groups and attributes', async () => {
    const a = org.admin;
    await conforms('POST /persons', 201, () => a.post('/persons', { handles: [{ type: 'username', value: 'grace' }], attributes: { end_user_read_write: { color: 'teal' } } }));
    await conforms('GET /persons', 200, () => a.get('/persons'));
    await conforms('GET /persons/{person_id}', 200, () => a.get(`/persons/${person}`));
    await conforms('PATCH /persons/{person_id}', 200, () => a.patch(`/persons/${person}`, { active: true }));
    await conforms('POST /persons/{person_id}/handles', 204, () => a.post(`/persons/${person}/handles`, [{ type: 'username', value: 'ada' }]));
    await conforms('GET /persons/{person_id}/handles', 200, () => a.get(`/persons/${person}/handles`));
    await conforms('DELETE /persons/{person_id}/handles/{handle}', 204, () => a.delete(`/persons/${person}/handles/${encodeURIComponent('username:ada')}`));
    await conforms('POST /groups', 201, () => a.post('/groups', { name: 'admins', description: 'the administrators' }));
    await conforms('GET /groups', 200, () => a.get('/groups'));
    await conforms('GET /groups/{group_name}', 200, () => a.get('/groups/admins'));
    await conforms('PUT /persons/{person_id}/groups', 200, () => a.put(`/persons/${person}/groups`, { groups: ['admins'] }));
    await conforms('GET /persons/{person_id}/groups', 200, () => a.get(`/persons/${person}/groups`));
    await conforms('GET /groups/{group_name}/persons', 200, () => a.get('/groups/admins/persons'));
    await conforms('PUT /persons/{person_id}/attributes/{bucket_name}', 204, () => a.put(`/persons/${person}/attributes/end_user_read_write`, { color: 'red' }));
    await conforms('GET /persons/{person_id}/attributes/{bucket_name}', 200, () => a.get(`/persons/${person}/attributes/end_user_read_write`));
    await conforms('GET /persons/{person_id}/attributes', 200, () => a.get(`/persons/${person}/attributes`));
    await conforms('PUT /organizations/attributes/{bucket_name}', 204, () => a.put('/organizations/attributes/end_user_read_only', { plan: 'gold' }));
    await conforms('GET /organizations/attributes/{bucket_name}', 200, () => a.get('/organizations/attributes/end_user_read_only'));
    await conforms('GET /organizations/attribute-buckets', 200, () => a.get('/organizations/attribute-buckets'));
    await conforms('PUT /persons/{person_id}/consent/gdpr', 200, () => a.put(`/persons/${person}/consent/gdpr`, { consent_levels: ['analytics'] }));
    await conforms('GET /persons/{person_id}/consent/gdpr', 200, () => a.get(`/persons/${person}/consent/gdpr`));
  });

  test('tokens: mint, validate, revoke; the token template', async () => {
    const a = org.admin;
    const minted = await conforms('POST /persons/{person_id}/mint-token', 201, () => a.post(`/persons/${person}/mint-token`));
    await conforms('POST /token/validate', 200, () => a.post('/token/validate', { token: minted.body.result }));
    await conforms('POST /token/revoke', 204, () => a.post('/token/revoke', { token: minted.body.result }));
    await conforms('PUT /organizations/config/token-template', 204, () => a.put('/organizations/config/token-template', { content: '{"tier": "gold"}' }));
    await conforms('GET /organizations/config/token-template', 200, () => a.get('/organizations/config/token-template'));
  });

  test('roles and permissions', async () => {
    const a = org.admin;
    await conforms('POST /rbac/permissions', 204, () => a.post('/rbac/permissions', { name: 'docs.read', description: 'read the docs' }));
    await conforms('GET /rbac/permissions', 200, () => a.get('/rbac/permissions'));
    await conforms('GET /rbac/permissions/{permission_name}', 200, () => a.get('/rbac/permissions/docs.read'));
    await conforms('POST /rbac/roles', 204, () => a.post('/rbac/roles', { name: 'reader', description: 'reads', permissions: ['docs.read'] }));
    await conforms('GET /rbac/roles', 200, () => a.get('/rbac/roles'));
    await conforms('GET /rbac/roles/{role_name}', 200, () => a.get('/rbac/roles/reader'));
    await conforms('PUT /persons/{person_id}/roles', 204, () => a.put(`/persons/${person}/roles`, { roles: ['reader'] }));
    await conforms('GET /persons/{person_id}/roles', 200, () => a.get(`/persons/${person}/roles`));
    await conforms('GET /persons/{person_id}/permissions', 200, () => a.get(`/persons/${person}/permissions`));
    await conforms('POST /rbac/check', 200, () => a.post('/rbac/check', { person_id: person, permission_name: 'docs.read' }));
  });

  test('the organization, its configuration, webhooks and OAuth clients', async () => {
    const a = org.admin;
    await conforms('GET /organizations', 200, () => a.get('/organizations'));
    await conforms('GET /organizations/config', 200, () => a.get('/organizations/config'));
    await conforms('GET /organizations/suborganizations', 200, () => a.get('/organizations/suborganizations'));
    const hook = await conforms('POST /organizations/webhooks', 201, () => a.post('/organizations/webhooks', { name: 'audit', target_url: 'https://hooks.example/audit' }));
    const id = hook.body.result.id as string;
    await conforms('GET /organizations/webhooks', 200, () => a.get('/organizations/webhooks'));
    await conforms('GET /organizations/webhooks/{webhook_id}', 200, () => a.get(`/organizations/webhooks/${id}`));
    await conforms('POST /organizations/webhooks/{webhook_id}/triggers', 201, () => a.post(`/organizations/webhooks/${id}/triggers`, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' }));
    await conforms('GET /organizations/webhooks/{webhook_id}/triggers', 200, () => a.get(`/organizations/webhooks/${id}/triggers`));
    await conforms('GET /organizations/webhooks/verification-jwks', 200, () => a.get('/organizations/webhooks/verification-jwks'));
    const client = await conforms('POST /oauth2/clients', 201, () => a.post('/oauth2/clients', { client_name: 'backend', scopes: ['openid'], grant_types: ['client_credentials'] }));
    const clientId = client.body.result.client_id as string;
    await conforms('GET /oauth2/clients', 200, () => a.get('/oauth2/clients'));
    await conforms('GET /oauth2/clients/{oauth_client_id}', 200, () => a.get(`/oauth2/clients/${clientId}`));
    await conforms('GET /.well-known/openid-configuration', 200, () => a.get('/.well-known/openid-configuration'));
    await conforms('GET /.well-known/jwks.json', 200, () => a.get('/.well-known/jwks.json'));
  });
});
