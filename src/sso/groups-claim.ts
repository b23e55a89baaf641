// The credential option groups_claim: at each SSO sign-in the person's groups become the groups the provider's
// ID token names in that claim, as far as the organization has them (a provider knows many groups it does not).
import type { OrgState, SsoCredential } from '../domain/state.js';

/**
 * The groups the person should be in after this sign-in, sorted as the state keeps them; undefined when the
 * credential follows no claim. A missing claim, or one that is not an array, means no groups.
 */
export function followedGroups(credential: SsoCredential, claims: Record<string, unknown>, state: Pick<OrgState, 'groups'>): string[] | undefined {
  const claim = credential.options[credential.provider]?.groups_claim;
  if (!claim) return undefined;
  const value = claims[claim];
  const names = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  return [...new Set(names.filter((name) => state.groups.has(name)))].sort();
}
