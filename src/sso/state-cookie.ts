// The cookie that binds an SSO sign-in's state to the browser that started it: signed (HMAC-SHA256), HttpOnly,
// SameSite=Lax (sent on the provider's top-level redirect back, not on cross-site subrequests), 10 minutes.
import { cookieValues, createSealer, type Sealer } from '../lib/signed.js';

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

/** The cookies' sealer: a service secret specialised so that it signs nothing else, and survives restarts. */
export const createStateSealer = (secret: Uint8Array): Sealer => createSealer(secret, 'sso state cookie');

/** secure: add the Secure attribute (the service is reached over https). */
export function createStateCookies(sealer: Sealer, secure: boolean): StateCookies {
  const attributes = `Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  return {
    issue(binding, nowMs) {
      const value = sealer.seal(STATE_COOKIE, [binding.state, binding.org, binding.client_id, binding.expires], Math.ceil(binding.expires / 1000));
      const maxAge = Math.max(0, Math.ceil((binding.expires - nowMs) / 1000));
      return `${STATE_COOKIE}=${value}; Max-Age=${maxAge}; ${attributes}`;
    },
    clear: () => `${STATE_COOKIE}=; Max-Age=0; ${attributes}`,
    read(header) {
      for (const value of cookieValues(header, STATE_COOKIE)) {
        // Expired bindings are read too: the flow tells an expired state from a forged one.
        const opened = sealer.open<[string, string, string, number]>(STATE_COOKIE, value, Number.NEGATIVE_INFINITY);
        if (opened) return { state: opened[0], org: opened[1], client_id: opened[2], expires: opened[3] };
      }
      return undefined;
    },
  };
}
