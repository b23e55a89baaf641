// The authorization_code grant (RFC 6749 4.1.3, RFC 7636 4.6): the code the hosted page issued for a person's
// sign-in is redeemed once, by its client, with its redirect_uri and PKCE verifier, and begins a grant whose
// tokens are of that sign-in.
import type { GrantOutcome } from '../../domain/oauth-grants.js';
import { oauthError } from '../errors.js';
import { sha256 } from '../user-tokens.js';
import type { Grant } from './grant.js';

/** RFC 7636 4.1 */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export const authorizationCode: Grant = async ({ caller, params, consistency, dpop }, deps) => {
  const { org, client } = caller;
  if (!params.code) throw oauthError('invalid_request', 'code is required');
  // RFC 6749 4.1.3: required when the authorization request had it; it could omit it only for a client with
  // one registered redirect URI, which the code is then bound to.
  const redirectUri = params.redirect_uri || (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
  if (!redirectUri) throw oauthError('invalid_request', 'redirect_uri is required: the one of the authorization request');
  if (params.code_verifier !== undefined && !VERIFIER.test(params.code_verifier)) throw oauthError('invalid_grant', 'code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~');
  const { refresh_token, ...fresh } = deps.users.begin(client, client.grant_types.includes('refresh_token'));
  const { reply } = await org.execute<GrantOutcome>({
    kind: 'RedeemOAuthCode',
    input: {
      ...fresh,
      code_hash: sha256(params.code),
      client_id: client.client_id,
      redirect_uri: redirectUri,
      verifier_challenge: params.code_verifier === undefined ? undefined : sha256(params.code_verifier),
      // RFC 9449 5: a public client's refresh token is bound to the key of its proof; a confidential one authenticates
      ...(refresh_token !== undefined && dpop !== undefined && client.public === true && { jkt: dpop.jkt }),
    },
  });
  if (!reply.ok) throw oauthError(reply.error, reply.description);
  return deps.users.issue(org, client, reply.grant, consistency, { nonce: reply.code?.nonce, refresh_token, binding: dpop });
};
