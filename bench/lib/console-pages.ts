// The console's pages as the HTTP benchmark loads them: an organization as an administrator finds it (persons
// in groups with roles, OAuth clients, webhooks, an SSO credential, domains, suborganizations), an
// administrator signed in through the hosted page as the console does it, and each page's API calls on
// opening, as the console makes them (console/pages/*.tsx), with that administrator's console access token.
import { consoleAccessToken } from '../../test/support/console.js';
import { encodeRequest } from './connection.js';
import { createPersons } from './persons.js';
import type { ServiceProcess } from './server-process.js';

const HOST = '127.0.0.1';
const ADMIN = 'bench-admin@example.com';
const PASSWORD = 'correct horse battery staple';
const GROUPS = Array.from({ length: 10 }, (_, i) => `group-${i}`);
const PERMISSIONS = Array.from({ length: 24 }, (_, i) => `documents/${i}:read`);
const ROLES = Array.from({ length: 8 }, (_, r) => ({ name: `role-${r}`, permissions: PERMISSIONS.slice(r * 3, r * 3 + 3) }));

export interface ConsolePage {
  /** the page's fragment, e.g. persons/{id} */
  page: string;
  /** the API calls one opening of the page makes, IDs shown as {id} */
  calls: string[];
  /** every call of every opening measured, in turn */
  requests: Buffer[];
}

export interface ConsoleOrganization {
  personIds: string[];
  /** `Authorization: Bearer` with the administrator's console access token, and `Service-OrgID` */
  headers: Record<string, string>;
  webhookId: string;
}

async function call(service: ServiceProcess, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${service.url}${path}`, { method, headers: { ...service.auth, 'Content-Type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === '' ? undefined : (JSON.parse(text) as { result: unknown }).result;
}

/** Fills the root organization of `service` through its API key, then signs its administrator in. */
export async function seedConsoleOrganization(service: ServiceProcess, persons: number): Promise<ConsoleOrganization> {
  for (const name of GROUPS) await call(service, 'POST', '/groups', { name, description: `the people of ${name}` });
  for (const name of PERMISSIONS) await call(service, 'POST', '/rbac/permissions', { name });
  for (const role of ROLES) await call(service, 'POST', '/rbac/roles', role);
  const personIds = await createPersons(service, persons, (i) => ({ groups: [GROUPS[i % GROUPS.length]], roles: [ROLES[i % ROLES.length]?.name], attributes: { end_user_read_write: { plan: 'pro', seats: i } } }));
  for (let i = 0; i < 10; i++) await call(service, 'POST', '/oauth2/clients', { client_name: `App ${i}`, scopes: ['openid'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [`https://app-${i}.example/cb`] });
  let webhookId = '';
  for (let i = 0; i < 3; i++) {
    const hook = (await call(service, 'POST', '/organizations/webhooks', { name: `hook-${i}`, target_url: `https://hooks-${i}.example/events` })) as { id: string };
    // An event the benchmark never causes: no delivery runs beside the measurement.
    await call(service, 'POST', `/organizations/webhooks/${hook.id}/triggers`, { trigger_type: 'event', trigger_name: 'PersonDeleted_v1' });
    webhookId = hook.id;
  }
  await call(service, 'POST', '/organizations/sso/oidc/provider-credentials', { provider: 'github', client_id: 'bench-github', client_secret: 'bench-github-secret-0123456789' });
  await call(service, 'POST', '/organizations/config/domains', { domains: ['app.example', '*.app.example', 'admin.example'] });
  for (let i = 0; i < 2; i++) await call(service, 'POST', '/organizations/suborganizations', { sub_org_name: `branch-${i}` });

  const admin = (await call(service, 'POST', '/persons', { handles: [{ type: 'email_address', value: ADMIN }] })) as { person_id: string };
  await call(service, 'PUT', `/persons/${admin.person_id}/credentials/password`, { password: PASSWORD });
  const { client_id } = (await call(service, 'POST', '/console/administrators', { person_id: admin.person_id })) as { client_id: string };
  const token = await consoleAccessToken(service.url, client_id, ADMIN, PASSWORD);
  return { personIds, headers: { 'Service-OrgID': service.auth['Service-OrgID'] as string, Authorization: `Bearer ${token}` }, webhookId };
}

/**
 * Each page and the calls it makes on opening. Not here: the API key page (it calls nothing until "Rotate"),
 * and the live events page and a person's recent events, which are the /events WebSocket, not requests.
 */
export function consolePages(org: ConsoleOrganization): ConsolePage[] {
  const get = (path: string, headers: Record<string, string> = org.headers) => encodeRequest(HOST, { method: 'GET', path, headers });
  const page = (name: string, openings: string[][], headers?: Record<string, string>): ConsolePage => ({
    page: name,
    calls: (openings[0] as string[]).map((c) => c.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}').replace(/group-0/g, '{name}')),
    requests: openings.flatMap((calls) => calls.map((c) => get(c, headers))),
  });
  const person = (id: string) => {
    const p = `/persons/${id}`;
    return [p, `${p}/roles`, `${p}/permissions`, `${p}/attributes`, `${p}/credentials`, `${p}/consent/gdpr`, `${p}/sessions`, '/groups', '/rbac/roles'];
  };
  const hook = `/organizations/webhooks/${org.webhookId}`;
  return [
    page('console (the application)', [['/console', '/console/app.js', '/console/app.css']], {}),
    page('persons', [['/persons?paging=cursor&limit=20&fields=handles']]),
    page('persons/{id}', org.personIds.map(person)),
    page('groups', [['/groups']]),
    page('groups/{name}', GROUPS.map((g) => [`/groups/${g}`, `/groups/${g}/persons?limit=100`])),
    // The roles page reads each role for its permissions: the console-administrator role and the eight above.
    page('roles', [['/rbac/permissions?limit=100', '/rbac/roles?limit=100', ...[...ROLES.map((r) => r.name), 'console-administrator'].map((r) => `/rbac/roles/${r}`)]]),
    page('clients', [['/oauth2/clients?limit=100']]),
    page('sso', [['/organizations/sso/oidc/provider-credentials']]),
    page('webhooks', [['/organizations/webhooks']]),
    page('webhooks/{id}', [[hook, `${hook}/triggers`, `${hook}/dead-letters?limit=100`]]),
    page('config', [['/organizations/config']]),
    page('domains', [['/organizations/config/domains']]),
    page('suborganizations', [['/organizations/suborganizations']]),
    page('signing-keys', [['/.well-known/jwks.json']], {}),
    page('regions', [['/health']], {}),
  ];
}
