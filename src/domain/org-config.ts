// An organization's configuration: its defaults, the validation of a PATCH, and the rules sign-in,
// registration and token issuing read from it.
import { badRequest, quote, ServiceError } from '../errors.js';
import { DEFAULT_GROUPS_CLAIM, RESERVED_CLAIMS, TOKEN_OWNED_CLAIMS } from './claim-names.js';
import { decision, type Decision } from './decision.js';
import { isReservedKey } from './reserved-keys.js';
import type { Handle, OrgState } from './state.js';

import { FIRST_FACTOR_METHODS, SECOND_FACTOR_METHODS, SIGN_IN_METHODS, type SignInMethod } from './factors.js';

export interface OrgConfig {
  /** seconds; 0 means the deployment's SERVICE_TOKEN_TTL */
  token_duration: number;
  groups_claim_name: string;
  requires_manual_approval: boolean;
  deny_self_registration: boolean;
  /** empty: every method */
  allowed_factor_methods: SignInMethod[];
  /** methods that may begin a sign-in; empty: every first-factor method */
  first_factor_methods: SignInMethod[];
  /** methods that may answer a second-factor challenge; empty: every second-factor method */
  second_factor_methods: SignInMethod[];
  /** every person must sign in with two factors */
  second_factor_required: boolean;
  /** the members of these groups must sign in with two factors */
  second_factor_required_groups: string[];
  /** glob patterns a self-registered handle must match; empty: any handle */
  new_person_handle_patterns: string[];
  sso_allowed_redirect_uris: string[];
}

export type OrgConfigPatch = Partial<OrgConfig>;

/** The same bounds as SERVICE_TOKEN_TTL: up to 366 days. */
export const TOKEN_DURATION_MAX = 366 * 86_400;
export const CLAIM_NAME_MAX = 100;
/** Letters, digits and _ - . : / (so namespaced names such as https://example.com/groups fit); starts with a letter or _. */
export const CLAIM_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.:/-]*$/;
export const MAX_HANDLE_PATTERNS = 32;
/** The longest handle (an email address) is 320 characters. */
export const HANDLE_PATTERN_MAX = 320;
export const MAX_REDIRECT_URIS = 8;
export const MAX_POLICY_GROUPS = 32;
export const REDIRECT_URI_MAX = 2048;

/** A fresh default configuration; configurations are replaced whole, never mutated. */
export function defaultOrgConfig(): OrgConfig {
  return {
    token_duration: 0,
    groups_claim_name: DEFAULT_GROUPS_CLAIM,
    requires_manual_approval: false,
    deny_self_registration: false,
    allowed_factor_methods: [],
    first_factor_methods: [],
    second_factor_methods: [],
    second_factor_required: false,
    second_factor_required_groups: [],
    new_person_handle_patterns: [],
    sso_allowed_redirect_uris: [],
  };
}

/** A stored configuration with the defaults under it: snapshots and entries written before a field existed lack it. */
export function withDefaults(stored: Partial<OrgConfig> | undefined): OrgConfig {
  return { ...defaultOrgConfig(), ...stored };
}

const FIELDS = Object.keys(defaultOrgConfig()) as Array<keyof OrgConfig>;

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function checkTokenDuration(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > TOKEN_DURATION_MAX) {
    throw badRequest(`token_duration: must be an integer number of seconds from 0 (the deployment's SERVICE_TOKEN_TTL) to ${TOKEN_DURATION_MAX} (366 days)`);
  }
  return value;
}

/**
 * The groups claim must not be a name the token already carries: `groups` itself is the default; any other
 * reserved or token-owned name would overwrite or be overwritten by that claim.
 */
function checkGroupsClaimName(value: unknown): string {
  if (typeof value !== 'string') throw badRequest('groups_claim_name: must be a string');
  if (value.length === 0 || value.length > CLAIM_NAME_MAX || !CLAIM_NAME_PATTERN.test(value)) {
    throw badRequest(`groups_claim_name: ${quote(value)} must be 1-${CLAIM_NAME_MAX} characters: letters, digits and _ - . : /, starting with a letter or _`);
  }
  if (value === DEFAULT_GROUPS_CLAIM) return value;
  if (RESERVED_CLAIMS.has(value) || TOKEN_OWNED_CLAIMS.has(value) || isReservedKey(value)) {
    throw badRequest(`groups_claim_name: ${quote(value)} is a claim every token reserves for itself`);
  }
  return value;
}

function checkBoolean(field: keyof OrgConfig, value: unknown): boolean {
  if (typeof value !== 'boolean') throw badRequest(`${field}: must be true or false`);
  return value;
}

/** Duplicates are dropped; the first occurrence keeps its place (so in every list below). */
function checkSignInMethods(value: unknown, field = 'allowed_factor_methods', methods: readonly SignInMethod[] = SIGN_IN_METHODS): SignInMethod[] {
  if (!isStringArray(value)) throw badRequest(`${field}: must be an array of strings`);
  value.forEach((m, i) => {
    if (!(methods as readonly string[]).includes(m)) {
      throw badRequest(`${field}[${i}]: ${quote(m)} must be one of ${methods.join(', ')}`);
    }
  });
  return [...new Set(value as SignInMethod[])];
}

/** Group names as given (a group not created yet requires nothing until it is); duplicates dropped. */
function checkGroupNames(field: string, value: unknown): string[] {
  if (!isStringArray(value)) throw badRequest(`${field}: must be an array of strings`);
  if (value.length > MAX_POLICY_GROUPS) throw badRequest(`${field}: at most ${MAX_POLICY_GROUPS} groups are allowed, got ${value.length}`);
  value.forEach((g, i) => {
    if (g.length === 0 || g.length > 100) throw badRequest(`${field}[${i}]: must be a group name of 1-100 characters`);
  });
  return [...new Set(value)];
}

const NO_SPACE_OR_CONTROL = /^[^\s\p{C}]+$/u;

function checkHandlePatterns(value: unknown): string[] {
  if (!isStringArray(value)) throw badRequest('new_person_handle_patterns: must be an array of strings');
  if (value.length > MAX_HANDLE_PATTERNS) throw badRequest(`new_person_handle_patterns: at most ${MAX_HANDLE_PATTERNS} patterns are allowed, got ${value.length}`);
  value.forEach((p, i) => {
    if (p.length === 0 || p.length > HANDLE_PATTERN_MAX || !NO_SPACE_OR_CONTROL.test(p)) {
      throw badRequest(`new_person_handle_patterns[${i}]: ${quote(p)} must be 1-${HANDLE_PATTERN_MAX} characters without spaces or control characters`);
    }
  });
  return [...new Set(value)];
}

const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:']);
const SPECIAL_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:', 'file:']);

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The URI parsed, or a message saying why it may not be a redirect target. */
function parseRedirectUri(raw: string): URL | string {
  if (raw.length === 0 || raw.length > REDIRECT_URI_MAX) return `must be 1-${REDIRECT_URI_MAX} characters`;
  // A backslash reads as a slash in http(s) URLs, which browsers and parsers disagree on at the edges.
  if (!NO_SPACE_OR_CONTROL.test(raw) || raw.includes('\\')) return 'must not contain spaces, backslashes or control characters';
  if (raw.includes('#')) return 'must not have a fragment (#)';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URI';
  }
  // The URL parser repairs "https:host" and "https:/host"; a stored redirect target should say what it means.
  if (SPECIAL_SCHEMES.has(url.protocol) && !/^[a-z][a-z0-9+.-]*:\/\/[^/]/i.test(raw)) return 'is not an absolute URI';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `the scheme ${url.protocol} may not be a redirect target`;
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) return 'http is allowed only for localhost and loopback addresses; use https';
  return url;
}

/** Kept as given; two that normalise alike are one. */
function checkRedirectUris(value: unknown): string[] {
  if (!isStringArray(value)) throw badRequest('sso_allowed_redirect_uris: must be an array of strings');
  if (value.length > MAX_REDIRECT_URIS) throw badRequest(`sso_allowed_redirect_uris: at most ${MAX_REDIRECT_URIS} URIs are allowed, got ${value.length}`);
  const seen = new Set<string>();
  const kept: string[] = [];
  value.forEach((raw, i) => {
    const url = parseRedirectUri(raw);
    if (typeof url === 'string') throw badRequest(`sso_allowed_redirect_uris[${i}]: ${quote(raw, 200)} ${url}`);
    if (seen.has(url.href)) return;
    seen.add(url.href);
    kept.push(raw);
  });
  return kept;
}

/** A PATCH body checked field by field: each bad field is a 400 naming it. Pure; throws before anything changes. */
export function checkOrgConfigPatch(input: unknown): OrgConfigPatch {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw badRequest('body: must be an object');
  const body = input as Record<string, unknown>;
  const unknown = Object.keys(body).find((k) => !(FIELDS as string[]).includes(k));
  if (unknown !== undefined) throw badRequest(`${unknown}: unknown field`);
  const patch: OrgConfigPatch = {};
  if (body['token_duration'] !== undefined) patch.token_duration = checkTokenDuration(body['token_duration']);
  if (body['groups_claim_name'] !== undefined) patch.groups_claim_name = checkGroupsClaimName(body['groups_claim_name']);
  if (body['requires_manual_approval'] !== undefined) patch.requires_manual_approval = checkBoolean('requires_manual_approval', body['requires_manual_approval']);
  if (body['deny_self_registration'] !== undefined) patch.deny_self_registration = checkBoolean('deny_self_registration', body['deny_self_registration']);
  if (body['allowed_factor_methods'] !== undefined) patch.allowed_factor_methods = checkSignInMethods(body['allowed_factor_methods']);
  if (body['first_factor_methods'] !== undefined) patch.first_factor_methods = checkSignInMethods(body['first_factor_methods'], 'first_factor_methods', FIRST_FACTOR_METHODS);
  if (body['second_factor_methods'] !== undefined) patch.second_factor_methods = checkSignInMethods(body['second_factor_methods'], 'second_factor_methods', SECOND_FACTOR_METHODS);
  if (body['second_factor_required'] !== undefined) patch.second_factor_required = checkBoolean('second_factor_required', body['second_factor_required']);
  if (body['second_factor_required_groups'] !== undefined) patch.second_factor_required_groups = checkGroupNames('second_factor_required_groups', body['second_factor_required_groups']);
  if (body['new_person_handle_patterns'] !== undefined) patch.new_person_handle_patterns = checkHandlePatterns(body['new_person_handle_patterns']);
  if (body['sso_allowed_redirect_uris'] !== undefined) patch.sso_allowed_redirect_uris = checkRedirectUris(body['sso_allowed_redirect_uris']);
  return patch;
}

/** A copy in the documented field order, for replies. */
export function orgConfigView(config: OrgConfig): OrgConfig {
  return {
    token_duration: config.token_duration,
    groups_claim_name: config.groups_claim_name,
    requires_manual_approval: config.requires_manual_approval,
    deny_self_registration: config.deny_self_registration,
    allowed_factor_methods: [...config.allowed_factor_methods],
    first_factor_methods: [...config.first_factor_methods],
    second_factor_methods: [...config.second_factor_methods],
    second_factor_required: config.second_factor_required,
    second_factor_required_groups: [...config.second_factor_required_groups],
    new_person_handle_patterns: [...config.new_person_handle_patterns],
    sso_allowed_redirect_uris: [...config.sso_allowed_redirect_uris],
  };
}

/**
 * PATCH /organizations/config: the fields given replace the current ones; the reply is the whole
 * configuration. The seed's catalog has no event for it, so it emits none. Changing nothing records nothing.
 */
export function setOrgConfig(state: OrgState, input: unknown): Decision<OrgConfig> {
  const patch = checkOrgConfigPatch(input);
  const next = orgConfigView({ ...state.config, ...patch });
  if (JSON.stringify(next) === JSON.stringify(orgConfigView(state.config))) return decision(next);
  return decision(next, [{ t: 'OrgConfigSet', config: orgConfigView(next) }]);
}

/** AuthenticationFailed's failure_reason for each refusal by the organization's configuration. */
export type PolicyFailureReason = 'method_not_allowed' | 'self_registration_denied' | 'handle_not_allowed' | 'second_factor_required';

/** A 403 by the organization's configuration, naming the failure_reason its AuthenticationFailed records. */
export class PolicyRefused extends ServiceError {
  readonly failure_reason: PolicyFailureReason;
  constructor(failure_reason: PolicyFailureReason, message: string) {
    super('ERR_FORBIDDEN', message);
    this.failure_reason = failure_reason;
  }
}

/** Seconds an identity token of the organization lives: its token_duration, or the deployment's default. */
export function tokenLifetime(config: OrgConfig, defaultTtlSeconds: number): number {
  return config.token_duration > 0 ? config.token_duration : defaultTtlSeconds;
}

/** The claim that carries a person's groups; custom claims may not use it. */
export function groupsClaimName(config: OrgConfig): string {
  return config.groups_claim_name;
}

/** Every sign-in and registration, by any method: 403 naming the method when the organization does not allow it. */
export function checkFactorAllowed(config: OrgConfig, method: string): void {
  const allowed = config.allowed_factor_methods;
  if (allowed.length > 0 && !(allowed as string[]).includes(method)) {
    throw new PolicyRefused('method_not_allowed', `the authentication method ${quote(method)} is not allowed in this organization (allowed: ${allowed.join(', ')})`);
  }
}

/**
 * `*` matches any run of characters (none included), `?` exactly one; every other character is itself.
 * Greedy with one backtrack point, so the cost is at most pattern × text steps, whatever the pattern.
 */
export function globMatch(pattern: string, text: string): boolean {
  const p = [...pattern];
  const t = [...text];
  let pi = 0;
  let ti = 0;
  let star = -1;
  let mark = 0;
  while (ti < t.length) {
    const c = p[pi];
    if (c === '*') {
      star = pi++;
      mark = ti;
    } else if (c !== undefined && (c === '?' || c === t[ti])) {
      pi++;
      ti++;
    } else if (star >= 0) {
      pi = star + 1;
      ti = ++mark;
    } else return false;
  }
  while (p[pi] === '*') pi++;
  return pi === p.length;
}

/** Whether a handle may register: any handle when there are no patterns. Email addresses match case-insensitively. */
export function handleAllowed(config: OrgConfig, handle: Handle): boolean {
  const patterns = config.new_person_handle_patterns;
  if (patterns.length === 0) return true;
  const fold = handle.type === 'email_address';
  const value = fold ? handle.value.toLowerCase() : handle.value;
  return patterns.some((p) => globMatch(fold ? p.toLowerCase() : p, value));
}

/**
 * A registration by the end user (password, or SSO sign-in of an unknown person): 403 when the method is not
 * allowed, self-registration is denied, or the handle matches none of the patterns. A handle off the patterns
 * is 403, not 400: the request is well formed and the organization's policy refuses it, as with a denial;
 * the message does not list the patterns, which may say more than the organization wants end users to read.
 */
export function checkSelfRegistration(config: OrgConfig, method: string, handle: Handle): void {
  checkFactorAllowed(config, method);
  if (config.deny_self_registration) throw new PolicyRefused('self_registration_denied', 'self-registration is disabled in this organization');
  if (!handleAllowed(config, handle)) {
    throw new PolicyRefused('handle_not_allowed', `the handle ${quote(handle.value)} does not match the organization's new_person_handle_patterns, so it may not register`);
  }
}

/** Whether a person created by self-registration starts active. */
export function newPersonActive(config: OrgConfig): boolean {
  return !config.requires_manual_approval;
}

/**
 * The form redirect URIs are compared in: the WHATWG URL serialization, which lowercases the scheme and host,
 * drops a default port, gives an empty http(s) path its "/", resolves "." and ".." segments and percent-encodes
 * what must be. The query, the path's case and a trailing slash are kept, so those must match exactly.
 * undefined when the URI could not be on the allow-list at all.
 */
export function normaliseRedirectUri(uri: string): string | undefined {
  const url = parseRedirectUri(uri);
  return typeof url === 'string' ? undefined : url.href;
}

/** Whether SSO sign-in may redirect to this URI: it equals an allowed one once both are normalised. */
export function redirectAllowed(config: OrgConfig, uri: string): boolean {
  const wanted = normaliseRedirectUri(uri);
  if (wanted === undefined) return false;
  return config.sso_allowed_redirect_uris.some((allowed) => normaliseRedirectUri(allowed) === wanted);
}

/** The SSO start's check: 400 naming the redirect_uri when it is not on the allow-list. */
export function checkRedirectAllowed(config: OrgConfig, uri: string): void {
  if (!redirectAllowed(config, uri)) throw badRequest(`redirect_uri: ${quote(uri, 200)} is not on the organization's sso_allowed_redirect_uris`);
}

/** A method at a place in a sign-in: `first` begins it, else it answers a second-factor challenge (403 otherwise). */
export function checkFactorPlace(config: OrgConfig, method: string, first: boolean): void {
  const listed = first ? config.first_factor_methods : config.second_factor_methods;
  const allowed: readonly string[] = listed.length > 0 ? listed : first ? FIRST_FACTOR_METHODS : SECOND_FACTOR_METHODS;
  if (!allowed.includes(method)) {
    throw new PolicyRefused('method_not_allowed', `the authentication method ${quote(method)} may not be a ${first ? 'first' : 'second'} factor in this organization (allowed: ${allowed.join(', ')})`);
  }
}

/** The methods the organization accepts as a second factor, among those given (the ones a person holds). */
export function secondFactorsAllowed(config: OrgConfig, held: readonly string[]): string[] {
  return held.filter((m) => {
    try {
      checkFactorAllowed(config, m);
      checkFactorPlace(config, m, false);
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether the person must sign in with two factors: everyone, or a member of one of the named groups. */
export function secondFactorRequired(config: OrgConfig, groups: readonly string[]): boolean {
  return config.second_factor_required || config.second_factor_required_groups.some((g) => groups.includes(g));
}

/** The refusal of a sign-in with one factor by a person who must use two. */
export const secondFactorMissing = () =>
  new PolicyRefused('second_factor_required', 'this organization requires a second factor of this person, and the sign-in has one factor; enroll one (e.g. TOTP) first');
