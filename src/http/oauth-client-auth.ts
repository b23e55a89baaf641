// The OAuth client as a caller: the authenticator of the token, introspection and revocation routes. The
// Basic header is checked first; client_secret_post, private_key_jwt and none need the form, so they run as
// the second step, on the decoded body. One authenticator for all three methods keeps the "exactly one method" rule
// (RFC 6749 2.3) in one place, and the handlers receive an authenticated client like any other principal.
import type { AuthenticatedClient, ClientAuthenticator } from '../oauth/client-auth.js';
import { oauthError } from '../oauth/errors.js';
import { CREDENTIALS, type Authenticator, type Principal } from './auth.js';

type ClientPrincipal = Principal & { kind: 'oauth_client' };

/** No Authorization header: the body step decides. Never reaches a handler. */
const PENDING: Principal = Object.freeze({ kind: 'public' });

/** One frozen principal per client object and method: authenticating allocates nothing more. */
const made = new WeakMap<object, Partial<Record<AuthenticatedClient['method'], ClientPrincipal>>>();
function principalOf(a: AuthenticatedClient): ClientPrincipal {
  let byMethod = made.get(a.client);
  if (byMethod === undefined) made.set(a.client, (byMethod = {}));
  let p = byMethod[a.method];
  // The organization's actor may have been replaced since: a principal always carries the current one.
  if (p === undefined || p.org !== a.org) byMethod[a.method] = p = Object.freeze({ kind: 'oauth_client', org: a.org, client: a.client, method: a.method });
  return p;
}

export function oauthClientAuthenticator(clients: ClientAuthenticator): Authenticator {
  return {
    headers: ['authorization'],
    // Public clients (browser apps with PKCE) call the token endpoint from their own origins.
    crossOrigin: true,
    client: false,
    // client_secret_post and none carry client_id (and client_secret) in the form: no OpenAPI scheme says so.
    security: [{ clientSecretBasic: [] }, {}],
    schemes: { clientSecretBasic: { type: 'http', scheme: 'basic', description: 'client_secret_basic: the form-urlencoded client_id and client_secret' } },
    authenticate(headers) {
      const authorization = headers['authorization'];
      if (authorization === undefined) return PENDING;
      if (!CREDENTIALS.test(authorization)) throw oauthError('invalid_request', 'Authorization: must be a scheme and a token68 (Basic base64 of client_id:client_secret)');
      return principalOf(clients.basic(authorization));
    },
    authenticateBody(principal, body) {
      const form = (body ?? {}) as { client_id?: string; client_secret?: string; client_assertion?: string; client_assertion_type?: string };
      if (principal.kind === 'oauth_client') {
        if (form.client_secret !== undefined || form.client_assertion !== undefined) throw oauthError('invalid_request', 'a client authenticates with one method only: Authorization: Basic, client_secret or client_assertion, not two');
        if (form.client_id !== undefined && form.client_id !== principal.client.client_id) throw oauthError('invalid_request', 'client_id: differs from the client of the Authorization header');
        return principal;
      }
      if (form.client_assertion !== undefined) {
        if (form.client_secret !== undefined) throw oauthError('invalid_request', 'a client authenticates with one method only: client_secret or client_assertion, not both');
        return clients.assertion({ client_id: form.client_id, client_assertion_type: form.client_assertion_type, client_assertion: form.client_assertion }).then(principalOf);
      }
      return principalOf(clients.post(form.client_id, form.client_secret));
    },
  };
}
