// The OIDC providers of the seed, their always-requested (and default) scopes, and how supplied scopes merge.
import { badRequest, quote } from '../errors.js';

/** `service` is the seed's "the service": a generic OIDC provider at options.service.organization_url. */
export const SSO_PROVIDERS = ['google', 'github', 'bitbucket', 'gitlab', 'facebook', 'line', 'azuread', 'service', 'apple'] as const;
export type SsoProvider = (typeof SSO_PROVIDERS)[number];

/**
 * The seed's table: the scopes each provider always requests in addition to any supplied. They are also
 * its default authorize_scopes (the two columns agree for every provider).
 */
export const ALWAYS_REQUESTED: Record<SsoProvider, readonly string[]> = {
  google: ['openid', 'email', 'profile'],
  github: ['read:user', 'user:email'],
  bitbucket: ['account'],
  gitlab: ['read_user'],
  facebook: ['email', 'public_profile'],
  line: ['openid', 'email', 'profile'],
  azuread: ['openid', 'email', 'profile', 'User.Read'],
  service: ['openid', 'email', 'profile'],
  apple: ['openid', 'email', 'name'],
};

export const MAX_SCOPES = 50;
/** RFC 6749 §3.3 scope-token: printable ASCII except space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/;

export function isSsoProvider(name: string): name is SsoProvider {
  return (SSO_PROVIDERS as readonly string[]).includes(name);
}

export function checkProvider(name: string, field: string): SsoProvider {
  if (!isSsoProvider(name)) throw badRequest(`${field}: ${quote(name)} is not a provider; one of ${SSO_PROVIDERS.join(', ')}`);
  return name;
}

/**
 * The scopes stored and returned: the provider's always-requested scopes, then the supplied ones not
 * already listed (scopes are case-sensitive); the always-requested ones alone when none are supplied.
 */
export function mergeScopes(provider: SsoProvider, supplied: readonly string[] | undefined, field: string): string[] {
  const out = [...ALWAYS_REQUESTED[provider]];
  if (supplied === undefined) return out;
  if (supplied.length > MAX_SCOPES) throw badRequest(`${field}: at most ${MAX_SCOPES} scopes are allowed`);
  supplied.forEach((scope, i) => {
    if (typeof scope !== 'string') throw badRequest(`${field}[${i}]: must be a string`);
    if (!SCOPE_TOKEN.test(scope)) {
      throw badRequest(`${field}[${i}]: ${quote(scope)} is not a scope: 1 to 256 printable characters, without spaces (scopes are space-delimited), " or \\`);
    }
    if (!out.includes(scope)) out.push(scope);
  });
  return out;
}
