// The hosted sign-in page's browser session and its form's integrity: values signed with a key derived from
// the service's cursor secret, carried in HttpOnly, SameSite=Lax cookies and a hidden form field.
import { randomBytes } from 'node:crypto';
import { createSealer, readCookie, type Sealer } from '../lib/signed.js';
import type { SignInFacts } from '../domain/oauth-grants.js';
import { passwordCredentialId } from '../domain/credentials.js';
import type { Person } from '../domain/state.js';

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
  /**
   * the person's password credential when they signed in: every password change or reset gives a new one
   * (re-hashing an imported hash keeps it), and the session ends with it; null when they had no password
   */
  password: string | null;
}

/** The password credential a session is bound to. */
export const sessionPassword = (person: Person): string | null => passwordCredentialId(person) ?? null;

/** Whether the session still stands for the person: their password is the one they signed in with. */
export const sessionCurrent = (session: Session, person: Person): boolean => session.password === sessionPassword(person);

/** The hosted page's sealer: the service's secret specialised so that it signs nothing else. */
export const createSessionSealer = (secret: Buffer): Sealer => createSealer(secret, 'oauth2 hosted sign-in');

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
