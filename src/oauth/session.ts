// The hosted sign-in page's browser session and its form's integrity: values signed with a key derived from
// the service's cursor secret, carried in HttpOnly, SameSite=Lax cookies and a hidden form field.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SignInFacts } from '../domain/oauth-grants.js';

export const SESSION_COOKIE = 'oauth_session';
export const CSRF_COOKIE = 'oauth_csrf';
/** How long a browser stays signed in at the hosted page; max_age and prompt=login ask for less. */
export const SESSION_TTL_S = 12 * 3600;
/** How long a rendered sign-in form may be submitted. */
export const FORM_TTL_S = 15 * 60;
/** Browsers keep at least 4096 bytes per cookie; custom claims that would not fit are left out of the session. */
const COOKIE_MAX = 3800;

/** Who is signed in at the hosted page, in which organization. */
export interface Session extends SignInFacts {
  org: string;
  /** seconds since the epoch */
  expires: number;
}

export interface Sealer {
  /** A value that only this service could have made, for `purpose`, valid until `expires` (seconds). */
  seal(purpose: string, value: object, expires: number): string;
  /** The value, or undefined when forged, made for another purpose, malformed or expired at `now` (seconds). */
  open<T>(purpose: string, sealed: string, now: number): T | undefined;
}

/** The key is the service's secret (stored sealed by SERVICE_SECRETS_KEY), specialised so it signs nothing else. */
export function createSealer(secret: Buffer): Sealer {
  const key = createHmac('sha256', secret).update('oauth2 hosted sign-in').digest();
  const mac = (purpose: string, body: string) => createHmac('sha256', key).update(purpose).update('\n').update(body).digest();
  return {
    seal(purpose, value, expires) {
      const body = Buffer.from(JSON.stringify({ e: expires, v: value })).toString('base64url');
      return `${body}.${mac(purpose, body).toString('base64url')}`;
    },
    open<T>(purpose: string, sealed: string, now: number): T | undefined {
      const dot = sealed.indexOf('.');
      if (dot <= 0) return undefined;
      const body = sealed.slice(0, dot);
      const given = Buffer.from(sealed.slice(dot + 1), 'base64url');
      const want = mac(purpose, body);
      if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
      try {
        const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { e: number; v: T };
        return typeof parsed.e === 'number' && parsed.e > now ? parsed.v : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** The named cookie of a Cookie header (RFC 6265 5.4), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Path /oauth2: the authorization endpoint and the sign-in form are the only readers. */
export function setCookie(name: string, value: string, maxAge: number, secure: boolean): string {
  return `${name}=${value}; Path=/oauth2; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function sessionCookie(sealer: Sealer, session: Omit<Session, 'expires'>, now: number, secure: boolean): string {
  const expires = now + SESSION_TTL_S;
  let value = sealer.seal(SESSION_COOKIE, { ...session, expires }, expires);
  if (value.length > COOKIE_MAX) {
    const { custom_claims: _dropped, ...rest } = session;
    value = sealer.seal(SESSION_COOKIE, { ...rest, expires }, expires);
  }
  return setCookie(SESSION_COOKIE, value, SESSION_TTL_S, secure);
}

export function readSession(sealer: Sealer, cookieHeader: string | undefined, now: number): Session | undefined {
  const raw = readCookie(cookieHeader, SESSION_COOKIE);
  return raw === undefined ? undefined : sealer.open<Session>(SESSION_COOKIE, raw, now);
}

/** A fresh value for the double-submit check of the sign-in form (login CSRF, RFC 9700 4.4.1.8). */
export const newCsrf = (): string => randomBytes(18).toString('base64url');
