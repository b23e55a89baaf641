// Sign in with Apple: its credential fields (a PKCS8 P-256 key, 10-character team and key IDs, the
// client-secret lifetime) and the client-secret JWT Apple expects in place of a static client secret.
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { badRequest, quote } from '../errors.js';

export const APPLE_AUDIENCE = 'https://appleid.apple.com';
export const SECRET_LIFETIME_MIN_S = 300;
/** six months */
export const SECRET_LIFETIME_MAX_S = 15_777_000;
/** 30 days */
export const SECRET_LIFETIME_DEFAULT = '720h';

const PKCS8_PEM = /^\s*-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----\s*$/;
const APPLE_ID = /^[\x21-\x7e]{10}$/;

/**
 * The key as a KeyObject, when `pem` is an unencrypted PKCS8 PEM holding an EC P-256 private key (Apple's
 * .p8 file). SEC1 ("BEGIN EC PRIVATE KEY"), encrypted PKCS8 and other curves are refused.
 */
export function parseApplePrivateKey(pem: string, field = 'options.apple.private_key'): KeyObject {
  const refuse = (why: string) => badRequest(`${field}: ${why}; expected an ES256 (P-256) private key in PKCS8 PEM form, as Apple's .p8 file holds it`);
  if (!PKCS8_PEM.test(pem)) throw refuse('not a PEM "BEGIN PRIVATE KEY" block');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw refuse('the key does not parse');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw refuse('not an EC P-256 key');
  return key;
}

/** The key in canonical PKCS8 PEM, as it is stored. */
export function canonicalApplePrivateKey(pem: string, field?: string): string {
  return parseApplePrivateKey(pem, field).export({ format: 'pem', type: 'pkcs8' }).toString();
}

export function checkAppleId(value: string, field: string): string {
  if (!APPLE_ID.test(value)) throw badRequest(`${field}: must be exactly 10 characters (printable, no spaces), got ${quote(value)}`);
  return value;
}

const DURATION = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const UNIT_NS: Record<string, bigint> = { ns: 1n, us: 1_000n, µs: 1_000n, μs: 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n };

/** A Go-style duration in nanoseconds, exactly (fractions included), or undefined when it is not one. */
function durationNs(raw: string): bigint | undefined {
  if (raw === '0') return 0n;
  if (!DURATION.test(raw)) return undefined;
  let total = 0n;
  for (const m of raw.matchAll(/(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/g)) {
    const frac = m[2] ?? '';
    const scale = 10n ** BigInt(frac.length);
    total += (BigInt((m[1] || '0') + frac) * (UNIT_NS[m[3] as string] as bigint)) / scale;
  }
  return total;
}

/** A Go-style duration ("300s", "5m", "24h", "720h", "1h30m") in whole seconds, from 300 s to 15,777,000 s. */
export function secretLifetimeSeconds(raw: string, field = 'options.apple.secret_lifetime'): number {
  const ns = durationNs(raw);
  if (ns === undefined) throw badRequest(`${field}: ${quote(raw)} is not a duration such as 5m, 24h, 720h or 1h30m`);
  if (ns < BigInt(SECRET_LIFETIME_MIN_S) * 1_000_000_000n || ns > BigInt(SECRET_LIFETIME_MAX_S) * 1_000_000_000n) {
    throw badRequest(`${field}: must be from ${SECRET_LIFETIME_MIN_S}s (5m) to ${SECRET_LIFETIME_MAX_S}s (about 6 months), got ${quote(raw)}`);
  }
  if (ns % 1_000_000_000n !== 0n) throw badRequest(`${field}: must be a whole number of seconds, got ${quote(raw)}`);
  return Number(ns / 1_000_000_000n);
}

export interface AppleSecretInput {
  client_id: string;
  team_id: string;
  key_id: string;
  /** PKCS8 PEM, or the key already parsed */
  private_key: string | KeyObject;
  secret_lifetime: string;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * The client secret Apple's token endpoint expects: an ES256 JWT with kid = key_id, iss = team_id,
 * sub = client_id, aud = https://appleid.apple.com, and exp = iat + secret_lifetime.
 */
export function appleClientSecret(input: AppleSecretInput, nowMs: number): string {
  const key = typeof input.private_key === 'string' ? parseApplePrivateKey(input.private_key) : input.private_key;
  const iat = Math.floor(nowMs / 1000);
  const header = b64url({ alg: 'ES256', kid: input.key_id });
  const claims = b64url({ iss: input.team_id, iat, exp: iat + secretLifetimeSeconds(input.secret_lifetime), aud: APPLE_AUDIENCE, sub: input.client_id });
  const signingInput = `${header}.${claims}`;
  // JWS wants the raw r||s signature, not DER.
  const signature = sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}
