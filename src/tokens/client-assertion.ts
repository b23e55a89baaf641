// Client assertions (RFC 7523 2.2 and 3, OpenID Connect Core 9 private_key_jwt): a JWT the client signs with
// its own key, checked against the keys it registered (jwks) or publishes (jwks_uri, fetched through the
// guarded fetch the service gives, which applies the outbound address guard). Replay of its jti is the caller's
// concern: this file only says whether the assertion is genuine and fresh, and until when.
import { createPublicKey, KeyObject, type JsonWebKey } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, type CryptoKey, type JWSHeaderParameters, type JWTVerifyGetKey } from 'jose';
import { ALG_SPECS, compactParts, decodeJsonPart, keyFits, signatureVerifies } from './jws.js';
import type { Clock } from '../lib/clock.js';
import type { GuardedFetch } from '../lib/guarded-connect.js';
import { KEY_CARRYING_HEADERS } from './own-key.js';

/** Asymmetric signatures only: a shared secret (HS*) is client_secret_jwt, which is not offered, and none never. */
export const CLIENT_ASSERTION_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** how far in the future an assertion may expire: a bound on how long its jti must be remembered */
export const MAX_ASSERTION_LIFETIME_S = 600;
/** clock difference tolerated between the client and this server */
export const ASSERTION_SKEW_S = 15;

export interface AssertingClient {
  client_id: string;
  jwks?: { keys: Array<Record<string, unknown>> };
  jwks_uri?: string;
}

export interface VerifiedAssertion {
  jti: string;
  /** seconds */
  exp: number;
}

/** Why an assertion is refused, in words safe to show the client. */
export class ClientAssertionError extends Error {
  override name = 'ClientAssertionError';
}

export interface ClientAssertionVerifier {
  /** Rejects with ClientAssertionError for anything but a genuine, fresh assertion of this client for this audience. */
  verify(assertion: string, client: AssertingClient, audience: string): Promise<VerifiedAssertion>;
}

/** the most of a jwks_uri answer that is read: a published set far above what registration accepts is refused unread */
export const MAX_JWKS_RESPONSE_BYTES = 64 * 1024;

/** jose's fetch options for a remote set: ours are the timeout (5 s), a refetch at most every 30 s for an unknown kid, and 10 min of cache */
const REMOTE = { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 600_000 };

/** The body of an answer, or a refusal once it passes `limit` bytes, so a hostile server cannot fill memory. */
async function boundedBody(res: Response, limit: number): Promise<Uint8Array> {
  if (Number(res.headers.get('content-length') ?? 0) > limit) {
    await res.body?.cancel();
    throw new ClientAssertionError(`jwks_uri: the answer is larger than ${limit} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  for (let part = await reader?.read(); part !== undefined && !part.done; part = await reader?.read()) {
    size += part.value.length;
    if (size > limit) {
      await reader?.cancel();
      throw new ClientAssertionError(`jwks_uri: the answer is larger than ${limit} bytes`);
    }
    chunks.push(part.value);
  }
  return Buffer.concat(chunks);
}

export function createClientAssertionVerifier(options: { clock: Pick<Clock, 'nowMs'>; fetch: GuardedFetch }): ClientAssertionVerifier {
  const { clock } = options;
  // Per client object: a changed client (new keys, new URI) is a new object, so the cache follows it.
  const keySets = new WeakMap<object, JWTVerifyGetKey>();
  // jose's deadline (its signal) ends the fetch; the guarded fetch answers redirects instead of following them.
  const remoteFetch = async (url: string, init: { signal: AbortSignal }) => {
    const res = await options.fetch(url, { signal: init.signal, headers: { accept: 'application/jwk-set+json, application/json' } });
    const body = await boundedBody(res, MAX_JWKS_RESPONSE_BYTES);
    return new Response(body, { status: res.status, headers: { 'content-type': 'application/json' } });
  };
  const keysOf = (client: AssertingClient): JWTVerifyGetKey => {
    let set = keySets.get(client);
    if (set !== undefined) return set;
    if (client.jwks !== undefined) set = createLocalJWKSet(client.jwks as Parameters<typeof createLocalJWKSet>[0]);
    else if (client.jwks_uri !== undefined) set = createRemoteJWKSet(new URL(client.jwks_uri), { ...REMOTE, [customFetch]: remoteFetch });
    else throw new ClientAssertionError('the client has no registered keys (jwks or jwks_uri)');
    keySets.set(client, set);
    return set;
  };

  // jose picks the key (by kid and alg, fetching a jwks_uri as needed) and caches its import; the verify is
  // node:crypto's with a KeyObject made once per key.
  const keyObjects = new WeakMap<object, KeyObject>();
  const keyObjectOf = (key: Awaited<ReturnType<JWTVerifyGetKey>>): KeyObject | undefined => {
    if (key instanceof Uint8Array) return undefined;
    if (key instanceof KeyObject) return key;
    let object = keyObjects.get(key);
    if (object === undefined) {
      try {
        object = 'kty' in key ? createPublicKey({ key: key as JsonWebKey, format: 'jwk' }) : KeyObject.from(key as CryptoKey);
      } catch {
        return undefined;
      }
      keyObjects.set(key, object);
    }
    return object;
  };
  /** The signature against the client's key for the header, or each candidate when several match (jose lists them). */
  async function signatureValid(header: JWSHeaderParameters & { alg: string }, client: AssertingClient, input: string, signature: string): Promise<boolean> {
    const spec = ALG_SPECS[header.alg]!;
    const fits = async (key: Awaited<ReturnType<JWTVerifyGetKey>>) => {
      const object = keyObjectOf(key);
      return object !== undefined && keyFits(spec, object) && (await signatureVerifies(spec, object, input, signature));
    };
    let key;
    try {
      key = await keysOf(client)(header, { payload: '', signature });
    } catch (error) {
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
      for await (const candidate of error as unknown as AsyncIterable<CryptoKey>) if (await fits(candidate)) return true;
      return false;
    }
    return fits(key);
  }

  return {
    async verify(assertion, client, audience) {
      const parts = compactParts(assertion);
      const header = parts && decodeJsonPart(parts[0]);
      if (parts === undefined || header === undefined) throw new ClientAssertionError('client_assertion: not a compact JWS');
      // The key is the one the client registered, never one the assertion points to.
      const carried = KEY_CARRYING_HEADERS.find((h) => h in header);
      if (carried !== undefined) throw new ClientAssertionError(`client_assertion: the ${carried} header is not accepted; the key comes from the client's registration`);
      if (typeof header.alg !== 'string' || !CLIENT_ASSERTION_ALGS.includes(header.alg)) throw new ClientAssertionError(`client_assertion: alg must be one of ${CLIENT_ASSERTION_ALGS.join(', ')}`);
      // no extension is understood, so any critical one refuses the assertion (RFC 7515 4.1.11)
      if (header.crit !== undefined) throw new ClientAssertionError('client_assertion: no crit header parameter is supported');
      const [headerPart, payloadPart, signature] = parts;
      let valid: boolean;
      try {
        valid = await signatureValid(header as JWSHeaderParameters & { alg: string }, client, `${headerPart}.${payloadPart}`, signature);
      } catch (error) {
        throw new ClientAssertionError(describe(error), { cause: error });
      }
      if (!valid) throw new ClientAssertionError(describe(new errors.JWSSignatureVerificationFailed()));
      const payload = decodeJsonPart(payloadPart);
      if (payload === undefined) throw new ClientAssertionError('client_assertion: the claims must be a JSON object');
      const nowS = Math.floor(clock.nowMs() / 1000);
      checkClaims(payload, client.client_id, nowS);
      // RFC 7523bis: the audience is this server's issuer identifier, as the only value. A token endpoint URL
      // is refused: a client told another server's endpoint would otherwise make assertions usable here.
      const aud = payload.aud;
      if (!(aud === audience || (Array.isArray(aud) && aud.length === 1 && aud[0] === audience))) {
        throw new ClientAssertionError(`client_assertion: aud must be the issuer ${JSON.stringify(audience)} as its only value`);
      }
      const exp = payload.exp as number;
      if (exp - nowS > MAX_ASSERTION_LIFETIME_S) throw new ClientAssertionError(`client_assertion: exp is more than ${MAX_ASSERTION_LIFETIME_S} seconds away; make short-lived assertions`);
      if (typeof payload.iat === 'number' && payload.iat > nowS + ASSERTION_SKEW_S) throw new ClientAssertionError('client_assertion: iat is in the future');
      const jti = payload.jti;
      if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new ClientAssertionError('client_assertion: jti must be a string of 1-256 characters');
      return { jti, exp };
    },
  };
}

const REQUIRED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'jti'];

/** RFC 7519 4.1 and RFC 7523 3: present, iss and sub the client, exp not passed, nbf reached, iat a number; in jose's words. */
function checkClaims(payload: Record<string, unknown>, clientId: string, nowS: number): void {
  const failed = (claim: string, reason: string) => new ClientAssertionError(`client_assertion: the ${claim} claim ${reason}${claim === 'iss' || claim === 'sub' ? ' (must be the client_id)' : ''}`);
  for (const claim of REQUIRED_CLAIMS) if (!(claim in payload)) throw failed(claim, 'is missing');
  if (payload.iss !== clientId) throw failed('iss', 'is wrong');
  if (payload.sub !== clientId) throw failed('sub', 'is wrong');
  if (payload.iat !== undefined && typeof payload.iat !== 'number') throw failed('iat', 'is wrong');
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > nowS + ASSERTION_SKEW_S)) throw failed('nbf', 'is wrong');
  if (typeof payload.exp !== 'number') throw failed('exp', 'is wrong');
  if (payload.exp <= nowS - ASSERTION_SKEW_S) throw new ClientAssertionError('client_assertion: expired (exp)');
}

function describe(error: unknown): string {
  if (error instanceof ClientAssertionError) return error.message;
  if (error instanceof errors.JWTExpired) return 'client_assertion: expired (exp)';
  if (error instanceof errors.JWTClaimValidationFailed) return `client_assertion: the ${error.claim} claim ${error.reason === 'missing' ? 'is missing' : 'is wrong'}${error.claim === 'iss' || error.claim === 'sub' ? ' (must be the client_id)' : ''}`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'client_assertion: the signature does not verify with the client\'s keys';
  if (error instanceof errors.JWKSNoMatchingKey) return 'client_assertion: no registered key of the client matches its kid and alg';
  if (error instanceof errors.JWKSTimeout) return 'jwks_uri: no answer in time';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'client_assertion: alg not allowed';
  if (error instanceof errors.JOSEError) return `client_assertion: ${error.message}`;
  // the fetch of jwks_uri failed (a forbidden address, a connection error, a too large answer)
  return `jwks_uri: could not be fetched (${error instanceof Error ? error.message : 'unknown error'})`;
}
