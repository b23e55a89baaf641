// token-translation-upgrade (token enrichment): the incoming token goes to the customer's map_token_endpoint,
// whose {person_id, custom_claims} becomes a token of the service's mint-token API, which replaces target_headers.
import { createHash } from 'node:crypto';
import type { PluginConfig } from '../config.js';
import { checkParameters, param, tokenOf, type Decision, type Plugin } from './types.js';
import type { ServiceRef } from './validate-jwt.js';

const PARAMS = ['header_with_token', 'cookie_with_token', 'map_token_endpoint', 'service_base_url', 'service_org_id', 'service_api_key', 'target_headers', 'cache_size'] as const;

/** A minted token is not served from the cache in its last seconds, so the upstream never gets one about to lapse. */
const EXPIRY_MARGIN_MS = 5_000;

function fail(status: number, message: string, reason: string, extra: Record<string, unknown> = {}): Decision {
  return {
    action: 'answer',
    status,
    ...(status === 401 ? { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } } : {}),
    body: JSON.stringify({ errors: [{ httpcode: status, message }] }),
    metadata: { decision: 'deny', reason, ...extra },
  };
}

function expOf(token: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export function createTokenUpgrade(config: PluginConfig, service: ServiceRef | undefined, now: () => number = Date.now): Plugin {
  checkParameters(config, PARAMS);
  const at = `gate.plugins.${config.index}.parameters`;
  const endpoint = param<string>(config, 'map_token_endpoint', 'string');
  if (endpoint === undefined) throw new Error(`${at}.map_token_endpoint: missing`);
  const baseUrl = (param<string>(config, 'service_base_url', 'string') ?? service?.baseUrl)?.replace(/\/$/, '');
  const orgId = param<string>(config, 'service_org_id', 'string') ?? service?.orgId;
  const apiKey = param<string>(config, 'service_api_key', 'string') ?? service?.apiKey;
  if (baseUrl === undefined || orgId === undefined || apiKey === undefined) throw new Error(`${at}: service_base_url, service_org_id and service_api_key are needed (or gate.service)`);
  const header = param<string>(config, 'header_with_token', 'string');
  const cookie = param<string>(config, 'cookie_with_token', 'string');
  const targets = (param<string[]>(config, 'target_headers', 'strings') ?? ['Authorization']).map((h) => h.toLowerCase());
  const cacheSize = param<number>(config, 'cache_size', 'number') ?? 10_000;
  // Keyed by a hash of the incoming token: the cache never holds the customer's tokens themselves.
  const cache = new Map<string, { token: string; personId: string; expMs: number }>();

  const hit = (key: string) => {
    const e = cache.get(key);
    if (e === undefined) return undefined;
    if (e.expMs - EXPIRY_MARGIN_MS <= now()) {
      cache.delete(key);
      return undefined;
    }
    return e;
  };

  return {
    config,
    async handle(req, http) {
      const incoming = tokenOf(req, header, cookie);
      if (incoming === undefined) return fail(401, 'a token is required', 'no token');
      const key = createHash('sha256').update(incoming).digest('base64url');
      let entry = hit(key);
      const cached = entry !== undefined;
      if (entry === undefined) {
        const mapped = await http.call(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: incoming }) });
        if (mapped.status === 401 || mapped.status === 403 || mapped.status === 404) return fail(401, 'the token is not valid', `map_token_endpoint answered ${mapped.status}`);
        if (mapped.status !== 200) return fail(502, 'the token could not be translated', `map_token_endpoint answered ${mapped.status}`);
        let personId: unknown;
        let customClaims: unknown;
        try {
          ({ person_id: personId, custom_claims: customClaims } = JSON.parse(mapped.text) as Record<string, unknown>);
        } catch {
          return fail(502, 'the token could not be translated', 'map_token_endpoint answered no JSON');
        }
        if (typeof personId !== 'string' || personId === '') return fail(502, 'the token could not be translated', 'map_token_endpoint answered no person_id');
        const minted = await http.call(`${baseUrl}/persons/${encodeURIComponent(personId)}/mint-token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'service-orgid': orgId, 'service-api-key': apiKey },
          body: JSON.stringify(customClaims !== undefined ? { custom_claims: customClaims } : {}),
        });
        if (minted.status !== 201) {
          let message = '';
          try {
            message = String((JSON.parse(minted.text) as { errors?: { message?: string }[] }).errors?.[0]?.message ?? '');
          } catch {
            // keep the status alone
          }
          // The mapper's answer is the customer's configuration, not the client's fault: a 502 that says why.
          return fail(502, `the service refused to mint the token: ${minted.status} ${message}`.trim(), `mint-token answered ${minted.status}`, { person_id: personId });
        }
        const token = (JSON.parse(minted.text) as { result: string }).result;
        entry = { token, personId, expMs: expOf(token) ?? now() };
        cache.delete(key);
        cache.set(key, entry);
        if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
      }
      for (const h of targets) req.headers[h] = h === 'authorization' ? `Bearer ${entry.token}` : entry.token;
      return { action: 'continue', metadata: { decision: 'allow', cache: cached ? 'hit' : 'miss', person_id: entry.personId } };
    },
  };
}
