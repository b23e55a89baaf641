// validate-jwt: tokens of our service (its JWKS, issuer and organization) or of a third-party issuer, checked
// before the upstream sees the request; OPTIONS is validated too unless skip_options lets CORS preflights through.
// A token bound to a key (RFC 9449 cnf.jkt) passes only as `Authorization: DPoP` with a fresh proof of that key.
import { decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { parseDuration } from '../../domain/webhook-rules.js';
import type { Counter } from '../../lib/metrics.js';
import type { PluginConfig } from '../config.js';
import type { HttpCaller } from '../round-trip.js';
import { isIdentityToken } from '../../tokens/validate.js';
import { DPOP_MAX_AGE_S, DPOP_SKEW_S, DpopProofError, createDpopProofVerifier } from '../../tokens/dpop-proof.js';
import { createReplayGuard } from '../../lib/replay-guard.js';
import { checkParameters, param, tokenOf, type Decision, type GateRequest, type Plugin } from './types.js';

const PARAMS = [
  'service_base_url', 'service_org_id', 'service_issuer', 'required_groups', 'groups_claim', 'allow_anonymous',
  'header_with_token', 'cookie_with_token', 'forward_person_id', 'jwks_url', 'issuer', 'audience', 'algorithms',
  'jwks_refetch_interval', 'jwks_max_age', 'clock_leeway', 'verified_cache_size', 'verified_cache_ttl', 'revocation_check', 'skip_options',
] as const;

const ASYMMETRIC = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA', 'Ed25519'];

export interface ServiceRef {
  baseUrl: string;
  orgId: string;
  apiKey: string;
}

interface KeySet {
  keys: Map<string, JWK>;
  fetchedAt: number;
}

function unauthorized(reason: string, noToken = false, challenge?: string): Decision {
  return {
    action: 'answer',
    status: 401,
    headers: { 'www-authenticate': challenge ?? (noToken ? 'Bearer' : 'Bearer error="invalid_token"') },
    body: JSON.stringify({ errors: [{ httpcode: 401, message: noToken ? 'a bearer token is required' : 'the token is not valid' }] }),
    metadata: { decision: 'deny', reason },
  };
}

export function createValidateJwt(config: PluginConfig, service: ServiceRef | undefined, fetches?: Counter, now: () => number = Date.now): Plugin {
  checkParameters(config, PARAMS);
  const jwksUrlParam = param<string>(config, 'jwks_url', 'string');
  const thirdParty = jwksUrlParam !== undefined;
  const baseUrl = (param<string>(config, 'service_base_url', 'string') ?? service?.baseUrl)?.replace(/\/$/, '');
  const orgId = param<string>(config, 'service_org_id', 'string') ?? service?.orgId;
  if (!thirdParty && (baseUrl === undefined || orgId === undefined)) {
    throw new Error(`gate.plugins.${config.index}: validate-jwt needs service_base_url and service_org_id (or gate.service), or jwks_url for a third-party issuer`);
  }
  const jwksUrl = jwksUrlParam ?? `${baseUrl}/.well-known/jwks.json`;
  const issuerParam = param<string>(config, thirdParty ? 'issuer' : 'service_issuer', 'string');
  const audience = param<string>(config, 'audience', 'string');
  const algorithms = param<string[]>(config, 'algorithms', 'strings') ?? ASYMMETRIC;
  for (const a of algorithms) if (!ASYMMETRIC.includes(a)) throw new Error(`gate.plugins.${config.index}.parameters.algorithms: "${a}" is not an asymmetric JWS algorithm`);
  const requiredGroups = param<string[]>(config, 'required_groups', 'strings') ?? [];
  const groupsClaim = param<string>(config, 'groups_claim', 'string') ?? 'groups';
  const allowAnonymous = param<boolean>(config, 'allow_anonymous', 'boolean') ?? false;
  const header = param<string>(config, 'header_with_token', 'string');
  const cookie = param<string>(config, 'cookie_with_token', 'string');
  if (header !== undefined && cookie !== undefined) throw new Error(`gate.plugins.${config.index}: header_with_token and cookie_with_token exclude each other`);
  const forwardPersonId = param<boolean>(config, 'forward_person_id', 'boolean') ?? false;
  const skipOptions = param<boolean>(config, 'skip_options', 'boolean') ?? false;
  const refetchMs = parseDuration(param<string>(config, 'jwks_refetch_interval', 'string') ?? '5s', 'jwks_refetch_interval');
  const maxAgeMs = parseDuration(param<string>(config, 'jwks_max_age', 'string') ?? '10m', 'jwks_max_age');
  const leewaySec = parseDuration(param<string>(config, 'clock_leeway', 'string') ?? '5s', 'clock_leeway') / 1000;

  // Revocation is known to the service only: with revocation_check, a token verified here is also asked about at
  // POST /token/validate before it is admitted, and again once it leaves the cache of verified tokens.
  const revocationCheck = param<boolean>(config, 'revocation_check', 'boolean') ?? false;
  if (revocationCheck && thirdParty) throw new Error(`gate.plugins.${config.index}: revocation_check is for the service's own tokens, not a jwks_url issuer's`);
  const cacheSize = param<number>(config, 'verified_cache_size', 'number') ?? 10_000;
  const cacheTtlMs = parseDuration(param<string>(config, 'verified_cache_ttl', 'string') ?? '30s', 'verified_cache_ttl');
  // Tokens whose signature and claims were verified, by their exact text: a hit skips the signature check but
  // not the expiry. Entries live at most verified_cache_ttl, so a key withdrawn from the JWKS stops counting soon.
  const verified = new Map<string, { payload: JWTPayload; until: number }>();

  let set: KeySet | undefined;
  let issuer = issuerParam;
  const imported = new Map<string, Awaited<ReturnType<typeof importJWK>>>();
  let inFlight: Promise<void> | undefined;

  const fetchKeys = async (http: HttpCaller): Promise<void> => {
    let res;
    try {
      res = await http.call(jwksUrl, { headers: { accept: 'application/json' } });
    } catch (error) {
      fetches?.inc({ plugin_id: config.id, result: 'unreachable' });
      throw error;
    }
    fetches?.inc({ plugin_id: config.id, result: String(res.status) });
    if (res.status !== 200) throw new Error(`${jwksUrl} answered ${res.status}`);
    const doc = JSON.parse(res.text) as { keys?: JWK[] };
    const keys = new Map<string, JWK>();
    for (const k of doc.keys ?? []) if (typeof k.kid === 'string' && (k.use === undefined || k.use === 'sig')) keys.set(k.kid, k);
    set = { keys, fetchedAt: now() };
    imported.clear();
    if (issuer === undefined && !thirdParty) {
      const disc = await http.call(`${baseUrl}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } });
      if (disc.status === 200) issuer = (JSON.parse(disc.text) as { issuer?: string }).issuer;
    }
  };

  /** One fetch at a time; a failed fetch keeps the keys already held (the service may be down). */
  const refresh = async (http: HttpCaller): Promise<void> => {
    inFlight ??= fetchKeys(http).finally(() => (inFlight = undefined));
    try {
      await inFlight;
    } catch {
      if (set !== undefined) set.fetchedAt = now();
    }
  };

  const keyFor = async (kid: string, http: HttpCaller): Promise<JWK | undefined> => {
    if (set === undefined || now() - set.fetchedAt > maxAgeMs) await refresh(http);
    let jwk = set?.keys.get(kid);
    // An unknown kid may be a key the service has just rotated in: one refetch, at most once per interval.
    if (jwk === undefined && set !== undefined && now() - set.fetchedAt >= refetchMs) {
      await refresh(http);
      jwk = set?.keys.get(kid);
    }
    return jwk;
  };

  // RFC 9449 7: proofs of DPoP-bound tokens, each used once while it could be accepted
  const proofs = createDpopProofVerifier({ nowMs: now });
  const usedProofs = createReplayGuard({ nowMs: now });

  const plugin: Plugin = {
    config,
    handle(req, http) {
      if (skipOptions && req.method === 'OPTIONS') return { action: 'continue', metadata: { decision: 'skip', reason: 'OPTIONS requests are not validated' } };
      const dpopToken = header === undefined && cookie === undefined ? dpopTokenOf(req) : undefined;
      const token = dpopToken ?? tokenOf(req, header, cookie);
      if (token === undefined) return unauthorized('no token', true);
      const hit = verified.get(token);
      if (hit !== undefined) {
        if (hit.until > now()) return bound(req, token, hit.payload, dpopToken !== undefined, true);
        verified.delete(token);
      }
      return verify(req, token, http, dpopToken !== undefined);
    },
  };
  return plugin;

  /** `Authorization: DPoP <token>`: RFC 9449 7.1's scheme for a bound token. */
  function dpopTokenOf(req: GateRequest): string | undefined {
    const m = /^DPoP\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    return m ? m[1] : undefined;
  }

  /**
   * A token bound to a key (cnf.jkt) passes only with a proof of that key for this request, checked on every
   * request (a proof is not cached); an unbound token only as a bearer token.
   */
  async function boundCheck(req: GateRequest, token: string, payload: JWTPayload, asDpop: boolean): Promise<string | undefined> {
    const cnf = payload['cnf'] as { jkt?: unknown } | undefined;
    const jkt = typeof cnf?.jkt === 'string' ? cnf.jkt : undefined;
    if (jkt === undefined) return asDpop ? 'DPoP scheme for a token not bound to a key' : undefined;
    if (!asDpop) return 'a DPoP-bound token presented as a bearer token';
    const proof = req.headers['dpop'];
    if (typeof proof !== 'string') return 'no DPoP proof';
    try {
      const verified = await proofs.verify(proof, { method: req.method, url: `${req.url.origin}${req.url.pathname}`, accessToken: token });
      if (verified.jkt !== jkt) return 'DPoP proof of another key';
      if (!usedProofs.firstUse(`${verified.jkt}\u0000${verified.jti}`, verified.iat + DPOP_MAX_AGE_S + DPOP_SKEW_S)) return 'DPoP proof used already';
    } catch (error) {
      if (error instanceof DpopProofError) return error.message;
      throw error;
    }
    return undefined;
  }

  function bound(req: GateRequest, token: string, payload: JWTPayload, asDpop: boolean, cached: boolean): Decision | Promise<Decision> {
    // a bearer token that is not bound needs no proof: the common path stays synchronous
    if (!asDpop && payload['cnf'] === undefined) return admit(req, payload, cached);
    return boundCheck(req, token, payload, asDpop).then((refused) => (refused === undefined ? admit(req, payload, cached) : unauthorized(refused, false, 'DPoP error="invalid_token"')));
  }

  /** A token not in the cache of verified ones: header, key (fetched if new), signature and claims. */
  async function verify(req: GateRequest, token: string, http: HttpCaller, asDpop: boolean): Promise<Decision> {
    let kid: string | undefined;
    let alg: string | undefined;
    let typ: string | undefined;
    try {
      const h = decodeProtectedHeader(token);
      kid = h.kid;
      alg = h.alg;
      typ = h.typ;
    } catch {
      return unauthorized('malformed token');
    }
    if (alg === undefined || !algorithms.includes(alg)) return unauthorized(`algorithm ${String(alg)} not accepted`);
    if (kid === undefined) return unauthorized('no kid');
    const jwk = await keyFor(kid, http);
    if (jwk === undefined) return unauthorized(set === undefined ? 'key set unavailable' : 'unknown kid');
    // The key's own algorithm, never the token's choice.
    const keyAlg = jwk.alg;
    if (keyAlg === undefined || keyAlg !== alg) return unauthorized(`algorithm ${alg} does not match the key's`);
    let key = imported.get(kid);
    if (key === undefined) {
      key = await importJWK(jwk, keyAlg);
      imported.set(kid, key);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [keyAlg],
        requiredClaims: ['exp'],
        clockTolerance: leewaySec,
        currentDate: new Date(now()),
        ...(issuer !== undefined ? { issuer } : {}),
        ...(audience !== undefined ? { audience } : {}),
      }));
    } catch (error) {
      return unauthorized((error as { code?: string }).code ?? 'invalid');
    }
    if (!thirdParty) {
      // The service's keys also sign OAuth access and ID tokens, which third-party clients hold: only a
      // person's identity token passes, of this organization.
      if (!isIdentityToken(typ, payload)) return unauthorized('not an identity token');
      if (payload['oid'] !== orgId) return unauthorized('token of another organization');
      if (issuer === undefined) return unauthorized('issuer unknown');
    }
    if (revocationCheck) {
      const refused = await askService(token, http);
      if (refused !== undefined) return unauthorized(refused);
    }
    if (cacheSize > 0) {
      verified.set(token, { payload, until: Math.min(now() + cacheTtlMs, (payload.exp as number) * 1000 + leewaySec * 1000) });
      if (verified.size > cacheSize) verified.delete(verified.keys().next().value as string);
    }
    return bound(req, token, payload, asDpop, false);
  }

  /** Whether the service still holds the token valid (revoked, person deactivated): a reason to refuse, or
   * undefined. An unreachable service refuses too: a revocation check that fails open would check nothing. */
  async function askService(token: string, http: HttpCaller): Promise<string | undefined> {
    try {
      const res = await http.call(`${baseUrl}/token/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      if (res.status !== 200) return `revocation check answered ${res.status}`;
      const verdict = (JSON.parse(res.text) as { result?: { valid?: boolean; revoked?: boolean; invalidity_reason?: string } }).result;
      if (verdict?.valid === true) return undefined;
      return verdict?.revoked ? 'revoked' : (verdict?.invalidity_reason ?? 'invalid at the service');
    } catch {
      return 'revocation check unavailable';
    }
  }

  /** The checks after the signature: anonymous persons, groups; then the claims for later plugins. */
  function admit(req: GateRequest, payload: JWTPayload, cached: boolean): Decision {
    if (!allowAnonymous && (payload['person_type'] === 'anonymous' || payload['anonymous'] === true)) return unauthorized('anonymous person');
    const personId = typeof payload.sub === 'string' ? payload.sub : typeof payload['person_id'] === 'string' ? payload['person_id'] : '';
    if (requiredGroups.length > 0) {
      const groups = Array.isArray(payload[groupsClaim]) ? (payload[groupsClaim] as unknown[]) : [];
      const missing = requiredGroups.filter((g) => !groups.includes(g));
      if (missing.length > 0) {
        return {
          action: 'answer',
          status: 403,
          headers: { 'www-authenticate': 'Bearer error="insufficient_scope"' },
          body: JSON.stringify({ errors: [{ httpcode: 403, message: 'the person is not in the groups this resource requires' }] }),
          metadata: { decision: 'deny', reason: 'groups', person_id: personId, missing_groups: missing },
        };
      }
    }
    req.claims = payload as Record<string, unknown>;
    if (forwardPersonId && personId !== '') req.headers['service-personid'] = personId;
    return { action: 'continue', metadata: { decision: 'allow', person_id: personId, cache: cached ? 'hit' : 'miss' } };
  }
}
