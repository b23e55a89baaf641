// An organization's allowed origin domains: exact hosts or `*` patterns (the original's rule: `*` matches
// zero or more characters, matching is case-insensitive), the decisions that change the list, and the matcher.
import { badRequest, quote } from '../errors.js';
import { decision, type Decision } from './decision.js';
import type { OrgState } from './state.js';

/** More would make each cross-origin request's match slow, and no organization serves that many sites. */
export const ALLOWED_DOMAINS_MAX = 100;
const DOMAIN_MAX = 253;
/** A host name, or a pattern of one: letters, digits, hyphens and dots, with `*` anywhere. */
export const PATTERN = /^[a-z0-9*]([a-z0-9*.-]*[a-z0-9*])?$/;

/** The stored form of a domain given by a caller (lower case), or a 400 naming it and why. */
export function normalizeDomain(given: string, field: string): string {
  const d = given.trim().toLowerCase();
  if (d.length === 0 || d.length > DOMAIN_MAX) throw badRequest(`${field}: a domain is 1-${DOMAIN_MAX} characters`);
  if (!PATTERN.test(d) || d.includes('..')) {
    throw badRequest(`${field}: ${quote(given)} is not a domain or a domain pattern (letters, digits, '-', '.' and '*' wildcards; no scheme, port or path)`);
  }
  // '*' alone would allow every origin: a wildcard for the whole web is no allow-list.
  if (!/[a-z0-9]/.test(d)) throw badRequest(`${field}: ${quote(given)} would allow every origin; name a domain`);
  return d;
}

/**
 * Glob match where `*` is any run of characters, dots included ('*.xyz.com' allows 'b.c.xyz.com'), every
 * other character literal. Linear backtracking to the last `*`: no regular expression built from input.
 */
function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Whether an origin's host is allowed by the patterns: exactly, or by a `*` pattern; case-insensitive. */
export function domainAllows(patterns: readonly string[], host: string): boolean {
  const h = host.toLowerCase();
  for (const p of patterns) {
    const pattern = p.toLowerCase();
    if (pattern.includes('*') ? globMatch(pattern, h) : pattern === h) return true;
  }
  return false;
}

export function addAllowedDomains(state: OrgState, given: readonly string[], overwrite: boolean): Decision<null> {
  const next = overwrite ? [] : [...state.allowed_domains];
  given.forEach((d, i) => {
    const domain = normalizeDomain(d, `domains[${i}]`);
    if (!next.includes(domain)) next.push(domain);
  });
  if (next.length > ALLOWED_DOMAINS_MAX) throw badRequest(`domains: an organization allows at most ${ALLOWED_DOMAINS_MAX} domains; this would make ${next.length}`);
  const same = next.length === state.allowed_domains.length && next.every((d, i) => d === state.allowed_domains[i]);
  return decision(null, same ? [] : [{ t: 'AllowedDomainsSet', domains: next }]);
}

/** The original's rule: removing a domain that is not in the list changes nothing and succeeds. */
export function removeAllowedDomains(state: OrgState, domain: string | undefined): Decision<null> {
  const gone = domain === undefined ? undefined : domain.trim().toLowerCase();
  const next = gone === undefined ? [] : state.allowed_domains.filter((d) => d !== gone);
  return decision(null, next.length === state.allowed_domains.length ? [] : [{ t: 'AllowedDomainsSet', domains: next }]);
}
