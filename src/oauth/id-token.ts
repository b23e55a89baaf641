// The claims profiles of a person's OAuth tokens: the ID token (OpenID Connect Core 2, 3.1.3.6) and the
// access token (RFC 9068 2.2). Both carry what identity tokens carry (groups, roles, the hooks' claims at the
// sign-in), built on personClaims, so a claim added to identity tokens reaches them too.
import { createHash } from 'node:crypto';
import type { SignInFacts } from '../domain/oauth-grants.js';
import type { Person } from '../domain/state.js';
import { personClaims, type ClaimsProfile } from '../tokens/claims.js';
import { acrOf, amrOf } from './acr.js';

/** What a grant's tokens say besides the person: the client, the sign-in, and the grant they belong to. */
export interface GrantContext {
  client_id: string;
  scope: readonly string[];
  /** the grant (refresh-token family): revoking it makes its tokens inactive */
  grant_id: string;
  facts: SignInFacts;
}

/** OpenID Connect Core 5.4: the claims the email and phone scopes ask for, from the person's handles. */
export function scopedClaims(person: Pick<Person, 'handles'>, scope: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (scope.includes('email')) {
    const email = person.handles.find((h) => h.type === 'email_address');
    // A handle was proven by signing in with it or set by the organization; neither is a verified address.
    if (email) Object.assign(out, { email: email.value, email_verified: false });
  }
  if (scope.includes('phone')) {
    const phone = person.handles.find((h) => h.type === 'phone_number');
    if (phone) Object.assign(out, { phone_number: phone.value, phone_number_verified: false });
  }
  return out;
}

/**
 * The claims common to both tokens, after personClaims (whose authenticated_methods are the grant's sign-in's
 * already): the sign-in as OpenID Connect names it.
 */
function withSignIn(claims: Record<string, unknown>, g: GrantContext): Record<string, unknown> {
  claims['auth_time'] = g.facts.auth_time;
  claims['amr'] = amrOf(g.facts.amr);
  claims['acr'] = acrOf(g.facts.amr);
  claims['sid'] = g.grant_id;
  return claims;
}

/**
 * RFC 9068 access token for the person: aud the issuer (its userinfo and introspection endpoints accept it),
 * client_id, scope; the hooks' claims at the sign-in come from the grant, not from a request.
 */
export function accessTokenProfile(g: GrantContext, audience: string): ClaimsProfile {
  return (input) => {
    // The token template shapes identity tokens (the ID token among them), not access tokens.
    const claims = withSignIn(personClaims({ ...input, template_claims: undefined, custom_claims: g.facts.custom_claims }, audience), g);
    claims['client_id'] = g.client_id;
    claims['scope'] = g.scope.join(' ');
    return claims;
  };
}

/**
 * The left half of the access token's hash, by the hash of the ID token's own algorithm (Core 3.1.3.6):
 * SHA-256 for ES256 and RS256, SHA-512 for EdDSA (Ed25519).
 */
export function atHash(accessToken: string): string {
  const header = JSON.parse(Buffer.from(accessToken.slice(0, accessToken.indexOf('.')), 'base64url').toString('utf8')) as { alg?: string };
  const digest = createHash(header.alg === 'EdDSA' ? 'sha512' : 'sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export interface IdTokenExtras {
  person: Pick<Person, 'handles'>;
  /** the authorization request's, on the code's ID token only */
  nonce?: string | undefined;
  access_token: string;
}

/** The ID token: aud the client (azp too), nonce, auth_time, amr, at_hash, and the scopes' claims. */
export function idTokenProfile(g: GrantContext, extras: IdTokenExtras): ClaimsProfile {
  return (input) => {
    const claims = withSignIn(personClaims({ ...input, custom_claims: g.facts.custom_claims }, g.client_id), g);
    claims['azp'] = g.client_id;
    if (extras.nonce !== undefined) claims['nonce'] = extras.nonce;
    claims['at_hash'] = atHash(extras.access_token);
    Object.assign(claims, scopedClaims(extras.person, g.scope));
    return claims;
  };
}
