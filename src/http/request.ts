// A handler's Request from what the front copied out of uWebSockets.js: the principal, path parameters,
// the query, the consistency headers and the body, checked in the contract's order.
import { requirePerson } from '../domain/lookup.js';
import { badRequest, quote } from '../errors.js';
import type { OrgActor } from '../org/actor.js';
import { authenticatorOf, orgOf, type AuthContext, type Authenticator, type Principal } from './auth.js';
import { codecs, type BodyCodec } from './codec.js';
import { isMutating, type Consistency, type Request, type Route } from './route.js';
import { compileValidator, type Validator } from './validate.js';

const EMPTY_BODY = Buffer.alloc(0);

/** Without the consistency headers a write waits for the local region, up to 30 s. Shared, so frozen. */
const LOCAL_REGION: Consistency = Object.freeze({ level: 'local_region', timeoutMs: 30_000 });

export function parseConsistency(headers: Record<string, string>): Consistency {
  const rawLevel = headers['service-required-consistency'];
  const rawTimeout = headers['service-required-consistency-timeout'];
  // A write's own object: the waiter records on it what the write waited for (its consistency token).
  if (rawLevel === undefined && rawTimeout === undefined) return { level: 'local_region', timeoutMs: 30_000 };
  // Given but empty is refused like any other wrong value: uWS trims bytes outside visible ASCII at either
  // end of a value, so '' may be what is left of one (Service-Required-Consistency: é).
  const level = rawLevel ?? 'local_region';
  if (level !== 'local_region' && level !== 'all_regions') {
    throw badRequest(`Service-Required-Consistency: must be local_region or all_regions, got ${quote(level)}`);
  }
  let timeout = 30;
  if (rawTimeout !== undefined) {
    if (!/^\d{1,3}$/.test(rawTimeout) || Number(rawTimeout) < 1 || Number(rawTimeout) > 120) {
      throw badRequest(`Service-Required-Consistency-Timeout: must be an integer from 1 to 120 seconds, got ${quote(rawTimeout)}`);
    }
    timeout = Number(rawTimeout);
  }
  return { level, timeoutMs: timeout * 1000 };
}

/** The headers a route's request is built from: copying one out of uWS costs, so only these are. */
export function routeHeaders(r: Route): string[] {
  const auth = authenticatorOf(r.auth);
  const names = [...auth.headers, ...(auth.fallback?.headers ?? []), 'content-length', 'transfer-encoding'];
  if (r.body) names.push('content-type');
  if (isMutating(r.method)) names.push('service-required-consistency', 'service-required-consistency-timeout');
  // Reads accept a consistency token (read-your-writes), waiting up to the timeout header.
  else names.push('service-consistency-token', 'service-required-consistency-timeout');
  // Origin is read for CORS, which only public and end-user routes allow.
  if (corsOf(r) || auth.client || r.client) names.push('origin');
  // X-Forwarded-For: believed only from SERVICE_TRUSTED_PROXIES (client-ip.ts).
  if (auth.client || r.client) names.push('user-agent', 'x-forwarded-for');
  if (r.headers) names.push(...r.headers);
  return names;
}

/** Whether browsers may call the route cross-origin: its own declaration, else its authenticator's. */
export function corsOf(r: Route): boolean {
  const auth = authenticatorOf(r.auth);
  if (r.cors === true && !auth.crossOrigin) throw new Error(`route ${r.method} ${r.path}: cors is not allowed with its credentials`);
  return r.cors ?? auth.crossOrigin;
}

/** Whether the route's handler sees the caller's address, origin and user agent. */
export const wantsClient = (r: Route) => authenticatorOf(r.auth).client || r.client === true;

export interface RouteParts {
  route: Route;
  authenticator: Authenticator;
  codec: BodyCodec;
  paramNames: string[];
  /** a write whose path names a person (person_id): the person must exist before anything else is read */
  namesPerson: boolean;
  body?: Validator;
  query?: Validator;
}

export function compileRoute(r: Route): RouteParts {
  const codec = codecs[r.codec ?? 'json'];
  const authenticator = authenticatorOf(r.auth);
  // Declarations are typed; a name from untyped code fails at start-up, not on the first request.
  if (!authenticator || !codec) throw new Error(`route ${r.method} ${r.path}: unknown ${authenticator ? `codec "${r.codec}"` : `auth "${String(r.auth)}"`}`);
  const paramNames = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const parts: RouteParts = { route: r, authenticator, codec, paramNames, namesPerson: isMutating(r.method) && paramNames.includes('person_id') };
  if (r.body) parts.body = compileValidator(r.body, 'body', codec.fromText);
  if (r.query) parts.query = compileValidator(r.query, 'query', true);
  return parts;
}

/** What was copied out of uWS for one request. */
export interface Copied {
  params: readonly string[];
  query: string;
  headers: Record<string, string>;
  ip: string;
}

/**
 * Throws the request's first problem as a ServiceError (or rejects with it, when the route's authenticator
 * must wait); the order of checks is the contract's: who is calling, then the path, the query, the
 * consistency headers and the body.
 */
export function buildRequest(parts: RouteParts, copied: Copied, raw: Buffer | undefined, ctx: AuthContext): Request | Promise<Request> {
  const principal = parts.authenticator.authenticate(copied.headers, ctx, copied.query);
  if (principal instanceof Promise) return principal.then((p) => readRequest(parts, copied, raw, p, ctx));
  return readRequest(parts, copied, raw, principal, ctx);
}

function readRequest(parts: RouteParts, copied: Copied, raw: Buffer | undefined, principal: Principal, ctx: AuthContext): Request | Promise<Request> {
  const { route } = parts;
  const headers = copied.headers;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.paramNames.length; i++) {
    const name = parts.paramNames[i] as string;
    const value = copied.params[i] ?? '';
    try {
      params[name] = value.includes('%') ? decodeURIComponent(value) : value;
    } catch {
      throw badRequest(`${name}: malformed percent-encoding in the path`);
    }
  }
  // The path names someone who is not there: 404, whatever the query, headers or body hold. A decision that
  // loops over the body (an empty one included) would otherwise never look the person up. Reads are left to
  // their handlers, which may first wait for a consistency token to catch up.
  const named = parts.namesPerson ? orgOf(principal) : undefined;
  if (named !== undefined) requirePerson(named.state, params['person_id'] as string);
  let query: Record<string, unknown> = {};
  if (parts.query) query = parts.query(copied.query === '' ? {} : Object.fromEntries(new URLSearchParams(copied.query))) as Record<string, unknown>;
  else if (copied.query !== '') {
    // Like an unknown body field: a parameter the route would silently ignore is more likely a mistake.
    const [name] = new URLSearchParams(copied.query).keys();
    if (name !== undefined) throw badRequest(`${name.slice(0, 100)}: unknown query parameter (${route.method.toUpperCase()} ${route.path} takes none)`);
  }
  const consistency = isMutating(route.method) ? parseConsistency(headers) : LOCAL_REGION;

  let body: unknown;
  const bytes = raw ?? EMPTY_BODY;
  // A route whose body is optional treats an empty body as no body at all.
  if (parts.body && !(route.bodyOptional && bytes.length === 0)) {
    parts.codec.checkType(headers['content-type']);
    body = parts.body(parts.codec.decode(bytes, headers['content-type']));
  }
  const made = (principal: Principal): Request => ({
    params,
    query,
    body,
    principal,
    org: orgOf(principal) as OrgActor,
    consistency,
    ip: copied.ip,
    origin: headers['origin'] ?? '',
    userAgent: headers['user-agent'] ?? '',
    headers,
  });
  // A body credential may need a fetch (a client's jwks_uri) or a signature check: then the request waits for it.
  const after = parts.authenticator.authenticateBody ? parts.authenticator.authenticateBody(principal, body, ctx) : principal;
  return after instanceof Promise ? after.then(made) : made(after);
}
