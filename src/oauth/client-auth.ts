// Client authentication at the token, introspection and revocation endpoints (RFC 6749 2.3): client_secret_basic,
// client_secret_post, or none for a public client. Secrets are compared as SHA-256 digests in constant time;
// a fast hash is enough for a 256-bit random secret, and this is the token endpoint's hot path.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OAuthClient } from '../domain/state.js';
import type { OrgActor } from '../org/actor.js';
import type { ClientIndex } from './client-index.js';
import { oauthError } from './errors.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';
export const CLIENT_AUTH_METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];

export interface AuthenticatedClient {
  readonly org: OrgActor;
  readonly client: OAuthClient;
  readonly method: ClientAuthMethod;
}

/** The stored digest's bytes per client object: clients are replaced on change, so the cache follows. */
const digests = new WeakMap<OAuthClient, Buffer>();
function storedDigest(client: OAuthClient): Buffer {
  let d = digests.get(client);
  if (d === undefined) digests.set(client, (d = Buffer.from(client.secret_hash, 'hex')));
  return d;
}

export function secretMatches(client: OAuthClient, presented: string): boolean {
  if (client.public || client.secret_hash === '') return false;
  const stored = storedDigest(client);
  const given = createHash('sha256').update(presented).digest();
  return given.length === stored.length && timingSafeEqual(given, stored);
}

const unknownClient = () => oauthError('invalid_client', 'client authentication failed: unknown client or wrong secret');

/** RFC 6749 2.3.1: the Basic credentials are the form-urlencoded client ID and secret. */
function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw oauthError('invalid_client', 'Authorization: the Basic credentials are not form-urlencoded');
  }
}

export function parseBasic(header: string): { clientId: string; secret: string } {
  if (!/^basic /i.test(header)) throw oauthError('invalid_client', 'Authorization: only the Basic scheme authenticates a client here');
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw oauthError('invalid_client', 'Authorization: Basic credentials must be client_id:client_secret');
  return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

export interface ClientAuthenticator {
  /** client_secret_basic: the Authorization header */
  basic(header: string): AuthenticatedClient;
  /** client_secret_post, or none: the form's client_id and client_secret */
  post(clientId: string | undefined, secret: string | undefined): AuthenticatedClient;
}

export function createClientAuthenticator(index: ClientIndex): ClientAuthenticator {
  const confidential = (clientId: string, secret: string, method: ClientAuthMethod): AuthenticatedClient => {
    const found = index.find(clientId);
    if (!found || !secretMatches(found.client, secret)) throw unknownClient();
    return { org: found.org, client: found.client, method };
  };
  return {
    basic(header) {
      const { clientId, secret } = parseBasic(header);
      return confidential(clientId, secret, 'client_secret_basic');
    },
    post(clientId, secret) {
      if (clientId === undefined || clientId === '') throw oauthError('invalid_client', 'client authentication is required: Authorization: Basic, or client_id (and client_secret) in the form');
      if (secret !== undefined) return confidential(clientId, secret, 'client_secret_post');
      const found = index.find(clientId);
      if (!found) throw unknownClient();
      // none: only a public client may present no secret (RFC 6749 2.1; it is held to PKCE instead).
      if (!found.client.public) throw oauthError('invalid_client', 'client authentication failed: a confidential client must present its secret');
      return { org: found.org, client: found.client, method: 'none' };
    },
  };
}
