// GCP service accounts and policy bindings through the service, against a STAND-IN of Google's IAM and
// Resource Manager REST APIs (test/support/gcp-stand-in.ts: no local implementation of them exists): events
// against what the stand-in then holds, our validation first, Google's refusals with nothing recorded, and the
// setIamPolicy etag retry under a concurrent change.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { startGcpStandIn, type GcpStandIn } from '../support/gcp-stand-in.js';
import { loggedEvents, loggedFrom, removeDir, startTestServer, type TestServer } from '../support/server.js';

const PROJECT = 'sample-project';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KEY_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const KEY = { type: 'service_account', project_id: PROJECT, private_key_id: 'k1', private_key: KEY_PEM, client_email: `identity@${PROJECT}.iam.gserviceaccount.com`, token_uri: 'http://127.0.0.1:9/token' };

describe('GCP through the service, against a stand-in of the REST calls used', () => {
  let gcp: GcpStandIn;
  let server: TestServer;
  let conn: string;
  const events = (name: string) => loggedEvents(server, name);
  const cloudEvents = () => loggedFrom(server, 'Cloud');
  const at = (path: string) => `/cloud/connections/${conn}/gcp${path}`;

  before(async () => {
    gcp = await startGcpStandIn(PROJECT, KEY_PEM);
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_CLOUD_SNAPSHOT_INTERVAL: '0', SERVICE_BILLING_INTERVAL: '0' });
    const r = await server.client.post('/cloud/connections', { name: 'gcp', type: 'gcp', config: { project_id: PROJECT, endpoint: gcp.url }, credentials: { service_account_key: KEY } });
    assert.equal(r.status, 201, r.text);
    conn = r.body.result.connection_id;
  });
  after(async () => {
    await server?.stop();
    await gcp?.stop();
    if (server) removeDir(server.dataDir);
  });

  test('a key the project does not accept fails the connection test', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const r = await server.client.post('/cloud/connections', { name: 'bad', type: 'gcp', config: { project_id: PROJECT, endpoint: gcp.url }, credentials: { service_account_key: { ...KEY, private_key: other } } });
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0].message, /UNAUTHENTICATED/);
    assert.ok(!r.text.includes('PRIVATE KEY'));
  });

  test('service account create: GCPServiceAccountCreated_v1 carries what the provider answered', async () => {
    const r = await server.client.post(at('/service-accounts'), { account_id: 'builder-01', display_name: 'Builder', description: 'CI' });
    assert.equal(r.status, 201, r.text);
    const [account] = gcp.accounts();
    const [e] = events('GCPServiceAccountCreated_v1');
    assert.deepEqual(
      { project_id: e!['project_id'], name: e!['name'], email: e!['email'], unique_id: e!['unique_id'], display_name: e!['display_name'], description: e!['description'], oauth2_client_id: e!['oauth2_client_id'], etag: e!['etag'] },
      { project_id: PROJECT, name: account!['name'], email: account!['email'], unique_id: account!['uniqueId'], display_name: 'Builder', description: 'CI', oauth2_client_id: account!['oauth2ClientId'], etag: account!['etag'] },
    );
    const again = await server.client.post(at('/service-accounts'), { account_id: 'builder-01' });
    assert.equal(again.status, 409);
    assert.match(again.body.errors[0].message, /ALREADY_EXISTS/);
    assert.equal(events('GCPServiceAccountCreated_v1').length, 1);
  });

  test('bindings: validated by us, written with the etag, retried once another writer changed the policy', async () => {
    const before = cloudEvents();
    for (const [body, message] of [
      [{ bindings: [{ role: 'viewer' }] }, /role/],
      [{ bindings: [{ role: 'roles/viewer', condition: { expression: 'request.time < timestamp("2030-01-01T00:00:00Z"', title: 't' } }] }, /unbalanced/],
    ] as const) {
      const r = await server.client.put(at('/principals/user:alice@example.com/bindings'), body);
      assert.equal(r.status, 400);
      assert.match(r.body.errors[0].message, message);
    }
    assert.equal((await server.client.put(at('/principals/alice@example.com/bindings'), { bindings: [] })).status, 400);
    assert.equal(cloudEvents(), before);
    assert.equal(gcp.setCalls(), 0, 'nothing reached the provider');

    gcp.onceBeforeSet((p) => p.bindings.push({ role: 'roles/owner', members: ['user:owner@example.com'] }));
    const condition = { expression: 'request.time < timestamp("2030-01-01T00:00:00Z")', title: 'until 2030', description: 'temporary' };
    const r = await server.client.put(at('/principals/user:alice@example.com/bindings'), { bindings: [{ role: 'roles/viewer' }, { role: 'roles/storage.admin', condition }] });
    assert.equal(r.status, 200, r.text);
    assert.equal(gcp.setCalls(), 2, 'the first write met a concurrent change and was retried');
    const policy = gcp.policy();
    assert.equal(policy.version, 3);
    assert.ok(policy.bindings.some((b) => b.role === 'roles/owner' && b.members.includes('user:owner@example.com')), "the other writer's change is kept");
    const alice = policy.bindings.filter((b) => b.members.includes('user:alice@example.com')).map((b) => b.role).sort();
    assert.deepEqual(alice, ['roles/storage.admin', 'roles/viewer']);
    const [e] = events('GCPIAMPolicyBindingUpdated_v1');
    assert.equal(e!['principal'], 'user:alice@example.com');
    assert.deepEqual(e!['bindings'], [{ role: 'roles/viewer' }, { role: 'roles/storage.admin', condition: { ...condition, location: '' } }]);

    assert.equal((await server.client.put(at('/principals/user:alice@example.com/bindings'), { bindings: [] })).status, 200);
    assert.ok(!gcp.policy().bindings.some((b) => b.members.includes('user:alice@example.com')));
    assert.deepEqual(events('GCPIAMPolicyBindingUpdated_v1')[1]!['bindings'], []);
  });

  test('a snapshot counts user: members, service accounts and their keys', async () => {
    await server.client.put(at('/principals/user:bob@example.com/bindings'), { bindings: [{ role: 'roles/viewer' }] });
    const r = await server.client.post(`/cloud/connections/${conn}/snapshots`);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual([r.body.result.user_identities, r.body.result.non_human_identities, r.body.result.credentials], [2, 1, 0]);
  });

  test('service account delete: GCPServiceAccountDeleted_v1; a missing one is 404 NOT_FOUND', async () => {
    const email = `builder-01@${PROJECT}.iam.gserviceaccount.com`;
    assert.equal((await server.client.delete(at(`/service-accounts/${email}`))).status, 204);
    assert.deepEqual(gcp.accounts(), []);
    const [e] = events('GCPServiceAccountDeleted_v1');
    assert.deepEqual({ project_id: e!['project_id'], service_account_email: e!['service_account_email'] }, { project_id: PROJECT, service_account_email: email });
    const missing = await server.client.delete(at(`/service-accounts/${email}`));
    assert.equal(missing.status, 404);
    assert.match(missing.body.errors[0].message, /NOT_FOUND/);
  });
});
