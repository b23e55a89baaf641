// The cookie that binds an SSO sign-in's state to the browser that started it: signed (HMAC-SHA256), HttpOnly,
// SameSite=Lax (sent on the provider's top-level redirect back, not on cross-site subrequests), 10 minutes.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export const STATE_COOKIE = 'sso_state';
export const STATE_TTL_MS = 10 * 60_000;
/** Sent only to the callback: no other route of the service ever sees it. */
export const COOKIE_PATH = '/authenticate/oidc/callback';

/** What the cookie vouches for: the flow's state, its organization and credential, and when it lapses. */
export interface StateBinding {
  state: string;
  org: string;
  client_id: string;
  /** epoch ms */
  expires: number;
}

export interface StateCookies {
  /** The Set-Cookie value that binds this flow to the browser. */
  issue(binding: StateBinding, nowMs: number): string;
  /** The Set-Cookie value that removes it. */
  clear(): string;
  /** The binding of a request's Cookie header, if it holds a cookie this service signed (expired or not). */
  read(cookieHeader: string | undefined): StateBinding | undefined;
}

/** The cookie key, derived from a service secret so that it survives restarts without a stored key of its own. */
export function deriveCookieKey(secret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'sso state cookie', 32));
}

/** secure: add the Secure attribute (the service is reached over https). */
export function createStateCookies(key: Buffer, secure: boolean): StateCookies {
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest('base64url');
  const attributes = `Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  return {
    issue(binding, nowMs) {
      const payload = Buffer.from(JSON.stringify([binding.state, binding.org, binding.client_id, binding.expires])).toString('base64url');
      const maxAge = Math.max(0, Math.ceil((binding.expires - nowMs) / 1000));
      return `${STATE_COOKIE}=${payload}.${mac(payload)}; Max-Age=${maxAge}; ${attributes}`;
    },
    clear: () => `${STATE_COOKIE}=; Max-Age=0; ${attributes}`,
    read(header) {
      if (!header) return undefined;
      for (const part of header.split(';')) {
        const eq = part.indexOf('=');
        if (part.slice(0, eq).trim() !== STATE_COOKIE) continue;
        const [payload = '', tag = ''] = part.slice(eq + 1).trim().split('.');
        const expected = Buffer.from(mac(payload));
        const given = Buffer.from(tag);
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) continue;
        try {
          const [state, org, client_id, expires] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, string, string, number];
          if (typeof state === 'string' && typeof org === 'string' && typeof client_id === 'string' && typeof expires === 'number') return { state, org, client_id, expires };
        } catch {
          // signed by us, so never malformed; a forgery fails the MAC first
        }
      }
      return undefined;
    },
  };
}
