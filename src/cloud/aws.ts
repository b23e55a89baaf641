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

export function awsClient(config: AwsConfig, credentials: AwsCredentials): IAMClient {
  const client = new IAMClient({
    region: config.aws_region ?? 'us-east-1',
    ...(config.endpoint && { endpoint: config.endpoint }),
    credentials: { accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key },
    maxAttempts: 2,
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

async function inlinePolicies(client: IAMClient, role: string): Promise<InlinePolicy[]> {
  const names = await listAll(async (Marker) => {
    const r = await aws(() => client.send(new ListRolePoliciesCommand({ RoleName: role, Marker })));
    return { items: r.PolicyNames ?? [], marker: r.IsTruncated ? r.Marker : undefined };
  });
  const out: InlinePolicy[] = [];
  for (const name of names.sort()) {
    const p = await aws(() => client.send(new GetRolePolicyCommand({ RoleName: role, PolicyName: name })));
    out.push({ policy_name: name, policy_document: decodeDocument(p.PolicyDocument) });
  }
  return out;
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

/** AWSIAMRoleCreated_v1's fields, every one as the provider now reports it. */
async function roleBody(client: IAMClient, account: string, name: string): Promise<EventBody> {
  const role = await getRole(client, name);
  const body: EventBody = {
    account_id: account,
    role_name: role.RoleName ?? name,
    role_arn: role.Arn ?? '',
    role_path: role.Path ?? '/',
    role_id: role.RoleId ?? '',
    description: role.Description ?? '',
    inline_policies: await inlinePolicies(client, name),
    attached_managed_policies: await attachedPolicies(client, name),
    assume_role_policy_doc: decodeDocument(role.AssumeRolePolicyDocument),
    permissions_boundary: boundaryOf(role),
    max_session_duration: role.MaxSessionDuration ?? 3600,
    tags: (role.Tags ?? []).map((t) => ({ key: t.Key ?? '', value: t.Value ?? '' })),
  };
  if (role.CreateDate) body['created_at'] = role.CreateDate.toISOString();
  if (role.RoleLastUsed?.LastUsedDate) body['last_used_at'] = role.RoleLastUsed.LastUsedDate.toISOString();
  if (role.RoleLastUsed?.Region) body['last_used_region'] = role.RoleLastUsed.Region;
  return body;
}

async function removeRole(client: IAMClient, name: string): Promise<void> {
  const profiles = await listAll(async (Marker) => {
    const r = await aws(() => client.send(new ListInstanceProfilesForRoleCommand({ RoleName: name, Marker })));
    return { items: r.InstanceProfiles ?? [], marker: r.IsTruncated ? r.Marker : undefined };
  });
  for (const p of profiles) await aws(() => client.send(new RemoveRoleFromInstanceProfileCommand({ RoleName: name, InstanceProfileName: p.InstanceProfileName })));
  for (const p of await attachedPolicies(client, name)) await aws(() => client.send(new DetachRolePolicyCommand({ RoleName: name, PolicyArn: p.policy_arn })));
  for (const p of await inlinePolicies(client, name)) await aws(() => client.send(new DeleteRolePolicyCommand({ RoleName: name, PolicyName: p.policy_name })));
  await aws(() => client.send(new DeleteRoleCommand({ RoleName: name })));
}

export function createAwsRoles(client: IAMClient, account: string) {
  return {
    /**
     * CreateRole, then its inline and managed policies. A later step the provider refuses (a managed policy
     * that does not exist) removes the role again, so a refused request leaves nothing behind.
     */
    async create(input: RoleInput): Promise<EventBody> {
      const name = input.role_name;
      await aws(() =>
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
      try {
        for (const p of input.inline_policies ?? []) await aws(() => client.send(new PutRolePolicyCommand({ RoleName: name, PolicyName: p.policy_name, PolicyDocument: p.policy_document })));
        for (const arn of input.attached_managed_policies ?? []) await aws(() => client.send(new AttachRolePolicyCommand({ RoleName: name, PolicyArn: arn })));
      } catch (error) {
        await removeRole(client, name).catch(() => undefined);
        throw error;
      }
      return roleBody(client, account, name);
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

    /** Instance profiles, attached and inline policies go first, as AWS requires. */
    async delete(name: string): Promise<EventBody> {
      await getRole(client, name);
      await removeRole(client, name);
      return { account_id: account, role_name: name };
    },
  };
}

/** The harmless call that tests a connection before it is stored. */
export async function testAws(client: IAMClient): Promise<void> {
  await aws(() => client.send(new ListRolesCommand({ MaxItems: 1 })));
}

/** Distinct identities of each class: IAM users, IAM roles, access keys. */
export async function inventoryAws(client: IAMClient): Promise<{ user_identities: number; non_human_identities: number; credentials: number }> {
  const users = await listAll(async (Marker) => {
    const r = await aws(() => client.send(new ListUsersCommand({ Marker, MaxItems: 1000 })));
    return { items: r.Users ?? [], marker: r.IsTruncated ? r.Marker : undefined };
  });
  const roles = await listAll(async (Marker) => {
    const r = await aws(() => client.send(new ListRolesCommand({ Marker, MaxItems: 1000 })));
    return { items: (r.Roles ?? []).map((x) => x.RoleId ?? x.Arn ?? ''), marker: r.IsTruncated ? r.Marker : undefined };
  });
  let keys = 0;
  for (const u of users) {
    const list = await listAll(async (Marker) => {
      const r = await aws(() => client.send(new ListAccessKeysCommand({ UserName: u.UserName, Marker })));
      return { items: r.AccessKeyMetadata ?? [], marker: r.IsTruncated ? r.Marker : undefined };
    });
    keys += list.length;
  }
  return { user_identities: new Set(users.map((u) => u.UserId)).size, non_human_identities: new Set(roles).size, credentials: keys };
}
