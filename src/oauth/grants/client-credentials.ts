// The client_credentials grant (RFC 6749 4.4): a confidential client gets an access token for itself, within
// its registered scopes. No person and no refresh token; no TokenMinted (that event is about a person's
// identity token and requires person_id), and nothing is written: the token is revoked by its jti, or with
// its client.
import { oauthError } from '../errors.js';
import { grantScope } from '../scopes.js';
import type { Grant } from './grant.js';

/** RFC 8707 2: an absolute URI without a fragment. */
export function resourceOf(resource: string | undefined): string | undefined {
  if (resource === undefined) return undefined;
  let ok = false;
  try {
    ok = new URL(resource).hash === '' && !resource.includes('#');
  } catch {}
  if (!ok) throw oauthError('invalid_target', 'resource: must be an absolute URI without a fragment');
  return resource;
}

/**
 * RFC 8707 2.2: the audience a client may ask for is one registered for it (its `resources`), or the issuer,
 * the default; any other is invalid_target, so a client cannot mint tokens for a resource server that is not its.
 */
function audienceFor(resource: string | undefined, registered: readonly string[] | undefined, issuer: string): string | undefined {
  const aud = resourceOf(resource);
  if (aud === undefined || aud === issuer || registered?.includes(aud)) return aud;
  throw oauthError('invalid_target', `resource: ${JSON.stringify(aud)} is not registered for this client (its resources)`);
}

export const clientCredentials: Grant = (request, deps) => {
  const { caller, params, dpop } = request;
  // A public client cannot keep a secret, so it has no credentials to grant on (also refused at registration).
  if (caller.method === 'none') throw oauthError('unauthorized_client', 'client_credentials needs a confidential client');
  const scope = grantScope(params.scope, caller.client.scopes);
  const aud = audienceFor(params.resource, caller.client.resources, deps.issuer());
  const pending = deps.accessTokens.issue({ client: caller.client, sub: caller.client.client_id, scope, ...(aud !== undefined && { aud }), ...(dpop !== undefined && { extra: { cnf: { jkt: dpop.jkt } } }) });
  const expires_in = pending.exp - pending.iat;
  return pending.token.then((access_token) => ({ access_token, token_type: dpop === undefined ? 'Bearer' : 'DPoP', expires_in, scope }));
};
