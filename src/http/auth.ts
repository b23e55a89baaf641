// Who is calling: the principal every request carries, and the authenticators that routes declare to produce it.
import { ServiceError, badRequest } from '../errors.js';
import type { OAuthClient } from '../domain/state.js';
import type { OrgActor } from '../org/actor.js';
import type { Registry } from '../org/registry.js';

export const ORG_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * An API key or operator key: visible ASCII, no spaces (the keys the service makes are base64url; a configured
 * root key is held to the same). uWS trims spaces, tabs and bytes 0x80-0xFF at either end of a header value
 * before any code sees it, so what reaches this check is the value less those; bytes inside are seen and refused.
 */
export const KEY = /^[\x21-\x7e]{1,512}$/;

/** RFC 9110 11.4 credentials with a token68: `Basic dXNlcjpwYXNz`, `Bearer eyJ...`. */
export const CREDENTIALS = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ +[A-Za-z0-9._~+/-]+=*$/;

/**
 * The caller of one request, as its route's authenticator established it. Every kind that acts within an
 * organization carries it as `org` (and the request's `org` is that organization).
 *
 * Kinds still to come, each with the authenticator that produces it:
 * - `{ kind: 'person', org, person_id, claims }`: the person's own identity token (`Authorization: Bearer`),
 *   the organization taken from the token; end-user routes such as /consent/gdpr.
 * - `{ kind: 'oauth_client', org, client_id, method }`: OAuth client authentication, client_secret_basic
 *   (`Authorization: Basic`) or client_secret_post (in the form body, so that authenticator runs on the
 *   decoded body: give `Authenticator` a second entry point then, rather than decoding bodies here).
 * - `{ kind: 'access_token', org, client_id, person_id, scope }`: an OAuth access token.
 * - `{ kind: 'anonymous', org, person_id }`: an anonymous person's token or cookie.
 */
export type Principal =
  /** nobody in particular: public routes */
  | { readonly kind: 'public' }
  /** the service's operator, by Service-Operator-Key */
  | { readonly kind: 'operator' }
  /** an organization, by Service-OrgID and its Service-API-Key */
  | { readonly kind: 'organization'; readonly org: OrgActor }
  /** an end user of an organization named by Service-OrgID alone (sign-in, registration) */
  | { readonly kind: 'end_user'; readonly org: OrgActor }
  /** a person, by their own identity token (Authorization: Bearer); the organization is the token's (src/http/person-auth.ts) */
  | { readonly kind: 'person'; readonly org: OrgActor; readonly person_id: string; readonly claims: Readonly<Record<string, unknown>> }
  /** an OAuth 2.0 client of the organization, authenticated as RFC 6749 2.3 says (src/http/oauth-client-auth.ts) */
  | { readonly kind: 'oauth_client'; readonly org: OrgActor; readonly client: OAuthClient; readonly method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none' }
  /** whoever holds one of the organization's initial access tokens (RFC 7591 3): may register a client (src/http/registration-auth.ts) */
  | { readonly kind: 'registrar'; readonly org: OrgActor; readonly token_hash: string }
  /** a dynamically registered client, by its registration access token (RFC 7592 1): may read, replace or delete itself */
  | { readonly kind: 'registered_client'; readonly org: OrgActor; readonly client: OAuthClient };

/** What authenticators may consult; built once per front. */
export interface AuthContext {
  readonly registry: Registry;
  /** undefined: operator routes are disabled */
  readonly operatorKey: string | undefined;
  checkOperatorKey(presented: string): boolean;
  /** The organization's principals, made once per actor so that authenticating allocates nothing. */
  principals(org: OrgActor): OrgPrincipals;
}

export interface OrgPrincipals {
  readonly organization: Principal & { kind: 'organization' };
  readonly end_user: Principal & { kind: 'end_user' };
}

export function createAuthContext(registry: Registry, operator: { operatorKey: string | undefined; checkOperatorKey(presented: string): boolean }): AuthContext {
  // Weak: an organization's actor may be replaced, and its principals go with it.
  const made = new WeakMap<OrgActor, OrgPrincipals>();
  return {
    registry,
    operatorKey: operator.operatorKey,
    checkOperatorKey: operator.checkOperatorKey,
    principals(org) {
      let p = made.get(org);
      if (p === undefined) made.set(org, (p = Object.freeze({ organization: Object.freeze({ kind: 'organization', org }), end_user: Object.freeze({ kind: 'end_user', org }) })));
      return p;
    },
  };
}

/**
 * Produces a request's principal from the headers the front copied for it, or throws the ServiceError the
 * caller gets. The front runs it once, first, before the path, query, consistency headers and body are read.
 */
export interface Authenticator {
  /** lower-case names of the headers it reads: only these are copied out of uWebSockets.js */
  readonly headers: readonly string[];
  /**
   * Headers read only when `unless` was not sent (a credential that takes over where the usual one is missing):
   * a read without a body skips looking them up when it was, so the usual credential pays nothing for them.
   */
  readonly fallback?: { readonly unless: string; readonly headers: readonly string[] };
  /** browsers may call its routes from the origins SERVICE_CORS_ORIGINS lists; never for credentialed management calls */
  readonly crossOrigin: boolean;
  /** its routes' handlers see the caller's address, origin and user agent (end-user routes) */
  readonly client: boolean;
  /** its OpenAPI security requirement, and the schemes that requirement names */
  readonly security: ReadonlyArray<Record<string, string[]>>;
  readonly schemes: Readonly<Record<string, unknown>>;
  /**
   * A promise only where the check must wait (a token's signature, a client secret's hash): a synchronous
   * principal lets the front answer within uWebSockets.js's callback. `query`: the raw query string, for
   * the few routes a browser is sent to and so cannot add a header to.
   */
  authenticate(headers: Record<string, string>, ctx: AuthContext, query: string): Principal | Promise<Principal>;
  /**
   * A second step for credentials that travel in the body (OAuth's client_secret_post): the front calls it
   * with the first step's principal once the body is decoded and valid, and the request gets what it returns.
   */
  authenticateBody?(principal: Principal, body: unknown, ctx: AuthContext): Principal | Promise<Principal>;
}

const PUBLIC: Principal = Object.freeze({ kind: 'public' });
const OPERATOR: Principal = Object.freeze({ kind: 'operator' });

const SCHEMES = {
  orgId: { type: 'apiKey', in: 'header', name: 'Service-OrgID' },
  apiKey: { type: 'apiKey', in: 'header', name: 'Service-API-Key' },
  operatorKey: { type: 'apiKey', in: 'header', name: 'Service-Operator-Key' },
};

/** The order of checks is the contract's: Service-OrgID missing or malformed 400, before anything else. */
export function orgIdOf(headers: Record<string, string>): string {
  const orgId = headers['service-orgid'];
  if (orgId === undefined) throw badRequest('Service-OrgID header is required');
  if (!ORG_ID.test(orgId)) throw badRequest('Service-OrgID: must be 1-64 characters of A-Z a-z 0-9 _ -');
  return orgId;
}

function endUser(orgId: string, ctx: AuthContext): Principal {
  const org = ctx.registry.get(orgId);
  if (!org) throw new ServiceError('ERR_NOT_FOUND', `organization ${orgId} not found`);
  return ctx.principals(org).end_user;
}

/**
 * The authenticators routes declare by name. A new kind of caller adds its entry here, or, when it needs
 * its own dependencies (a token validator, the OAuth clients), a route declares the Authenticator object
 * a factory made for it.
 */
export const authenticators = {
  /** public: no headers at all */
  none: {
    headers: [],
    crossOrigin: true,
    client: false,
    security: [],
    schemes: {},
    authenticate: () => PUBLIC,
  },
  /** end-user routes: Service-OrgID only; unknown organization 404 */
  org: {
    headers: ['service-orgid'],
    crossOrigin: true,
    client: true,
    security: [{ orgId: [] }],
    schemes: { orgId: SCHEMES.orgId },
    authenticate: (headers, ctx) => endUser(orgIdOf(headers), ctx),
  },
  /**
   * end-user routes a browser is sent to (the SSO start): Service-OrgID, or `?org_id=` when there is no header;
   * the header wins when both are given. The route's query schema must admit org_id.
   */
  org_or_query: {
    headers: ['service-orgid'],
    crossOrigin: true,
    client: true,
    security: [{ orgId: [] }, { orgIdQuery: [] }] as Array<Record<string, string[]>>,
    schemes: { orgId: SCHEMES.orgId, orgIdQuery: { type: 'apiKey', in: 'query', name: 'org_id' } },
    authenticate(headers, ctx, query) {
      if (headers['service-orgid'] !== undefined) return endUser(orgIdOf(headers), ctx);
      const orgId = new URLSearchParams(query).get('org_id');
      if (orgId === null) throw badRequest('Service-OrgID header or org_id query parameter is required');
      if (!ORG_ID.test(orgId)) throw badRequest('org_id: must be 1-64 characters of A-Z a-z 0-9 _ -');
      return endUser(orgId, ctx);
    },
  },
  /** management routes: Service-OrgID and Service-API-Key; unknown organization 404, bad key 401, another's key 403 */
  key: {
    headers: ['service-orgid', 'service-api-key'],
    crossOrigin: false,
    client: false,
    security: [{ orgId: [], apiKey: [] }],
    schemes: { orgId: SCHEMES.orgId, apiKey: SCHEMES.apiKey },
    authenticate(headers, ctx) {
      const orgId = orgIdOf(headers);
      const key = headers['service-api-key'];
      // After the organization's 404, as the contract orders; a key outside the grammar matches no stored key.
      if (key !== undefined && key !== '' && !KEY.test(key) && ctx.registry.get(orgId)) throw new ServiceError('ERR_UNAUTHORIZED', 'Service-API-Key: must be visible ASCII characters without spaces');
      const result = ctx.registry.authenticate(orgId, key);
      if (!result.ok) throw result.error;
      return ctx.principals(result.actor).organization;
    },
  },
  /** /ops: Service-Operator-Key; 404 while no operator key is configured, 401 for a missing or wrong one */
  operator: {
    headers: ['service-operator-key'],
    crossOrigin: false,
    client: false,
    security: [{ operatorKey: [] }],
    schemes: { operatorKey: SCHEMES.operatorKey },
    authenticate(headers, ctx) {
      if (ctx.operatorKey === undefined) throw new ServiceError('ERR_NOT_FOUND', 'operator endpoints are disabled (SERVICE_OPERATOR_KEY is not set)');
      const key = headers['service-operator-key'] ?? '';
      if (!KEY.test(key) || !ctx.checkOperatorKey(key)) throw new ServiceError('ERR_UNAUTHORIZED', 'Service-Operator-Key is missing or wrong');
      return OPERATOR;
    },
  },
} satisfies Record<string, Authenticator>;

export type AuthName = keyof typeof authenticators;

/** What a route declares: an authenticator by name, or one made for it. */
export type Auth = AuthName | Authenticator;

export function authenticatorOf(auth: Auth): Authenticator {
  return typeof auth === 'string' ? authenticators[auth] : auth;
}

/** The organization a principal acts within, if any: what `req.org` is. */
export function orgOf(principal: Principal): OrgActor | undefined {
  return 'org' in principal ? principal.org : undefined;
}
