// Client authentication at the token, introspection and revocation endpoints (RFC 6749 2.3): client_secret_basic,
// client_secret_post, private_key_jwt (RFC 7523 2.2, OpenID Connect Core 9), or none for a public client.
// Secrets are compared as SHA-256 digests in constant time; a fast hash is enough for a 256-bit random secret,
// and this is the token endpoint's hot path.
import { createHash, timingSafeEqual } from 'node:crypto';
import { authMethodOf } from '../domain/oauth-clients.js';
import type { OAuthClient } from '../domain/state.js';
import type { OrgActor } from '../org/actor.js';
import { ClientAssertionError, type ClientAssertionVerifier } from '../tokens/client-assertion.js';
import type { ClientIndex } from './client-index.js';
import { oauthError } from './errors.js';
import type { OnceCheck } from '../lib/replay-guard.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
export const CLIENT_AUTH_METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'];
/** RFC 7523 2.2 */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

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

export interface AssertionForm {
  client_id?: string | undefined;
  client_assertion_type?: string | undefined;
  client_assertion: string;
}

export interface ClientAuthenticator {
  /** client_secret_basic: the Authorization header */
  basic(header: string): AuthenticatedClient;
  /** client_secret_post, or none: the form's client_id and client_secret */
  post(clientId: string | undefined, secret: string | undefined): AuthenticatedClient;
  /** private_key_jwt: the form's client_assertion (and client_id, optional: the assertion's sub names it) */
  assertion(form: AssertionForm): Promise<AuthenticatedClient>;
}

export interface AssertionDeps {
  verifier: ClientAssertionVerifier;
  /** each jti once per client while the assertion lives */
  replays: OnceCheck;
  /** the audience an assertion must name: the issuer (RFC 7523bis) */
  issuer(): string;
}

/** The sub of an unverified JWT, to find whose keys verify it; anything else about it is untrusted until then. */
function subjectOf(assertion: string): string | undefined {
  const payload = assertion.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

export function createClientAuthenticator(index: ClientIndex, assertions: AssertionDeps): ClientAuthenticator {
  const confidential = (clientId: string, secret: string, method: ClientAuthMethod): AuthenticatedClient => {
    const found = index.find(clientId);
    if (!found || !secretMatches(found.client, secret)) throw unknownClient();
    // a client registered for private_key_jwt keeps any old secret only for a switch back
    if (authMethodOf(found.client) === 'private_key_jwt') throw oauthError('invalid_client', 'client authentication failed: the client is registered for private_key_jwt');
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
    async assertion(form) {
      // RFC 7521 4.2: a missing or other type is a malformed request; a bad assertion fails authentication
      if (form.client_assertion_type !== JWT_BEARER_ASSERTION) throw oauthError('invalid_request', `client_assertion_type: must be ${JWT_BEARER_ASSERTION}`);
      const clientId = form.client_id ?? subjectOf(form.client_assertion);
      const found = clientId === undefined ? undefined : index.find(clientId);
      if (!found) throw oauthError('invalid_client', 'client authentication failed: unknown client (client_id, or the assertion\'s sub)');
      if (authMethodOf(found.client) !== 'private_key_jwt') throw oauthError('invalid_client', `client authentication failed: the client is registered for ${authMethodOf(found.client)}, not private_key_jwt`);
      let verified;
      try {
        verified = await assertions.verifier.verify(form.client_assertion, found.client, assertions.issuer());
      } catch (error) {
        if (error instanceof ClientAssertionError) throw oauthError('invalid_client', error.message);
        throw error;
      }
      // RFC 7523 3 item 7: the jti is used once; the key is the client's own space of jti values.
      if (!(await assertions.replays.firstUse(`${found.client.client_id}\u0000${verified.jti}`, verified.exp))) throw oauthError('invalid_client', 'client_assertion: its jti was used already; make a new assertion for each request');
      return { org: found.org, client: found.client, method: 'private_key_jwt' };
    },
  };
}
