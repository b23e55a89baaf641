// The token exchange grant (RFC 8693): a confidential client presents a token of this service (an access
// token, or an identity token of the organization's person) and gets a narrower access token for another
// audience, naming the actor when it acts for the subject (actor_token, claim act). What it may ask for is its
// policy (the client's token_exchange): the audiences, and whose tokens it may present.
import type { TokenExchangePolicy } from '../../domain/state.js';
import { oauthError } from '../errors.js';
import { grantScope } from '../scopes.js';
import type { Grant, OwnTokens } from './grant.js';

/** RFC 8693 3: the token type identifiers this grant takes and issues. */
export const TOKEN_TYPE = {
  access_token: 'urn:ietf:params:oauth:token-type:access_token',
  id_token: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
} as const;

/** What a presented token stands for, once its own kind's validator accepted it. */
interface Presented {
  sub: string;
  /** the access token's client; undefined for an identity token */
  client_id?: string;
  /** the access token's scope; undefined for an identity token, which has none */
  scope?: string[];
  /** seconds */
  exp: number;
  /** the person's grant an access token belongs to: the exchanged token ends with it */
  sid?: string;
  /** an earlier delegation's chain (RFC 8693 4.1) */
  act?: unknown;
}

const NO_POLICY: TokenExchangePolicy = { audiences: [], subject_clients: [], identity_tokens: false };

/**
 * The token as its declared type says, validated by that kind's validator: an access token is never taken for
 * an identity token nor the other way round. RFC 8693 2.2.2: an invalid token is invalid_request.
 */
async function presented(which: 'subject_token' | 'actor_token', token: string | undefined, type: string | undefined, caller: { orgId: string; clientId: string; policy: TokenExchangePolicy }, tokens: OwnTokens): Promise<Presented> {
  const { orgId, policy } = caller;
  if (!token) throw oauthError('invalid_request', `${which} is required`);
  if (!type) throw oauthError('invalid_request', `${which}_type is required`);
  if (type === TOKEN_TYPE.access_token) {
    const active = await tokens.accessToken(token);
    if (!active || active.org.id !== orgId) throw oauthError('invalid_request', `${which}: not an active access token of this organization (invalid, expired, revoked, or of another kind)`);
    const c = active.claims;
    // The client acting for the subject may name itself with its own token; any other client's must be in its policy.
    const own = which === 'actor_token' && c.client_id === caller.clientId;
    if (!own && !policy.subject_clients.includes(c.client_id)) throw oauthError('invalid_request', `${which}: the client's token exchange policy does not take tokens of client ${JSON.stringify(c.client_id)}`);
    return { sub: c.sub, client_id: c.client_id, scope: c.scope.split(' ').filter((s) => s !== ''), exp: c.exp, ...(typeof c['sid'] === 'string' && { sid: c['sid'] }), ...(c['act'] !== undefined && { act: c['act'] }) };
  }
  if (type === TOKEN_TYPE.id_token || type === TOKEN_TYPE.jwt) {
    const identified = await tokens.identityToken(token);
    if (!('person_id' in identified) || identified.org !== orgId) throw oauthError('invalid_request', `${which}: not a valid identity token of this organization (invalid, expired, revoked, or of another kind)`);
    if (!policy.identity_tokens) throw oauthError('invalid_request', `${which}: the client's token exchange policy does not take identity tokens`);
    return { sub: identified.person_id, exp: identified.claims.exp as number };
  }
  throw oauthError('invalid_request', `${which}_type: must be ${TOKEN_TYPE.access_token} or ${TOKEN_TYPE.id_token} (an identity token of this service; ${TOKEN_TYPE.jwt} is taken as the same)`);
}

/** RFC 8693 2.1: one target, as audience or resource; the policy must list it (else invalid_target, 2.2.2). */
function targetOf(audience: string | undefined, resource: string | undefined, policy: TokenExchangePolicy): string {
  if (audience !== undefined && resource !== undefined && audience !== resource) throw oauthError('invalid_target', 'audience and resource name different targets; one token has one audience here');
  const target = audience ?? resource;
  if (target === undefined || target === '') throw oauthError('invalid_request', 'audience or resource is required: the target the new token is for');
  if (!policy.audiences.includes(target)) throw oauthError('invalid_target', `${JSON.stringify(target.slice(0, 200))} is not an audience the client's token exchange policy allows`);
  return target;
}

export const tokenExchange: Grant = async ({ caller, params, dpop }, deps) => {
  const { org, client } = caller;
  const policy = client.token_exchange ?? NO_POLICY;
  const requested = params['requested_token_type'];
  if (requested !== undefined && requested !== TOKEN_TYPE.access_token) throw oauthError('invalid_request', `requested_token_type: only ${TOKEN_TYPE.access_token} is issued`);
  const aud = targetOf(params['audience'], params.resource, policy);
  const of = { orgId: org.id, clientId: client.client_id, policy };
  const subject = await presented('subject_token', params['subject_token'], params['subject_token_type'], of, deps.ownTokens);
  const actor = params['actor_token'] === undefined && params['actor_token_type'] === undefined ? undefined : await presented('actor_token', params['actor_token'], params['actor_token_type'], of, deps.ownTokens);
  // Narrower: within the subject's scope (an identity token has none: then the client's), never wider.
  const scope = grantScope(params.scope, subject.scope ?? client.scopes);
  // RFC 8693 4.1: the acting party, with the chain of earlier actors nested below it.
  const act = actor === undefined ? undefined : { sub: actor.sub, ...(actor.client_id !== undefined && { client_id: actor.client_id }), ...(subject.act !== undefined && { act: subject.act }) };
  const extra: Record<string, unknown> = {};
  if (act !== undefined) extra['act'] = act;
  else if (subject.act !== undefined) extra['act'] = subject.act;
  // The person's grant it descends from: revoking that grant ends this token too (introspect.ts checks sid).
  if (subject.sid !== undefined) extra['sid'] = subject.sid;
  // RFC 9449 5: bound to the key of this request's proof, as every grant's token; never to the subject token's key
  if (dpop !== undefined) extra['cnf'] = { jkt: dpop.jkt };
  // It never outlives the token it was exchanged for.
  const left = Math.min(subject.exp, actor?.exp ?? Infinity) - Math.floor(deps.nowMs() / 1000);
  if (left <= 0) throw oauthError('invalid_request', 'subject_token: expired');
  const lifetime = Math.min(client.access_token_duration, left);
  const pending = deps.accessTokens.issue({ client: { ...client, access_token_duration: lifetime }, sub: subject.sub, scope, aud, extra });
  const access_token = await pending.token;
  return { access_token, issued_token_type: TOKEN_TYPE.access_token, token_type: dpop === undefined ? 'Bearer' : 'DPoP', expires_in: pending.exp - pending.iat, scope };
};
