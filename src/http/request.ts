// A handler's Request from what the front copied out of uWebSockets.js: authentication, path parameters,
// the query, the consistency headers and the JSON body, checked in the contract's order.
import { ServiceError, badRequest } from '../errors.js';
import type { OrgActor } from '../org/actor.js';
import type { Registry } from '../org/registry.js';
import { isMutating, type Consistency, type Request, type Route } from './route.js';
import { checkDepth, checkUnicode, compileValidator, type Validator } from './validate.js';

const ORG_ID = /^[A-Za-z0-9_-]{1,64}$/;
const JSON_MAX_DEPTH = 64;
const EMPTY_BODY = Buffer.alloc(0);

/** Without the consistency headers a write waits for the local region, up to 30 s. Shared, so frozen. */
const LOCAL_REGION: Consistency = Object.freeze({ level: 'local_region', timeoutMs: 30_000 });

export function parseConsistency(headers: Record<string, string>): Consistency {
  const rawLevel = headers['service-required-consistency'];
  const rawTimeout = headers['service-required-consistency-timeout'];
  if (rawLevel === undefined && rawTimeout === undefined) return LOCAL_REGION;
  const level = rawLevel || 'local_region';
  if (level !== 'local_region' && level !== 'all_regions') {
    throw badRequest(`Service-Required-Consistency: must be local_region or all_regions, got "${level}"`);
  }
  let timeout = 30;
  if (rawTimeout !== undefined && rawTimeout !== '') {
    if (!/^\d{1,3}$/.test(rawTimeout) || Number(rawTimeout) < 1 || Number(rawTimeout) > 120) {
      throw badRequest(`Service-Required-Consistency-Timeout: must be an integer from 1 to 120 seconds, got "${rawTimeout}"`);
    }
    timeout = Number(rawTimeout);
  }
  return { level, timeoutMs: timeout * 1000 };
}

/** The headers a route's request is built from: copying one out of uWS costs, so only these are. */
export function routeHeaders(r: Route): string[] {
  const names = ['service-orgid', 'service-api-key', 'service-operator-key', 'content-length', 'transfer-encoding'];
  if (r.body) names.push('content-type');
  if (isMutating(r.method)) names.push('service-required-consistency', 'service-required-consistency-timeout');
  // Origin is read for CORS, which only public and end-user routes allow.
  if (r.auth === 'none' || r.auth === 'org' || r.client) names.push('origin');
  if (r.auth === 'org' || r.client) names.push('user-agent');
  return names;
}

/** Whether the route's handler sees the caller's address, origin and user agent. */
export const wantsClient = (r: Route) => r.auth === 'org' || r.client === true;

export interface RouteParts {
  route: Route;
  paramNames: string[];
  body?: Validator;
  query?: Validator;
}

export function compileRoute(r: Route): RouteParts {
  const parts: RouteParts = { route: r, paramNames: [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string) };
  if (r.body) parts.body = compileValidator(r.body, 'body', false);
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

export interface AuthOptions {
  operatorKey: string | undefined;
  checkOperatorKey(presented: string): boolean;
}

/** Throws the request's first problem as a ServiceError; the order of checks is the contract's. */
export function buildRequest(parts: RouteParts, copied: Copied, raw: Buffer | undefined, registry: Registry, auth: AuthOptions): Request {
  const { route } = parts;
  const headers = copied.headers;
  let org: OrgActor | undefined;
  if (route.auth === 'operator') {
    if (auth.operatorKey === undefined) throw new ServiceError('ERR_NOT_FOUND', 'operator endpoints are disabled (SERVICE_OPERATOR_KEY is not set)');
    if (!auth.checkOperatorKey(headers['service-operator-key'] ?? '')) throw new ServiceError('ERR_UNAUTHORIZED', 'Service-Operator-Key is missing or wrong');
  } else if (route.auth !== 'none') {
    const orgId = headers['service-orgid'];
    if (orgId === undefined) throw badRequest('Service-OrgID header is required');
    if (!ORG_ID.test(orgId)) throw badRequest('Service-OrgID: must be 1-64 characters of A-Z a-z 0-9 _ -');
    if (route.auth === 'key') {
      const result = registry.authenticate(orgId, headers['service-api-key']);
      if (!result.ok) throw result.error;
      org = result.actor;
    } else {
      org = registry.get(orgId);
      if (!org) throw new ServiceError('ERR_NOT_FOUND', `organization ${orgId} not found`);
    }
  }

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
    const contentType = headers['content-type'];
    if (contentType !== undefined && !/^application\/json\s*(;|$)/i.test(contentType)) {
      throw new ServiceError('ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, got "${contentType}"`);
    }
    if (bytes.length === 0) throw badRequest('body: a JSON request body is required');
    const text = bytes.toString('utf8');
    checkDepth(text, JSON_MAX_DEPTH);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw badRequest(`body: malformed JSON (${(error as Error).message})`);
    }
    checkUnicode(text, parsed);
    body = parts.body(parsed);
  }
  return {
    params,
    query,
    body,
    org: org as OrgActor,
    consistency,
    ip: copied.ip,
    origin: headers['origin'] ?? '',
    userAgent: headers['user-agent'] ?? '',
    headers,
  };
}
