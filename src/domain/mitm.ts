// Decisions about MITM (reverse-proxy phishing) detection: the organization's tokens with their allowed
// domains and tag, and the detection events an image request outside those domains records.
import { badRequest, notFound, quote } from '../errors.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import type { MitmToken, OrgState } from './state.js';

/** tokens an organization holds at most: one per protected site is the expected use */
export const MAX_MITM_TOKENS = 100;
export const MAX_ALLOWED_DOMAINS = 100;
export const MITM_TAG_MAX = 200;

/** A host name (or `*.` and one): letters, digits, hyphens and dots, 253 characters at most. */
export const HOST = /^(\*\.)?(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

export interface MitmTokenInput {
  allowed_domains: string[];
  tag: string;
}

function checkDomains(domains: string[]): string[] {
  if (domains.length === 0) throw badRequest('allowed_domains: at least one domain is required');
  if (domains.length > MAX_ALLOWED_DOMAINS) throw badRequest(`allowed_domains: at most ${MAX_ALLOWED_DOMAINS} domains`);
  const out: string[] = [];
  domains.forEach((raw, i) => {
    const d = raw.trim().toLowerCase().replace(/\.$/, '');
    if (!HOST.test(d)) throw badRequest(`allowed_domains[${i}]: ${quote(raw)} is not a host name or *.host name`);
    if (!out.includes(d)) out.push(d);
  });
  return out;
}

export function createMitmToken(state: OrgState, input: MitmTokenInput, ctx: DecideContext): Decision<MitmToken> {
  if (state.mitm_tokens.size >= MAX_MITM_TOKENS) throw badRequest(`an organization holds at most ${MAX_MITM_TOKENS} MITM tokens; delete one first`);
  if (input.tag.length > MITM_TAG_MAX) throw badRequest(`tag: at most ${MITM_TAG_MAX} characters`);
  const token: MitmToken = {
    token: ctx.secret().replace(/[^A-Za-z0-9]/g, '').slice(0, 32),
    allowed_domains: checkDomains(input.allowed_domains),
    tag: input.tag,
    created: new Date(ctx.nowMs).toISOString(),
  };
  return decision(token, [{ t: 'MitmTokenCreated', token }]);
}

export function deleteMitmToken(state: OrgState, token: string): Decision<null> {
  if (!state.mitm_tokens.has(token)) throw notFound(`MITM token ${quote(token)} not found`);
  return decision(null, [{ t: 'MitmTokenDeleted', token }]);
}

/** Whether `host` is one of `patterns`: an exact host, or `*.example.com` for any host below example.com. */
export function hostAllowed(patterns: readonly string[], host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((p) => (p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p));
}

export interface MitmDetection {
  token: string;
  mitm_domain: string;
  client_ip_address: string;
  user_agent: string;
}

/** A view of the token's image from a host outside its allowed domains; a token deleted meanwhile records nothing. */
export function recordMitmDetection(state: OrgState, d: MitmDetection): Decision<null> {
  const token = state.mitm_tokens.get(d.token);
  if (!token) return decision(null);
  return decision(null, [], [
    {
      name: 'MitmAttackDetected_v1',
      body: {
        client_ip_address: d.client_ip_address,
        user_agent: d.user_agent,
        mitm_domain: d.mitm_domain,
        allowed_domains: [...token.allowed_domains],
        token_tag: token.tag,
        mitm_token: token.token,
      },
    },
  ]);
}
