// Administrators are persons: the console signs them in as an OAuth client of the service itself, and the
// management routes take its access tokens beside API keys, each route with the console permission it needs.
// Routes keep their plain API-key authenticator while the console is off, so nothing changes on their path.
import { ServiceError, notFound } from '../errors.js';
import { effectivePermissions } from '../domain/rbac.js';
import type { OAuthClient, OrgState } from '../domain/state.js';
import { authenticators, orgIdOf, type AuthContext, type Authenticator } from '../http/auth.js';
import type { Route } from '../http/route.js';
import type { OrgActor } from '../org/actor.js';
import type { Registry } from '../org/registry.js';
import type { AccessTokens } from '../oauth/introspect.js';

export const CONSOLE_PERMISSIONS = ['console.read', 'console.write', 'console.keys'] as const;
export type ConsolePermission = (typeof CONSOLE_PERMISSIONS)[number];

/** Where the hosted sign-in page sends an administrator back: the console's own address. */
export const consoleRedirect = (issuer: string) => `${issuer}/console`;

/** The organization's console client: a public client that redirects to the console and nowhere else. */
export function consoleClientOf(state: OrgState, issuer: string): OAuthClient | undefined {
  const redirect = consoleRedirect(issuer);
  for (const c of state.oauth_clients.values()) if (isConsoleClient(c, redirect)) return c;
  return undefined;
}

function isConsoleClient(client: OAuthClient, redirect: string): boolean {
  return client.public && client.redirect_uris.length === 1 && client.redirect_uris[0] === redirect;
}

/**
 * The permission a management route asks of a console access token: reads console.read, writes
 * console.write, and what hands out or replaces an organization's keys (or deletes it) console.keys.
 */
export function consolePermissionFor(route: Pick<Route, 'method' | 'path'>): ConsolePermission {
  const { method, path } = route;
  if (method === 'get') return 'console.read';
  if (path.startsWith('/organizations/api-keys') || path === '/organizations/suborganizations' || path === '/console/administrators') return 'console.keys';
  if (path === '/organizations' && method === 'delete') return 'console.keys';
  return 'console.write';
}

const unauthorized = (message: string) => new ServiceError('ERR_UNAUTHORIZED', message);

export interface ConsoleTokens {
  /** The organization whose administrator presented `token`, once the token and the permission are checked. */
  check(orgId: string, token: string, permission: ConsolePermission): Promise<OrgActor>;
}

/** `active`: the authorization server's own test of an access token (signature, expiry, client, revocation, grant). */
export function createConsoleTokens(deps: { registry: Registry; active: AccessTokens['active']; issuer: () => string }): ConsoleTokens {
  return {
    async check(orgId, token, permission) {
      if (!deps.registry.get(orgId)) throw notFound(`organization ${orgId} not found`);
      const found = await deps.active(token);
      if (!found) throw unauthorized('console access token is invalid, expired or revoked');
      // Looked up after the wait: the organization may have changed (or gone) meanwhile.
      const org = deps.registry.get(orgId);
      if (!org) throw notFound(`organization ${orgId} not found`);
      const { claims } = found;
      const state = org.state;
      const client = state.oauth_clients.get(claims.client_id);
      if (found.org.id !== org.id || claims.aud !== deps.issuer() || !client || !isConsoleClient(client, consoleRedirect(deps.issuer()))) {
        throw unauthorized('the access token is not a console access token of this organization');
      }
      const person = state.persons.get(claims.sub);
      if (!person || !person.active) throw unauthorized('console access token: its person is deleted or inactive');
      if (!effectivePermissions(state, person).includes(permission)) throw new ServiceError('ERR_FORBIDDEN', `the administrator lacks the permission ${permission}`);
      return org;
    },
  };
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i;

/** The API-key authenticator that also takes `Authorization: Bearer <console access token>` holding `permission`. */
function keyOrConsoleToken(tokens: ConsoleTokens, permission: ConsolePermission): Authenticator {
  const key = authenticators.key;
  return {
    headers: key.headers,
    // With an API key (the usual caller) Authorization is never read, so the route's path stays as without the console.
    fallback: { unless: 'service-api-key', headers: ['authorization'] },
    crossOrigin: false,
    client: false,
    security: [...key.security, { orgId: [], consoleToken: [permission] }],
    schemes: { ...key.schemes, consoleToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "a console access token; the route needs the administrator's console.read (reads), console.write (writes) or console.keys (API keys)" } },
    authenticate(headers: Record<string, string>, ctx: AuthContext) {
      const authorization = headers['authorization'];
      // An API key wins: with one, the route behaves exactly as without the console.
      if (authorization === undefined || headers['service-api-key'] !== undefined) return key.authenticate(headers, ctx);
      const orgId = orgIdOf(headers);
      const bearer = BEARER.exec(authorization);
      if (!bearer) throw unauthorized('Authorization: must be "Bearer " and a console access token (or send Service-API-Key)');
      return tokens.check(orgId, bearer[1] as string, permission).then((org) => ctx.principals(org).organization);
    },
  };
}

/** Every API-key route of `routes`, replaced in place by one that takes console access tokens too. */
export function acceptConsoleTokens(routes: Route[], tokens: ConsoleTokens): void {
  const made = new Map<ConsolePermission, Authenticator>();
  routes.forEach((r, i) => {
    if (r.auth !== 'key') return;
    const permission = consolePermissionFor(r);
    let auth = made.get(permission);
    if (auth === undefined) made.set(permission, (auth = keyOrConsoleToken(tokens, permission)));
    routes[i] = { ...r, auth };
  });
}
