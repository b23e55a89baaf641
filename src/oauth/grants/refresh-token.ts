// The refresh_token grant (RFC 6749 6): rotation on every use, reuse revoking the family (RFC 9700 4.14.2),
// a narrower scope on request; the new tokens are of the grant's sign-in, as the first ones were.
import type { GrantOutcome } from '../../domain/oauth-grants.js';
import { oauthError } from '../errors.js';
import { newRefreshToken, sha256 } from '../user-tokens.js';
import type { Grant } from './grant.js';

export const refreshToken: Grant = async ({ caller, params, consistency, dpop }, deps) => {
  const { org, client } = caller;
  const presented = params.refresh_token;
  if (!presented) throw oauthError('invalid_request', 'refresh_token is required');
  const dot = presented.indexOf('.');
  if (dot <= 0) throw oauthError('invalid_grant', 'the refresh token is unknown or expired');
  const grantId = presented.slice(0, dot);
  const current = org.state.oauth_grants.get(grantId);
  // RFC 6749 6: a narrower scope may be asked for, never a wider one.
  let scope = current?.scope;
  if (params.scope !== undefined && current !== undefined && current.client_id === client.client_id) {
    const asked = [...new Set(params.scope.split(' ').filter((s) => s !== ''))];
    const wider = asked.find((s) => !current.scope.includes(s));
    if (wider !== undefined) throw oauthError('invalid_scope', `scope "${wider.slice(0, 100)}" was not granted`);
    scope = asked;
  }
  const next = newRefreshToken(grantId);
  const { reply } = await org.execute<GrantOutcome>({
    kind: 'RotateOAuthRefresh',
    input: { grant_id: grantId, presented_hash: sha256(presented), client_id: client.client_id, next_hash: sha256(next), grant_ttl_ms: client.refresh_token_duration * 1000, ...(dpop !== undefined && { jkt: dpop.jkt }) },
  });
  if (!reply.ok) throw oauthError(reply.error, reply.description);
  return deps.users.issue(org, client, { ...reply.grant, scope: scope ?? reply.grant.scope }, consistency, { refresh_token: next, binding: dpop });
};
