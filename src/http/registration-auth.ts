// The authenticators of dynamic client registration: an initial access token (RFC 7591 3) at the registration
// endpoint, a registration access token (RFC 7592 1) at a client's configuration endpoint. Both are bearer
// tokens that name where they belong (`{org id}.{secret}`, `{client_id}.{secret}`), so no organization
// header is needed, and both are compared by their SHA-256 with what the organization stored.
import { createHash, timingSafeEqual } from 'node:crypto';
import { findRegistrationToken } from '../domain/client-registration.js';
import { ServiceError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { ClientIndex } from '../oauth/client-index.js';
import type { Authenticator } from './auth.js';

/** RFC 6750 3.1 */
const invalidToken = (message: string) => new ServiceError('ERR_UNAUTHORIZED', message, { oauth: 'invalid_token', headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

function bearer(headers: Record<string, string>, what: string): string {
  const authorization = headers['authorization'];
  if (authorization === undefined) throw new ServiceError('ERR_UNAUTHORIZED', `Authorization: Bearer and ${what} is required`, { oauth: 'invalid_token', headers: { 'WWW-Authenticate': 'Bearer' } });
  const match = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization);
  if (!match) throw invalidToken(`Authorization: must be Bearer and ${what}`);
  return match[1] as string;
}

const common = { headers: ['authorization'], crossOrigin: true, client: false } as const;

export function initialAccessTokenAuthenticator(clock: Pick<Clock, 'nowMs'>): Authenticator {
  return {
    ...common,
    security: [{ initialAccessToken: [] }],
    schemes: { initialAccessToken: { type: 'http', scheme: 'bearer', description: 'an initial access token the organization issued (POST /oauth2/registration-tokens)' } },
    authenticate(headers, ctx) {
      const token = bearer(headers, 'an initial access token');
      const org = ctx.registry.get(token.slice(0, Math.max(0, token.indexOf('.'))));
      const hash = sha256(token);
      if (!org || findRegistrationToken(org.state, hash, clock.nowMs()) === undefined) throw invalidToken('the initial access token is unknown, revoked or expired');
      return { kind: 'registrar', org, token_hash: hash };
    },
  };
}

export function registrationAccessTokenAuthenticator(clients: ClientIndex): Authenticator {
  return {
    ...common,
    security: [{ registrationAccessToken: [] }],
    schemes: { registrationAccessToken: { type: 'http', scheme: 'bearer', description: 'the registration access token given when the client was registered' } },
    authenticate(headers) {
      const token = bearer(headers, 'the registration access token');
      const found = clients.find(token.slice(0, Math.max(0, token.indexOf('.'))));
      const stored = found?.client.registration_access_token_hash;
      const given = Buffer.from(sha256(token), 'hex');
      if (!found || stored === undefined || !timingSafeEqual(given, Buffer.from(stored, 'hex'))) throw invalidToken('the registration access token is unknown, or its client was deleted');
      return { kind: 'registered_client', org: found.org, client: found.client };
    },
  };
}
