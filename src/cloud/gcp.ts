// GCP through Google's client libraries (@googleapis/iam, @googleapis/cloudresourcemanager): service accounts
// created and deleted, and one principal's bindings in the project's IAM policy set whole with the policy's
// etag (read, change, write; retried when another writer changed the policy meanwhile). Each answer is the
// provider's own, as the events carry it.
import { auth, iam, type iam_v1 } from '@googleapis/iam';
import { cloudresourcemanager, type cloudresourcemanager_v1 } from '@googleapis/cloudresourcemanager';
import type { Outbound } from '../lib/guarded-connect.js';
import { providerError } from './provider-error.js';
import type { EventBody } from './aws.js';

export interface GcpConfig {
  project_id: string;
  /** root URL of both APIs (a stand-in); Google's own when absent */
  endpoint?: string;
}

export interface GcpKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

export interface GcpBinding {
  role: string;
  condition?: { expression: string; title: string; description?: string; location?: string };
}

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** setIamPolicy attempts under concurrent changes before giving up with 409 */
const ETAG_ATTEMPTS = 5;

/** Runs a provider call, translating its failure by Google's own status (ALREADY_EXISTS, NOT_FOUND, ...). */
export async function gcp<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const e = error as { status?: number; code?: unknown; message?: string; response?: { status?: number; data?: { error?: { status?: string; message?: string } } } };
    const status = e.response?.status ?? (typeof e.code === 'number' ? e.code : undefined) ?? e.status;
    const body = e.response?.data?.error;
    const code = body?.status ?? (typeof e.code === 'string' ? e.code : 'Error');
    return Promise.reject(providerError('GCP', code, body?.message ?? e.message ?? String(error), typeof status === 'number' ? status : undefined, error));
  }
}

export function gcpClients(config: GcpConfig, key: GcpKey, outbound: Outbound) {
  // Self-signed JWT access tokens: no token endpoint is called (google-auth-library would ignore a key's
  // token_uri and call Google's), so a stand-in only verifies the signature.
  const jwt = new auth.JWT({ email: key.client_email, key: key.private_key, ...(key.private_key_id && { keyId: key.private_key_id }), scopes: [SCOPE] });
  jwt.useJWTAccessWithScope = true;
  const root = config.endpoint ? { rootUrl: config.endpoint.endsWith('/') ? config.endpoint : `${config.endpoint}/` } : {};
  // gaxios takes the agent as given (no proxy agent of its own) and would follow redirects anywhere.
  const transport = { agent: (url: URL) => (url.protocol === 'http:' ? outbound.agents.http : outbound.agents.https), maxRedirects: 0 };
  return {
    iam: iam({ version: 'v1', auth: jwt, retry: false, ...transport, ...root }),
    crm: cloudresourcemanager({ version: 'v1', auth: jwt, retry: false, ...transport, ...root }),
  };
}

type Clients = ReturnType<typeof gcpClients>;

function accountBody(project: string, a: iam_v1.Schema$ServiceAccount): EventBody {
  return {
    project_id: a.projectId ?? project,
    name: a.name ?? '',
    email: a.email ?? '',
    unique_id: a.uniqueId ?? '',
    display_name: a.displayName ?? '',
    description: a.description ?? '',
    oauth2_client_id: a.oauth2ClientId ?? '',
    disabled: a.disabled ?? false,
    etag: a.etag ?? '',
  };
}

const conditionKey = (c: GcpBinding['condition'] | cloudresourcemanager_v1.Schema$Expr | undefined | null) => (c ? JSON.stringify([c.expression ?? '', c.title ?? '', c.description ?? '', c.location ?? '']) : '');

/** The policy with `principal` in exactly the given bindings; bindings left without members are dropped. */
export function withPrincipal(policy: cloudresourcemanager_v1.Schema$Policy, principal: string, bindings: readonly GcpBinding[]): cloudresourcemanager_v1.Schema$Policy {
  const out = (policy.bindings ?? []).map((b) => ({ ...b, members: (b.members ?? []).filter((m) => m !== principal) }));
  for (const want of bindings) {
    const key = conditionKey(want.condition);
    const existing = out.find((b) => b.role === want.role && conditionKey(b.condition) === key);
    if (existing) existing.members.push(principal);
    else out.push({ role: want.role, members: [principal], ...(want.condition && { condition: want.condition }) });
  }
  const kept = out.filter((b) => b.members.length > 0);
  // Conditions need version 3; a policy read as version 3 stays so.
  const version = kept.some((b) => b.condition) ? 3 : Math.max(policy.version ?? 1, 1);
  return { ...policy, version, bindings: kept };
}

function bindingsOf(policy: cloudresourcemanager_v1.Schema$Policy, principal: string): GcpBinding[] {
  return (policy.bindings ?? [])
    .filter((b) => (b.members ?? []).includes(principal))
    .map((b) => {
      const c = b.condition;
      if (!c) return { role: b.role ?? '' };
      return { role: b.role ?? '', condition: { expression: c.expression ?? '', title: c.title ?? '', description: c.description ?? '', location: c.location ?? '' } };
    });
}

export function createGcpChanges(clients: Clients, project: string) {
  const resource = project;
  return {
    async createServiceAccount(accountId: string, displayName?: string, description?: string): Promise<EventBody> {
      const r = await gcp(() =>
        clients.iam.projects.serviceAccounts.create({
          name: `projects/${project}`,
          requestBody: { accountId, serviceAccount: { ...(displayName !== undefined && { displayName }), ...(description !== undefined && { description }) } },
        }),
      );
      return accountBody(project, r.data);
    },

    async deleteServiceAccount(email: string): Promise<EventBody> {
      await gcp(() => clients.iam.projects.serviceAccounts.delete({ name: `projects/${project}/serviceAccounts/${email}` }));
      return { project_id: project, service_account_email: email };
    },

    /** Read, change, write with the read etag; another writer in between (409 ABORTED) makes it read again. */
    async setBindings(principal: string, bindings: readonly GcpBinding[]): Promise<EventBody> {
      for (let attempt = 1; ; attempt++) {
        const read = await gcp(() => clients.crm.projects.getIamPolicy({ resource, requestBody: { options: { requestedPolicyVersion: 3 } } }));
        const policy = withPrincipal(read.data, principal, bindings);
        try {
          const written = await gcp(() => clients.crm.projects.setIamPolicy({ resource, requestBody: { policy } }));
          return { project_id: project, principal, bindings: bindingsOf(written.data, principal) };
        } catch (error) {
          const status = (error as { status?: number }).status;
          if (status !== 409 || attempt >= ETAG_ATTEMPTS) throw error;
        }
      }
    },
  };
}

/** The harmless call that tests a connection: read the project's policy. */
export async function testGcp(clients: Clients, project: string): Promise<void> {
  await gcp(() => clients.crm.projects.getIamPolicy({ resource: project, requestBody: { options: { requestedPolicyVersion: 3 } } }));
}

/** user: members of the project policy; service accounts; their user-managed keys. */
export async function inventoryGcp(clients: Clients, project: string): Promise<{ user_identities: number; non_human_identities: number; credentials: number }> {
  const policy = await gcp(() => clients.crm.projects.getIamPolicy({ resource: project, requestBody: { options: { requestedPolicyVersion: 3 } } }));
  const users = new Set((policy.data.bindings ?? []).flatMap((b) => b.members ?? []).filter((m) => m.startsWith('user:')));
  const accounts: iam_v1.Schema$ServiceAccount[] = [];
  let pageToken: string | undefined;
  do {
    const r = await gcp(() => clients.iam.projects.serviceAccounts.list({ name: `projects/${project}`, pageSize: 100, ...(pageToken && { pageToken }) }));
    accounts.push(...(r.data.accounts ?? []));
    pageToken = r.data.nextPageToken ?? undefined;
  } while (pageToken);
  let keys = 0;
  for (const a of accounts) {
    const r = await gcp(() => clients.iam.projects.serviceAccounts.keys.list({ name: `projects/${project}/serviceAccounts/${a.email}`, keyTypes: ['USER_MANAGED'] }));
    keys += (r.data.keys ?? []).length;
  }
  return { user_identities: users.size, non_human_identities: new Set(accounts.map((a) => a.uniqueId ?? a.email)).size, credentials: keys };
}
