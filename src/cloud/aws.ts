// AWS IAM through @aws-sdk/client-iam: the client of a connection, and each role change of API.md's table
// made at the provider and then read back, so that the event carries the provider's answer (ARN, role id,
// creation time, the policies as they now are).
import {
  AttachRolePolicyCommand,
  CreateRoleCommand,
  DeleteRoleCommand,
  DeleteRolePermissionsBoundaryCommand,
  DeleteRolePolicyCommand,
  DetachRolePolicyCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  IAMClient,
  ListAccessKeysCommand,
  ListAttachedRolePoliciesCommand,
  ListInstanceProfilesForRoleCommand,
  ListRolePoliciesCommand,
  ListRolesCommand,
  ListUsersCommand,
  PutRolePermissionsBoundaryCommand,
  PutRolePolicyCommand,
  RemoveRoleFromInstanceProfileCommand,
  UpdateAssumeRolePolicyCommand,
  type Role,
} from '@aws-sdk/client-iam';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { guardedAgents, type Outbound } from '../lib/guarded-connect.js';
import { providerError } from './provider-error.js';
import type { InlinePolicy } from './aws-rules.js';

export interface AwsConfig {
  account_id: string;
  endpoint?: string;
  aws_region?: string;
}

export interface AwsCredentials {
  access_key_id: string;
  secret_access_key: string;
}

export interface RoleInput {
  role_name: string;
  path?: string;
  description?: string;
  assume_role_policy_doc: string;
  inline_policies?: InlinePolicy[];
  attached_managed_policies?: string[];
  permissions_boundary?: { permissions_boundary_arn: string };
  max_session_duration?: number;
  tags?: Array<{ key: string; value: string }>;
}

export type EventBody = Record<string, unknown>;

/**
 * One client per connection (src/cloud/connections.ts caches it): static credentials, the SDK's keep-alive
 * request handler, one retry. cacheMiddleware: each command class's middleware stack is resolved once, not on
 * every send (a tenth of the SDK's CPU per call); the stack is complete when the client is built.
 */
function guardedAgentsOf(outbound: Outbound) {
  const agents = guardedAgents(outbound.guard, { keepAlive: true });
  return { httpAgent: agents.http, httpsAgent: agents.https };
}

export function awsClient(config: AwsConfig, credentials: AwsCredentials, outbound: Outbound): IAMClient {
  const client = new IAMClient({
    // Agents of its own: destroying the client (a deleted connection, a finished test) destroys its handler's agents.
    requestHandler: new NodeHttpHandler(guardedAgentsOf(outbound)),
    region: config.aws_region ?? 'us-east-1',
    ...(config.endpoint && { endpoint: config.endpoint }),
    credentials: { accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key },
    maxAttempts: 2,
    cacheMiddleware: true,
  });
  // A stand-in endpoint (moto) keeps accounts apart by this header; AWS itself never sees it.
  if (config.endpoint) {
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) request.headers['x-moto-account-id'] = config.account_id;
        return next(args);
      },
      { step: 'build', name: 'standInAccount' },
    );
  }
  return client;
}

/** Runs a provider call, translating its failure into the service's error by the provider's own code. */
export async function aws<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number }; $fault?: string };
    const status = e.$metadata?.httpStatusCode;
    return Promise.reject(providerError('AWS', e.name ?? 'Error', e.message ?? String(error), status, error));
  }
}

/** Policy documents come back URL-encoded from some calls and raw from others (moto and AWS alike). */
export function decodeDocument(text: string | undefined): string {
  if (text === undefined) return '';
  if (text.trimStart().startsWith('{')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

async function listAll<T>(page: (marker: string | undefined) => Promise<{ items: T[]; marker: string | undefined }>): Promise<T[]> {
  const out: T[] = [];
  let marker: string | undefined;
  do {
    const r = await page(marker);
    out.push(...r.items);
    marker = r.marker;
  } while (marker);
  return out;
}

/** Provider calls at most this many at a time, where they do not depend on each other. */
const PARALLEL = 8;

/** Runs `f` on every item, at most `limit` at a time; the first failure is thrown once all have settled. */
export async function eachBounded<T, R>(items: readonly T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await f(items[i] as T);
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return out;
}

async function inlinePolicyNames(client: IAMClient, role: string): Promise<string[]> {
  const names = await listAll(async (Marker) => {
    const r = await aws(() => client.send(new ListRolePoliciesCommand({ RoleName: role, Marker })));
    return { items: r.PolicyNames ?? [], marker: r.IsTruncated ? r.Marker : undefined };
  });
  return names.sort();
}

async function inlinePolicies(client: IAMClient, role: string): Promise<InlinePolicy[]> {
  const names = await inlinePolicyNames(client, role);
  return eachBounded(names, PARALLEL, async (name) => {
    const p = await aws(() => client.send(new GetRolePolicyCommand({ RoleName: role, PolicyName: name })));
    return { policy_name: name, policy_document: decodeDocument(p.PolicyDocument) };
  });
}

async function attachedPolicies(client: IAMClient, role: string): Promise<Array<{ policy_name: string; policy_arn: string }>> {
  const list = await listAll(async (Marker) => {
    const r = await aws(() => client.send(new ListAttachedRolePoliciesCommand({ RoleName: role, Marker })));
    return { items: r.AttachedPolicies ?? [], marker: r.IsTruncated ? r.Marker : undefined };
  });
  return list.map((p) => ({ policy_name: p.PolicyName ?? '', policy_arn: p.PolicyArn ?? '' })).sort((a, b) => (a.policy_arn < b.policy_arn ? -1 : 1));
}

async function getRole(client: IAMClient, role: string): Promise<Role> {
  const r = await aws(() => client.send(new GetRoleCommand({ RoleName: role })));
  if (!r.Role) throw providerError('AWS', 'EmptyResponse', 'GetRole returned no role', 502);
  return r.Role;
}

function boundaryOf(role: Role) {
  const b = role.PermissionsBoundary;
  return { permissions_boundary_arn: b?.PermissionsBoundaryArn ?? '', permissions_boundary_type: b?.PermissionsBoundaryType ?? '' };
}

/** A managed policy's name is the last segment of its ARN (arn:aws:iam::aws:policy/service-role/Name). */
const policyNameOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1);

/**
 * AWSIAMRoleCreated_v1's fields from CreateRole's own answer (ARN, role id, creation time, path, trust policy,
 * boundary, duration, tags: the whole Role, as GetRole would return it) and the policies the provider has just
 * accepted on the role this request created: a read-back would repeat the same answer at the cost of three calls.
 */
function createdBody(account: string, role: Role, input: RoleInput): EventBody {
  const inline = [...(input.inline_policies ?? [])].sort((a, b) => (a.policy_name < b.policy_name ? -1 : 1));
  const attached = [...new Set(input.attached_managed_policies ?? [])].sort().map((arn) => ({ policy_name: policyNameOf(arn), policy_arn: arn }));
  const body: EventBody = {
    account_id: account,
    role_name: role.RoleName ?? input.role_name,
    role_arn: role.Arn ?? '',
    role_path: role.Path ?? input.path ?? '/',
    role_id: role.RoleId ?? '',
    description: role.Description ?? '',
    inline_policies: inline.map((p) => ({ policy_name: p.policy_name, policy_document: p.policy_document })),
    attached_managed_policies: attached,
    assume_role_policy_doc: decodeDocument(role.AssumeRolePolicyDocument ?? input.assume_role_policy_doc),
    permissions_boundary: boundaryOf(role),
    max_session_duration: role.MaxSessionDuration ?? input.max_session_duration ?? 3600,
    tags: (role.Tags ?? []).map((t) => ({ key: t.Key ?? '', value: t.Value ?? '' })),
  };
  if (role.CreateDate) body['created_at'] = role.CreateDate.toISOString();
  return body;
}

/**
 * DeleteRole refuses while the role has instance profiles, attached or inline policies: the three lists are
 * read at once (each answers NoSuchEntity for a missing role), the removals made at once, then the role deleted.
 */
async function removeAttachedAndRole(client: IAMClient, name: string): Promise<void> {
  const [profiles, attached, inline] = await Promise.all([
    listAll(async (Marker) => {
      const r = await aws(() => client.send(new ListInstanceProfilesForRoleCommand({ RoleName: name, Marker })));
      return { items: r.InstanceProfiles ?? [], marker: r.IsTruncated ? r.Marker : undefined };
    }),
    attachedPolicies(client, name),
    inlinePolicyNames(client, name),
  ]);
  const removals: Array<() => Promise<unknown>> = [
    ...profiles.map((p) => () => client.send(new RemoveRoleFromInstanceProfileCommand({ RoleName: name, InstanceProfileName: p.InstanceProfileName }))),
    ...attached.map((p) => () => client.send(new DetachRolePolicyCommand({ RoleName: name, PolicyArn: p.policy_arn }))),
    ...inline.map((policy) => () => client.send(new DeleteRolePolicyCommand({ RoleName: name, PolicyName: policy }))),
  ];
  await eachBounded(removals, PARALLEL, (call) => aws(call));
  await aws(() => client.send(new DeleteRoleCommand({ RoleName: name })));
}

/**
 * DeleteRole first: a role with nothing attached goes in one call, where listing first cost three more and a
 * round trip. Only its DeleteConflict (something still attached) takes the path of lists and removals.
 */
async function removeRole(client: IAMClient, name: string): Promise<void> {
  const conflict = await aws(() => client.send(new DeleteRoleCommand({ RoleName: name }))).then(
    () => false,
    (error: unknown) => {
      // the SDK names the error code DeleteConflict by its exception class
      const code = (error as { cause?: { name?: string } }).cause?.name;
      if (code === 'DeleteConflictException' || code === 'DeleteConflict') return true;
      throw error;
    },
  );
  if (conflict) await removeAttachedAndRole(client, name);
}

export function createAwsRoles(client: IAMClient, account: string) {
  return {
    /**
     * CreateRole, then its inline and managed policies. A later step the provider refuses (a managed policy
     * that does not exist) removes the role again, so a refused request leaves nothing behind.
     */
    async create(input: RoleInput): Promise<EventBody> {
      const name = input.role_name;
      const created = await aws(() =>
        client.send(
          new CreateRoleCommand({
            RoleName: name,
            Path: input.path ?? '/',
            AssumeRolePolicyDocument: input.assume_role_policy_doc,
            ...(input.description !== undefined && { Description: input.description }),
            ...(input.max_session_duration !== undefined && { MaxSessionDuration: input.max_session_duration }),
            ...(input.permissions_boundary && { PermissionsBoundary: input.permissions_boundary.permissions_boundary_arn }),
            ...(input.tags && input.tags.length > 0 && { Tags: input.tags.map((t) => ({ Key: t.key, Value: t.value })) }),
          }),
        ),
      );
      if (!created.Role) throw providerError('AWS', 'EmptyResponse', 'CreateRole returned no role', 502);
      try {
        const puts: Array<() => Promise<unknown>> = [
          ...(input.inline_policies ?? []).map((p) => () => client.send(new PutRolePolicyCommand({ RoleName: name, PolicyName: p.policy_name, PolicyDocument: p.policy_document }))),
          ...(input.attached_managed_policies ?? []).map((arn) => () => client.send(new AttachRolePolicyCommand({ RoleName: name, PolicyArn: arn }))),
        ];
        await eachBounded(puts, PARALLEL, (call) => aws(call));
      } catch (error) {
        await removeRole(client, name).catch(() => undefined);
        throw error;
      }
      return createdBody(account, created.Role, input);
    },

    /** The role's whole set of inline policies: added, changed, removed. */
    async setInlinePolicies(name: string, policies: readonly InlinePolicy[]): Promise<EventBody> {
      const current = await inlinePolicies(client, name);
      for (const p of policies) await aws(() => client.send(new PutRolePolicyCommand({ RoleName: name, PolicyName: p.policy_name, PolicyDocument: p.policy_document })));
      const keep = new Set(policies.map((p) => p.policy_name));
      for (const p of current) if (!keep.has(p.policy_name)) await aws(() => client.send(new DeleteRolePolicyCommand({ RoleName: name, PolicyName: p.policy_name })));
      return { account_id: account, role_name: name, inline_policies: await inlinePolicies(client, name) };
    },

    /** The role's whole set of attached managed policies. */
    async setManagedPolicies(name: string, arns: readonly string[]): Promise<EventBody> {
      const current = await attachedPolicies(client, name);
      const have = new Set(current.map((p) => p.policy_arn));
      for (const arn of arns) if (!have.has(arn)) await aws(() => client.send(new AttachRolePolicyCommand({ RoleName: name, PolicyArn: arn })));
      const want = new Set(arns);
      for (const p of current) if (!want.has(p.policy_arn)) await aws(() => client.send(new DetachRolePolicyCommand({ RoleName: name, PolicyArn: p.policy_arn })));
      return { account_id: account, role_name: name, attached_managed_policies: await attachedPolicies(client, name) };
    },

    async setAssumeRolePolicy(name: string, doc: string): Promise<EventBody> {
      await aws(() => client.send(new UpdateAssumeRolePolicyCommand({ RoleName: name, PolicyDocument: doc })));
      const role = await getRole(client, name);
      return { account_id: account, role_name: name, assume_role_policy_doc: decodeDocument(role.AssumeRolePolicyDocument) };
    },

    /** arn undefined: the boundary is removed, and the event carries an empty one. */
    async setPermissionsBoundary(name: string, arn: string | undefined): Promise<EventBody> {
      if (arn === undefined) {
        await getRole(client, name);
        await aws(() => client.send(new DeleteRolePermissionsBoundaryCommand({ RoleName: name })));
      } else {
        await aws(() => client.send(new PutRolePermissionsBoundaryCommand({ RoleName: name, PermissionsBoundary: arn })));
      }
      return { account_id: account, role_name: name, permissions_boundary: boundaryOf(await getRole(client, name)) };
    },

    /** DeleteRole, and only if it is refused for what is still attached, those removed first (removeRole). */
    async delete(name: string): Promise<EventBody> {
      await removeRole(client, name);
      return { account_id: account, role_name: name };
    },
  };
}

/** The harmless call that tests a connection before it is stored. */
export async function testAws(client: IAMClient): Promise<void> {
  await aws(() => client.send(new ListRolesCommand({ MaxItems: 1 })));
}

/** Distinct identities of each class: IAM users, IAM roles, access keys. Users and roles are listed at once. */
export async function inventoryAws(client: IAMClient): Promise<{ user_identities: number; non_human_identities: number; credentials: number }> {
  const [users, roles] = await Promise.all([
    listAll(async (Marker) => {
      const r = await aws(() => client.send(new ListUsersCommand({ Marker, MaxItems: 1000 })));
      return { items: r.Users ?? [], marker: r.IsTruncated ? r.Marker : undefined };
    }),
    listAll(async (Marker) => {
      const r = await aws(() => client.send(new ListRolesCommand({ Marker, MaxItems: 1000 })));
      return { items: (r.Roles ?? []).map((x) => x.RoleId ?? x.Arn ?? ''), marker: r.IsTruncated ? r.Marker : undefined };
    }),
  ]);
  // Access keys are listed per user (the only call that returns them), PARALLEL users at a time.
  const keys = await eachBounded(users, PARALLEL, async (u) => {
    const list = await listAll(async (Marker) => {
      const r = await aws(() => client.send(new ListAccessKeysCommand({ UserName: u.UserName, Marker })));
      return { items: r.AccessKeyMetadata ?? [], marker: r.IsTruncated ? r.Marker : undefined };
    });
    return list.length;
  });
  return { user_identities: new Set(users.map((u) => u.UserId)).size, non_human_identities: new Set(roles).size, credentials: keys.reduce((a, b) => a + b, 0) };
}
