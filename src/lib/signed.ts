// Values only this service could have made (an HMAC-SHA256 over the value, bound to a purpose and an expiry),
// for cookies and form fields the browser carries, and the cookies of a Cookie header.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface Sealer {
  /** A value that only this service could have made, for `purpose`, valid until `expires` (seconds). */
  seal(purpose: string, value: unknown, expires: number): string;
  /**
   * The value, or undefined when forged, made for another purpose, malformed or expired at `now` (seconds;
   * -Infinity for a caller that judges the expiry itself).
   */
  open<T>(purpose: string, sealed: string, now: number): T | undefined;
}

/** The key is a service secret (stored sealed by SERVICE_SECRETS_KEY), specialised by `label` so it signs nothing else. */
export function createSealer(secret: Uint8Array, label: string): Sealer {
  const key = createHmac('sha256', secret).update(label).digest();
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

/** Every value of the named cookie in a Cookie header (RFC 6265 5.4), in order. */
export function cookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  if (header === undefined) return values;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** The first value of the named cookie, or undefined. */
export const readCookie = (header: string | undefined, name: string): string | undefined => cookieValues(header, name)[0];
