// AWS IAM role changes through the service against a real moto_server: each event's fields against what
// GetRole and friends then return, our validation refusing before anything reaches the provider, the
// provider's refusals with nothing recorded, and credentials never returned, logged or stored plain.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreatePolicyCommand, CreateAccessKeyCommand, CreateUserCommand, GetRoleCommand, GetRolePolicyCommand, IAMClient, ListAttachedRolePoliciesCommand, ListRolePoliciesCommand, ListRolesCommand, CreateInstanceProfileCommand, AddRoleToInstanceProfileCommand } from '@aws-sdk/client-iam';
import { findMotoServer, MOTO_MISSING, startMoto, type Moto } from '../support/moto.js';
import { loggedEvents, removeDir, startTestServer, type TestServer } from '../support/server.js';

const ACCOUNT = '123456789012';
const ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY-unique-4e1f';
const SECRETS_KEY = '11'.repeat(32);
const trust = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }] });
const policy = (action: string) => JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: action, Resource: '*' }] });

function iamOf(moto: Moto): IAMClient {
  const client = new IAMClient({ endpoint: moto.url, region: 'us-east-1', credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: 'x' } });
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers['x-moto-account-id'] = ACCOUNT;
      return next(args);
    },
    { step: 'build' },
  );
  return client;
}

const skip = findMotoServer() ? false : MOTO_MISSING;

describe('AWS IAM roles through the service, against moto', { skip }, () => {
  let moto: Moto;
  let server: TestServer;
  let iam: IAMClient;
  let conn: string;
  const logged: string[] = [];

  const events = (name?: string) => loggedEvents(server, name).filter((e) => (e['event_metadata'] as { event_name: string }).event_name.startsWith('AWSIAM'));
  const rolesAtProvider = async () => ((await iam.send(new ListRolesCommand({}))).Roles ?? []).map((r) => r.RoleName);
  const roles = (path = '') => `/cloud/connections/${conn}/aws/roles${path}`;

  before(async () => {
    moto = await startMoto();
    iam = iamOf(moto);
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_SECRETS_KEY: SECRETS_KEY, SERVICE_CLOUD_SNAPSHOT_INTERVAL: '0', SERVICE_BILLING_INTERVAL: '0' }, { log: (m) => logged.push(m), warn: (m) => logged.push(m) });
    const r = await server.client.post('/cloud/connections', { name: 'sandbox', type: 'aws', config: { account_id: ACCOUNT, endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } });
    assert.equal(r.status, 201, r.text);
    conn = r.body.result.connection_id;
  });
  after(async () => {
    await server?.stop();
    await moto?.stop();
    if (server) removeDir(server.dataDir);
  });
  beforeEach(async () => {
    for (const name of await rolesAtProvider()) await server.client.delete(roles(`/${name}`));
  });

  test('a connection is answered without its credentials, which are sealed at rest and never logged', async () => {
    const got = await server.client.get(`/cloud/connections/${conn}`);
    assert.equal(got.status, 200);
    assert.deepEqual(Object.keys(got.body.result).sort(), ['config', 'connection_id', 'created', 'name', 'region', 'type']);
    assert.deepEqual(got.body.result.config, { account_id: ACCOUNT, endpoint: moto.url });
    const list = await server.client.get('/cloud/connections');
    assert.equal(list.body.result.length, 1);
    assert.ok(!list.text.includes(SECRET));
    assert.ok(!logged.some((m) => m.includes(SECRET)));
    const files = readdirSync(server.dataDir, { recursive: true }) as string[];
    for (const f of files) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(server.dataDir, f));
      } catch {
        continue;
      }
      assert.ok(!bytes.includes(SECRET), `${f} holds the secret in the clear`);
    }
  });

  test('a connection that fails its test, or is malformed, is refused and not stored', async () => {
    const dead = await server.client.post('/cloud/connections', { name: 'x', type: 'aws', config: { account_id: ACCOUNT, endpoint: 'http://127.0.0.1:9' }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } });
    assert.equal(dead.status, 400);
    assert.match(dead.body.errors[0].message, /connection test failed/);
    const badAccount = await server.client.post('/cloud/connections', { name: 'x', type: 'aws', config: { account_id: '12', endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } });
    assert.equal(badAccount.status, 400);
    assert.match(badAccount.body.errors[0].message, /account_id/);
    const noSecret = await server.client.post('/cloud/connections', { name: 'x', type: 'aws', config: { account_id: ACCOUNT, endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY } });
    assert.equal(noSecret.status, 400);
    assert.match(noSecret.body.errors[0].message, /secret_access_key/);
    const gcp = await server.client.post('/cloud/connections', { name: 'x', type: 'gcp', config: { project_id: 'p' }, credentials: { service_account_key: {} } });
    assert.equal(gcp.status, 400);
    assert.match(gcp.body.errors[0].message, /project_id/);
    const region = await server.client.post('/cloud/connections', { name: 'x', type: 'aws', region: 'mars-base', config: { account_id: ACCOUNT, endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } });
    assert.equal(region.status, 400);
    assert.match(region.body.errors[0].message, /mars-base/);
    assert.equal((await server.client.get('/cloud/connections')).body.result.length, 1);
  });

  test('CreateRole: AWSIAMRoleCreated_v1 carries what GetRole and the policy lists then return', async () => {
    // a policy under a path: its name is the ARN's last segment
    const managed = await iam.send(new CreatePolicyCommand({ PolicyName: 'ReadOnly', Path: '/team/', PolicyDocument: policy('s3:GetObject') }));
    const boundary = await iam.send(new CreatePolicyCommand({ PolicyName: 'Boundary', PolicyDocument: policy('s3:*') }));
    const r = await server.client.post(roles(), {
      role_name: 'app-reader',
      path: '/apps/',
      description: 'reads objects',
      assume_role_policy_doc: trust,
      inline_policies: [{ policy_name: 'list', policy_document: policy('s3:ListBucket') }],
      attached_managed_policies: [managed.Policy?.Arn],
      permissions_boundary: { permissions_boundary_arn: boundary.Policy?.Arn },
      max_session_duration: 7200,
      tags: [{ key: 'team', value: 'data' }],
    });
    assert.equal(r.status, 201, r.text);
    const [event] = events('AWSIAMRoleCreated_v1');
    assert.ok(event);
    const role = (await iam.send(new GetRoleCommand({ RoleName: 'app-reader' }))).Role!;
    const inline = await iam.send(new GetRolePolicyCommand({ RoleName: 'app-reader', PolicyName: 'list' }));
    const attached = await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: 'app-reader' }));
    assert.equal(event['account_id'], ACCOUNT);
    assert.equal(event['role_name'], role.RoleName);
    assert.equal(event['role_arn'], role.Arn);
    assert.equal(event['role_arn'], `arn:aws:iam::${ACCOUNT}:role/apps/app-reader`);
    assert.equal(event['role_path'], role.Path);
    assert.equal(event['role_id'], role.RoleId);
    assert.equal(event['description'], role.Description);
    assert.equal(event['max_session_duration'], role.MaxSessionDuration);
    assert.deepEqual(JSON.parse(event['assume_role_policy_doc'] as string), JSON.parse(trust));
    assert.deepEqual(event['inline_policies'], [{ policy_name: 'list', policy_document: decodeURIComponent(inline.PolicyDocument!) }]);
    assert.deepEqual(event['attached_managed_policies'], attached.AttachedPolicies!.map((p) => ({ policy_name: p.PolicyName, policy_arn: p.PolicyArn })));
    assert.deepEqual(event['permissions_boundary'], { permissions_boundary_arn: boundary.Policy?.Arn, permissions_boundary_type: role.PermissionsBoundary?.PermissionsBoundaryType ?? '' });
    assert.deepEqual(event['tags'], [{ key: 'team', value: 'data' }]);
    assert.equal(Date.parse(event['created_at'] as string), role.CreateDate!.getTime());
    assert.equal((event['event_metadata'] as { source: string }).source, 'Cloud');
    assert.equal(r.body.result.role_arn, role.Arn);
    assert.ok(!JSON.stringify(events()).includes(SECRET));
    // where the change's time went, by phase
    const metrics = (await server.client.get('/metrics')).text;
    for (const phase of ['queue', 'provider', 'commit']) assert.match(metrics, new RegExp(`^cloud_change_phase_seconds_count\\{phase="${phase}"\\} [1-9]`, 'm'));
  });

  test('our validation refuses bad names, paths, durations and policy JSON before anything reaches the provider', async () => {
    const before = events().length;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ role_name: 'bad name!', assume_role_policy_doc: trust }, /role_name/],
      [{ role_name: 'r', path: 'no-slashes', assume_role_policy_doc: trust }, /path/],
      [{ role_name: 'r', max_session_duration: 60, assume_role_policy_doc: trust }, /max_session_duration/],
      [{ role_name: 'r', assume_role_policy_doc: '{not json' }, /assume_role_policy_doc: not valid JSON/],
      [{ role_name: 'r', assume_role_policy_doc: policy('s3:*') }, /Principal/],
      [{ role_name: 'r', assume_role_policy_doc: trust, inline_policies: [{ policy_name: 'p', policy_document: '[]' }] }, /inline_policies\[0\]/],
      [{ role_name: 'r', assume_role_policy_doc: trust, attached_managed_policies: ['not-an-arn'] }, /attached_managed_policies\[0\]/],
      [{ role_name: 'r', assume_role_policy_doc: trust, tags: [{ key: 'aws:x', value: 'v' }] }, /reserved/],
    ];
    for (const [body, message] of cases) {
      const r = await server.client.post(roles(), body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0].message, message);
    }
    assert.deepEqual(await rolesAtProvider(), []);
    assert.equal(events().length, before);
  });

  test("the provider's refusals name its error code, and nothing is recorded or left behind", async () => {
    assert.equal((await server.client.post(roles(), { role_name: 'taken', assume_role_policy_doc: trust })).status, 201);
    const before = events().length;
    const again = await server.client.post(roles(), { role_name: 'taken', assume_role_policy_doc: trust });
    assert.equal(again.status, 409);
    assert.match(again.body.errors[0].message, /EntityAlreadyExistsException/);
    const missing = await server.client.post(roles(), { role_name: 'half', assume_role_policy_doc: trust, attached_managed_policies: [`arn:aws:iam::${ACCOUNT}:policy/DoesNotExist`] });
    assert.equal(missing.status, 404);
    assert.match(missing.body.errors[0].message, /NoSuchEntityException/);
    assert.deepEqual(await rolesAtProvider(), ['taken']);
    const absent = await server.client.put(roles('/nobody/assume-role-policy'), { assume_role_policy_doc: trust });
    assert.equal(absent.status, 404);
    assert.match(absent.body.errors[0].message, /NoSuchEntity/);
    assert.equal(events().length, before);
  });

  test('inline, managed, trust and boundary changes: each event holds the policies as the provider now has them', async () => {
    assert.equal((await server.client.post(roles(), { role_name: 'worker', assume_role_policy_doc: trust, inline_policies: [{ policy_name: 'a', policy_document: policy('s3:GetObject') }, { policy_name: 'b', policy_document: policy('sqs:*') }] })).status, 201);
    const inline = await server.client.put(roles('/worker/inline-policies'), { inline_policies: [{ policy_name: 'a', policy_document: policy('s3:PutObject') }, { policy_name: 'c', policy_document: policy('sns:*') }] });
    assert.equal(inline.status, 200, inline.text);
    const names = (await iam.send(new ListRolePoliciesCommand({ RoleName: 'worker' }))).PolicyNames;
    assert.deepEqual([...names!].sort(), ['a', 'c']);
    const [ie] = events('AWSIAMRoleInlinePoliciesUpdated_v1').slice(-1);
    assert.deepEqual((ie!['inline_policies'] as Array<{ policy_name: string; policy_document: string }>).map((p) => [p.policy_name, JSON.parse(p.policy_document).Statement[0].Action]), [['a', 's3:PutObject'], ['c', 'sns:*']]);

    const p1 = await iam.send(new CreatePolicyCommand({ PolicyName: 'P1', PolicyDocument: policy('ec2:Describe*') }));
    const p2 = await iam.send(new CreatePolicyCommand({ PolicyName: 'P2', PolicyDocument: policy('ec2:Start*') }));
    assert.equal((await server.client.put(roles('/worker/managed-policies'), { attached_managed_policies: [p1.Policy!.Arn, p2.Policy!.Arn] })).status, 200);
    assert.equal((await server.client.put(roles('/worker/managed-policies'), { attached_managed_policies: [p2.Policy!.Arn] })).status, 200);
    const attached = (await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: 'worker' }))).AttachedPolicies!;
    assert.deepEqual(attached.map((p) => p.PolicyArn), [p2.Policy!.Arn]);
    assert.deepEqual(events('AWSIAMRoleManagedPoliciesUpdated_v1').slice(-1)[0]!['attached_managed_policies'], [{ policy_name: 'P2', policy_arn: p2.Policy!.Arn }]);

    const trust2 = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }] });
    assert.equal((await server.client.put(roles('/worker/assume-role-policy'), { assume_role_policy_doc: trust2 })).status, 200);
    const role = (await iam.send(new GetRoleCommand({ RoleName: 'worker' }))).Role!;
    assert.deepEqual(JSON.parse(decodeURIComponent(role.AssumeRolePolicyDocument!)), JSON.parse(trust2));
    assert.deepEqual(JSON.parse(events('AWSIAMRoleAssumeRolePolicyUpdated_v1').slice(-1)[0]!['assume_role_policy_doc'] as string), JSON.parse(trust2));

    assert.equal((await server.client.put(roles('/worker/permissions-boundary'), { permissions_boundary_arn: p1.Policy!.Arn })).status, 200);
    const bounded = (await iam.send(new GetRoleCommand({ RoleName: 'worker' }))).Role!;
    assert.equal(bounded.PermissionsBoundary?.PermissionsBoundaryArn, p1.Policy!.Arn);
    assert.equal((events('AWSIAMRolePermissionsBoundaryUpdated_v1').slice(-1)[0]!['permissions_boundary'] as { permissions_boundary_arn: string }).permissions_boundary_arn, p1.Policy!.Arn);
    assert.equal((await server.client.delete(roles('/worker/permissions-boundary'))).status, 204);
    assert.equal((await iam.send(new GetRoleCommand({ RoleName: 'worker' }))).Role!.PermissionsBoundary, undefined);
    assert.deepEqual(events('AWSIAMRolePermissionsBoundaryUpdated_v1').slice(-1)[0]!['permissions_boundary'], { permissions_boundary_arn: '', permissions_boundary_type: '' });
  });

  test('a role with attached and inline policies and an instance profile is deleted: AWSIAMRoleDeleted_v1', async () => {
    const p = await iam.send(new CreatePolicyCommand({ PolicyName: 'ForDeletion', PolicyDocument: policy('s3:*') }));
    assert.equal((await server.client.post(roles(), { role_name: 'doomed', assume_role_policy_doc: trust, inline_policies: [{ policy_name: 'i', policy_document: policy('s3:*') }], attached_managed_policies: [p.Policy!.Arn] })).status, 201);
    await iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: 'doomed-profile' }));
    await iam.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName: 'doomed-profile', RoleName: 'doomed' }));
    const r = await server.client.delete(roles('/doomed'));
    assert.equal(r.status, 204, r.text);
    await assert.rejects(iam.send(new GetRoleCommand({ RoleName: 'doomed' })), (e: Error) => e.name === 'NoSuchEntityException');
    const [deleted] = events('AWSIAMRoleDeleted_v1').slice(-1);
    assert.deepEqual({ account_id: deleted!['account_id'], role_name: deleted!['role_name'] }, { account_id: ACCOUNT, role_name: 'doomed' });
  });

  test('a snapshot on request counts users, roles and access keys of the account', async () => {
    assert.equal((await server.client.post(roles(), { role_name: 'one', assume_role_policy_doc: trust })).status, 201);
    assert.equal((await server.client.post(roles(), { role_name: 'two', assume_role_policy_doc: trust })).status, 201);
    await iam.send(new CreateUserCommand({ UserName: `alice-${Date.now()}` }));
    const bob = `bob-${Date.now()}`;
    await iam.send(new CreateUserCommand({ UserName: bob }));
    await iam.send(new CreateAccessKeyCommand({ UserName: bob }));
    const r = await server.client.post(`/cloud/connections/${conn}/snapshots`);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.result.non_human_identities, (await rolesAtProvider()).length);
    assert.ok(r.body.result.user_identities >= 2);
    assert.ok(r.body.result.credentials >= 1);
    assert.ok(!Number.isNaN(Date.parse(r.body.result.snapshot_timestamp)));
  });

  test('a connection is renamed and deleted; changes through a deleted one are 404', async () => {
    const made = await server.client.post('/cloud/connections', { name: 'temp', type: 'aws', config: { account_id: '210987654321', endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } });
    assert.equal(made.status, 201);
    const id = made.body.result.connection_id;
    const renamed = await server.client.patch(`/cloud/connections/${id}`, { name: 'renamed' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.result.name, 'renamed');
    assert.equal((await server.client.delete(`/cloud/connections/${id}`)).status, 204);
    assert.equal((await server.client.get(`/cloud/connections/${id}`)).status, 404);
    assert.equal((await server.client.post(`/cloud/connections/${id}/aws/roles`, { role_name: 'x', assume_role_policy_doc: trust })).status, 404);
  });

  test("a connection's client is reused, and built anew once its config changes: the next change reaches the new account", async () => {
    const other = '345678901234';
    const made = await server.client.post('/cloud/connections', { name: 'moving', type: 'aws', config: { account_id: ACCOUNT, endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } });
    assert.equal(made.status, 201, made.text);
    const id = made.body.result.connection_id;
    const create = (name: string) => server.client.post(`/cloud/connections/${id}/aws/roles`, { role_name: name, assume_role_policy_doc: trust });
    assert.equal((await create('before-move')).status, 201);
    assert.equal((await create('before-move-2')).status, 201);
    const moved = await server.client.patch(`/cloud/connections/${id}`, { config: { account_id: other, endpoint: moto.url } });
    assert.equal(moved.status, 200, moved.text);
    const after = await create('after-move');
    assert.equal(after.status, 201, after.text);
    assert.match(after.body.result.role_arn, new RegExp(`^arn:aws:iam::${other}:role/after-move$`));
    const first = ((await iam.send(new ListRolesCommand({}))).Roles ?? []).map((r) => r.RoleName).sort();
    assert.deepEqual(first, ['before-move', 'before-move-2']);
    assert.equal((await server.client.delete(`/cloud/connections/${id}/aws/roles/after-move`)).status, 204);
    assert.equal((await server.client.delete(`/cloud/connections/${id}`)).status, 204);
  });
});
