// Scope parameters (RFC 6749 3.3): space-delimited scope tokens, granted only within what the client may ask for.
import { SCOPE_TOKEN } from '../domain/oauth-clients.js';
import { STANDARD_SCOPES } from './discovery.js';
import { oauthError } from './errors.js';

/**
 * The scope to grant: the requested one when every token of it is among `allowed`, or all of `allowed` when
 * none was requested (3.3 lets the server default; the client's registered scopes are its ceiling anyway).
 */
export function grantScope(requested: string | undefined, allowed: readonly string[]): string {
  if (requested === undefined) return allowed.join(' ');
  const asked = requested.split(' ');
  for (const s of asked) {
    if (!SCOPE_TOKEN.test(s)) throw oauthError('invalid_scope', `scope: ${JSON.stringify(s.slice(0, 64))} is not a scope token (one space between scopes, no quotes or backslashes)`);
    if (!allowed.includes(s)) throw oauthError('invalid_scope', `scope: the client may not ask for ${JSON.stringify(s.slice(0, 64))}`);
  }
  return requested;
}

/**
 * A person's grant's scope (the authorization and device endpoints): the requested scope tokens, once each, and
 * the first one the client may not ask for, if any: the standard scopes any client may, the others must be its own.
 */
export function personScope(requested: string | undefined, clientScopes: readonly string[]): { scope: string[]; refused?: string } {
  const scope = [...new Set((requested ?? '').split(' ').filter((s) => s !== ''))];
  const refused = scope.find((s) => !STANDARD_SCOPES.includes(s) && !clientScopes.includes(s));
  return refused === undefined ? { scope } : { scope, refused };
}
