// The authorization endpoint's use case (RFC 6749 4.1, RFC 7636, OpenID Connect Core 3.1.2): checking the
// request, the hosted sign-in (a password sign-in verified as any, so hooks, events and throttling are those
// of any sign-in, but recorded without a token: the client's tokens are the token endpoint's), the browser
// session, and the single-use code it ends with. Pushed requests (RFC 9126) are checked here too, when
// pushed, and redeemed by their request_uri.
import { createHash, randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { Consistency, IssuingOrg } from '../auth/issue.js';
import type { SignInService } from '../auth/sign-in.js';
import type { SecondFactorRequired } from '../auth/admission.js';
import type { TotpService } from '../auth/totp.js';
import type { PasskeyService } from '../auth/webauthn.js';
import type { SignedIn } from '../auth/verify.js';
import { HANDLE_TYPES, type HandleType, type OrgState } from '../domain/state.js';
import type { SignInFacts } from '../domain/oauth-grants.js';
import { sessionActive, type PersonSession } from '../domain/sessions.js';
import type { Clock } from '../lib/clock.js';
import { readCookie, type Sealer } from '../lib/signed.js';
import { CSRF_COOKIE, FORM_TTL_S, SESSION_TTL_S, newCsrf, readSession, sessionCookie, sessionCurrent, sessionPassword, setCookie, type Session } from './session.js';
import { personScope } from './scopes.js';
import { acrSatisfied } from './acr.js';
import { errorPage, secondFactorPage, secondFactorPageCsp, signInPage, signInPageCsp, type SsoButton } from './sign-in-page.js';
import { pushRequest, redeemRequest, type PushedParams } from './pushed-requests.js';

/** What the authorization endpoint needs of a client (the clients' own module owns the rest). */
export interface AuthorizeClient {
  client_id: string;
  client_name: string;
  grant_types: readonly string[];
  scopes: readonly string[];
  public: boolean;
  redirect_uris: readonly string[];
  /** RFC 9126 6: its authorization requests come only through the pushed authorization request endpoint */
  require_pushed_authorization_requests?: boolean;
}

export interface ClientFinder {
  find(clientId: string): { org: IssuingOrg & { state: OrgState }; client: AuthorizeClient } | undefined;
}


/** RFC 7636 4.1: 43-128 characters of the unreserved set; an S256 challenge is the same alphabet. */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;
const MAX_STATE = 2048;
const MAX_NONCE = 512;

/** A checked authorization request, sealed into the sign-in form so that it comes back unaltered. */
export interface AuthorizationRequest {
  client_id: string;
  redirect_uri: string;
  scope: string[];
  state?: string;
  nonce?: string;
  code_challenge?: string;
  max_age?: number;
  /** the acr values asked for, in order of preference */
  acr_values?: string[];
  login_hint?: string;
  /** it came through a pushed authorization request (RFC 9126) */
  pushed?: true;
  csrf: string;
}

/** What the endpoint answers: an HTML page, or a redirect back to the client. */
export type AuthorizeAnswer =
  | { kind: 'page'; status: number; html: string; headers?: Record<string, string> }
  | { kind: 'redirect'; location: string; headers?: Record<string, string> };

export interface AuthorizeDeps {
  clients: ClientFinder;
  sealer: Sealer;
  clock: Clock;
  signIn: Pick<SignInService, 'verify'>;
  /** answers the second-factor challenge a password sign-in of a person holding TOTP ends with */
  secondFactor: Pick<TotpService, 'verify'>;
  /** the same challenge answered with a passkey usable on the hosted page */
  passkeys: Pick<PasskeyService, 'hostedOptions' | 'verify'>;
  issuer(): string;
  newSessionId(): string;
}

export interface SignInForm {
  request: string;
  csrf: string;
  handle_type: string;
  handle: string;
  password: string;
}

/**
 * The second-factor forms: the sign-in form's request and check value, the challenge, and a code or a recovery
 * code, or a passkey's assertion (the JSON the page's one script posts).
 */
export interface SecondFactorForm {
  request: string;
  csrf: string;
  challenge: string;
  code: string;
  recovery_code: string;
  webauthn: string;
  /** the methods the first step's challenge named, space-separated: which forms the page shows again (nothing more) */
  methods: string;
}

/** The second factors the hosted page asks for: a code typed in, and a passkey (by its one script, allowed by hash). */
export const PAGE_SECOND_FACTORS: readonly string[] = ['totp', 'webauthn'];

export interface Caller {
  cookie: string | undefined;
  ip: string;
  origin: string;
  userAgent: string;
  consistency: Consistency;
}

export interface Authorize {
  start(query: Record<string, unknown>, caller: Caller): Promise<AuthorizeAnswer>;
  /** RFC 9126 2: the authenticated client's request, checked as the authorization endpoint would; refusals in RFC 6749 5.2's form */
  push(clientId: string, params: Record<string, unknown>): Promise<{ request_uri: string; expires_in: number }>;
  signIn(form: Partial<SignInForm>, caller: Caller): Promise<AuthorizeAnswer>;
  /** The sign-in form's second step, for a person who holds a second factor: its code, then the redirect with a code. */
  secondFactor(form: Partial<SecondFactorForm>, caller: Caller): Promise<AuthorizeAnswer>;
}

/** The handle type a login_hint most likely is, to preselect it. */
function guessHandleType(hint: string | undefined): HandleType {
  if (hint === undefined || hint.includes('@')) return 'email_address';
  return /^\+\d+$/.test(hint) ? 'phone_number' : 'username';
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** A refusal that goes back to the client's redirect_uri (RFC 6749 4.1.2.1). */
class RedirectError extends Error {
  constructor(readonly error: string, readonly description: string) {
    super(description);
  }
}

/** A refusal of the hosted sign-in, shown on the page again. */
export interface SignInRefusal {
  status: number;
  message: string;
  retryAfter?: string;
}

/** What a hosted sign-in established: the person, how and when, the hooks' claims; the cookie and the durable session it opens. */
export interface HostedSignedIn {
  facts: SignInFacts;
  cookie: string;
  session: PersonSession;
}

type HostedDeps = Pick<AuthorizeDeps, 'sealer' | 'clock' | 'issuer' | 'newSessionId'>;

/** A refusal the page shows (a client's mistake or the person's), or the error to let through. */
function refusalOf(error: unknown): SignInRefusal {
  if (!(error instanceof ServiceError) || (error.status >= 500 && error.status !== 502)) throw error;
  const retryAfter = error.headers?.['Retry-After'];
  return { status: error.status, message: error.message, ...(retryAfter !== undefined && { retryAfter }) };
}

/** The browser session a completed sign-in (one factor or two) opens. */
function opened(deps: HostedDeps, org: IssuingOrg & { state: OrgState }, signedIn: SignedIn, caller: Caller): HostedSignedIn {
  const now = Math.floor(deps.clock.nowMs() / 1000);
  const { person_id, authentications, custom_claims } = signedIn;
  const facts: SignInFacts = {
    person_id,
    // the session this sign-in opens: the cookie and the grants begun with it name it
    session_id: deps.newSessionId(),
    auth_time: now,
    amr: authentications.map((a) => a.method),
    authentications,
    ...(Object.keys(custom_claims).length > 0 && { custom_claims }),
  };
  // Read after the sign-in's entry: a re-hashed imported password keeps its credential.
  const person = org.state.persons.get(facts.person_id);
  const password = person === undefined ? null : sessionPassword(person);
  const nowMs = deps.clock.nowMs();
  const session: PersonSession = {
    session_id: facts.session_id as string,
    person_id: facts.person_id,
    methods: facts.amr,
    clients: [],
    created_ms: nowMs,
    last_used_ms: nowMs,
    // the browser's sign-in; each grant begun in it extends it to the grant's own expiry
    expires_at_ms: nowMs + SESSION_TTL_S * 1000,
    ip: caller.ip,
    user_agent: caller.userAgent,
  };
  return { facts, session, cookie: sessionCookie(deps.sealer, { org: org.id, ...facts, password }, now, deps.issuer().startsWith('https:')) };
}

/**
 * The hosted page's password sign-in, for the authorization endpoint and the device page alike: verified as any
 * sign-in, and what it established, which the caller records. A person who holds one of the second factors the
 * page can ask for (`answerable`) gets its challenge instead; one who holds only others is refused.
 */
export async function hostedSignIn(
  deps: Pick<AuthorizeDeps, 'signIn'> & HostedDeps,
  org: IssuingOrg & { state: OrgState },
  form: Partial<Pick<SignInForm, 'handle_type' | 'handle' | 'password'>>,
  caller: Caller,
  answerable: readonly string[] = [],
): Promise<HostedSignedIn | SignInRefusal | { second_factor: SecondFactorRequired }> {
  const handleType = HANDLE_TYPES.find((t) => t === form.handle_type) ?? 'email_address';
  let signedIn: Awaited<ReturnType<SignInService['verify']>>;
  try {
    signedIn = await deps.signIn.verify(
      { org, handle: { type: handleType, value: form.handle ?? '' }, password: form.password ?? '', ip: caller.ip, origin: caller.origin, userAgent: caller.userAgent, consistency: caller.consistency },
      answerable,
    );
  } catch (error) {
    return refusalOf(error);
  }
  return 'second_factor' in signedIn ? signedIn : opened(deps, org, signedIn, caller);
}

/**
 * The hosted page's second step: the challenge its password step answered, with a code or a recovery code, or
 * with a passkey's assertion made on the page (whose origin is the issuer's).
 */
export async function hostedSecondFactor(
  deps: Pick<AuthorizeDeps, 'secondFactor' | 'passkeys'> & HostedDeps,
  org: IssuingOrg & { state: OrgState },
  form: Partial<Pick<SecondFactorForm, 'challenge' | 'code' | 'recovery_code' | 'webauthn'>>,
  caller: Caller,
): Promise<HostedSignedIn | SignInRefusal> {
  // The page's form sends both fields; the empty one is not an answer.
  const code = form.code?.trim() || undefined;
  const recovery = form.recovery_code?.trim() || undefined;
  const request = { org, challenge: form.challenge ?? '', ip: caller.ip, userAgent: caller.userAgent, consistency: caller.consistency };
  try {
    const signedIn =
      form.webauthn?.trim()
        ? await deps.passkeys.verify({ ...request, origin: new URL(deps.issuer()).origin, credential: assertionOf(form.webauthn) })
        : await deps.secondFactor.verify({ ...request, origin: caller.origin, ...(code !== undefined ? { code } : { recovery_code: recovery }) });
    return opened(deps, org, signedIn, caller);
  } catch (error) {
    return refusalOf(error);
  }
}

/** The assertion the page's script posted: a JSON object, which the passkey check reads field by field. */
function assertionOf(json: string): Parameters<PasskeyService['verify']>[0]['credential'] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ServiceError('ERR_BAD_REQUEST', 'webauthn: not a passkey assertion (JSON)');
  return value as Parameters<PasskeyService['verify']>[0]['credential'];
}

/**
 * The browser's hosted-page session, while it stands: in this organization, its person active, their password
 * the one they signed in with (a change or reset ends it), and its durable session not ended (logout, the
 * person's or the organization's revocation), which the cookie outlives.
 */
export function currentSession(sealer: Sealer, org: IssuingOrg & { state: OrgState }, cookie: string | undefined, nowMs: number): Session | undefined {
  const session = readSession(sealer, cookie, Math.floor(nowMs / 1000));
  if (!session || session.org !== org.id || session.session_id === undefined) return undefined;
  const person = org.state.persons.get(session.person_id);
  return person?.active === true && sessionCurrent(session, person) && sessionActive(org.state, session.session_id, nowMs) ? session : undefined;
}

/** Where the hosted page's second step is shown: the client it names, where its forms post, and the redirect its policy allows. */
export interface SecondStepPlace {
  org: IssuingOrg & { state: OrgState };
  client_name: string;
  /** where the forms post; default the authorization endpoint's second step */
  action?: string;
  /** the client's redirect URI, which the page's form-action allows; none for a page that redirects only to the service */
  redirect_uri?: string;
}

/** A page answering a throttled refusal says when to try again. */
export function withRetry(answer: AuthorizeAnswer, refusal: SignInRefusal): AuthorizeAnswer {
  if (refusal.retryAfter !== undefined && answer.kind === 'page') answer.headers = { ...answer.headers, 'Retry-After': refusal.retryAfter };
  return answer;
}

/**
 * The page asking for the second factor, with the form's sealed request and check value as they came: the
 * code form for a TOTP holder, the passkey button with fresh assertion options for a person who holds a
 * passkey this page can use (its RP ID the issuer's host or a parent of it). The authorization endpoint's and
 * the device page's alike.
 */
export async function secondStepPage(
  deps: Pick<AuthorizeDeps, 'passkeys' | 'issuer'>,
  place: SecondStepPlace,
  form: Pick<SecondFactorForm, 'request' | 'csrf'>,
  challenge: string,
  methods: readonly string[],
  status: number,
  error?: string,
): Promise<AuthorizeAnswer> {
  let options: Awaited<ReturnType<PasskeyService['hostedOptions']>>;
  try {
    if (methods.includes('webauthn')) options = await deps.passkeys.hostedOptions(place.org, new URL(deps.issuer()).origin, challenge);
  } catch (error) {
    // An altered or expired challenge: the page offers no passkey, and its answer says so.
    if (!(error instanceof ServiceError) || error.status !== 400) throw error;
  }
  return {
    kind: 'page',
    status,
    html: secondFactorPage({
      org_name: place.org.state.org_name,
      client_name: place.client_name,
      request: form.request,
      csrf: form.csrf,
      challenge,
      methods: methods.filter((m) => PAGE_SECOND_FACTORS.includes(m)),
      totp: methods.includes('totp'),
      ...(place.action !== undefined && { action: place.action }),
      ...(options !== undefined && { passkey_options: JSON.stringify(options) }),
      ...(error !== undefined && { error }),
    }),
    headers: { 'Content-Security-Policy': secondFactorPageCsp(place.redirect_uri) },
  };
}

/** The second step's form as posted: the methods it shows again, and whether anything was entered. */
export function secondStepPosted(form: Partial<SecondFactorForm>): { methods: string[]; answered: boolean } {
  return { methods: (form.methods ?? 'totp').split(' '), answered: Boolean(form.code?.trim() || form.recovery_code?.trim() || form.webauthn?.trim()) };
}

/** The second step's prompt when nothing was entered. */
export const NOTHING_ENTERED = 'Enter the code your authenticator app shows, or one of your recovery codes, or use your passkey.';
/** The second step's answer to a challenge expired or altered: the sign-in starts again. */
export const SIGN_IN_AGAIN = 'The sign-in took too long or the form was altered; sign in again.';

export function createAuthorize(deps: AuthorizeDeps): Authorize {
  const now = () => Math.floor(deps.clock.nowMs() / 1000);
  const secure = () => deps.issuer().startsWith('https:');

  const badPage = (error: string, description: string): AuthorizeAnswer => ({ kind: 'page', status: 400, html: errorPage(error, description) });
  /** A refusal before a redirect_uri is known: a page at the authorization endpoint, JSON at the push endpoint. */
  type Refused = { kind: 'refused'; error: string; description: string };
  const refused = (error: string, description: string): Refused => ({ kind: 'refused', error, description });

  function back(redirectUri: string, params: Record<string, string | undefined>, headers?: Record<string, string>): AuthorizeAnswer {
    const url = new URL(redirectUri);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
    // RFC 9207: the issuer, so a client talking to several servers knows which one answered (mix-up defence).
    url.searchParams.set('iss', deps.issuer());
    return { kind: 'redirect', location: url.href, ...(headers && { headers }) };
  }

  /** Steps that cannot redirect: the client and its redirect_uri. Undefined: the page to show instead. */
  function clientOf(query: Record<string, unknown>): { found: NonNullable<ReturnType<ClientFinder['find']>>; redirect_uri: string } | Refused {
    const clientId = query['client_id'];
    if (typeof clientId !== 'string' || clientId === '') return refused('invalid_request', 'client_id is required');
    const found = deps.clients.find(clientId);
    if (!found) return refused('invalid_client', 'no such client');
    const given = query['redirect_uri'];
    let redirect_uri: string;
    if (given === undefined || given === '') {
      // RFC 6749 3.1.2.3: optional only when exactly one is registered.
      if (found.client.redirect_uris.length !== 1) return refused('invalid_request', 'redirect_uri is required');
      redirect_uri = found.client.redirect_uris[0] as string;
    } else if (typeof given !== 'string' || !found.client.redirect_uris.includes(given)) {
      // Exact string comparison (RFC 9700 4.1.3): never a prefix, never a pattern, so no open redirect.
      return refused('invalid_request', 'redirect_uri is not one of the client\'s registered redirect URIs');
    } else redirect_uri = given;
    return { found, redirect_uri };
  }

  /** The remaining checks; their refusals redirect. */
  function check(query: Record<string, unknown>, client: AuthorizeClient, redirect_uri: string, pushed: boolean): { request: AuthorizationRequest; prompts: string[] } {
    const text = (name: string): string | undefined => {
      const v = query[name];
      if (v === undefined || v === '') return undefined;
      if (typeof v !== 'string') throw new RedirectError('invalid_request', `${name} must be a string`);
      return v;
    };
    if (query['request'] !== undefined) throw new RedirectError('request_not_supported', 'request objects are not supported');
    if (query['request_uri'] !== undefined) throw new RedirectError('invalid_request', 'request_uri is only for a pushed authorization request\'s reference, and is not pushed itself');
    if (!pushed && client.require_pushed_authorization_requests === true) throw new RedirectError('invalid_request', 'this client must push its authorization requests (RFC 9126): POST them to /oauth2/par and send request_uri');
    const responseType = text('response_type');
    if (responseType === undefined) throw new RedirectError('invalid_request', 'response_type is required');
    if (responseType !== 'code') throw new RedirectError('unsupported_response_type', 'only response_type=code is supported');
    if (!client.grant_types.includes('authorization_code')) throw new RedirectError('unauthorized_client', 'the client may not use the authorization_code grant');
    const { scope, refused: unknown } = personScope(text('scope'), client.scopes);
    if (unknown !== undefined) throw new RedirectError('invalid_scope', `scope "${unknown.slice(0, 100)}" is not allowed for this client`);
    const state = text('state');
    if (state !== undefined && state.length > MAX_STATE) throw new RedirectError('invalid_request', `state is longer than ${MAX_STATE} characters`);
    const nonce = text('nonce');
    if (nonce !== undefined && nonce.length > MAX_NONCE) throw new RedirectError('invalid_request', `nonce is longer than ${MAX_NONCE} characters`);
    const challenge = text('code_challenge');
    const method = text('code_challenge_method');
    if (challenge === undefined) {
      if (method !== undefined) throw new RedirectError('invalid_request', 'code_challenge_method without code_challenge');
      if (client.public) throw new RedirectError('invalid_request', 'code_challenge is required: a public client must use PKCE (S256)');
    } else {
      // RFC 7636 4.3: an absent method means plain, which is refused (RFC 9700 2.1.1).
      if (method !== 'S256') throw new RedirectError('invalid_request', 'code_challenge_method must be S256; plain is not supported');
      if (!PKCE_VALUE.test(challenge)) throw new RedirectError('invalid_request', 'code_challenge must be 43-128 characters of A-Z a-z 0-9 - . _ ~');
    }
    const prompts = (text('prompt') ?? '').split(' ').filter((p) => p !== '');
    const badPrompt = prompts.find((p) => p !== 'none' && p !== 'login');
    if (badPrompt !== undefined) throw new RedirectError('invalid_request', `prompt "${badPrompt.slice(0, 50)}" is not supported; use none or login`);
    if (prompts.includes('none') && prompts.length > 1) throw new RedirectError('invalid_request', 'prompt=none cannot be combined with another value');
    const maxAgeText = text('max_age');
    if (maxAgeText !== undefined && !/^\d{1,9}$/.test(maxAgeText)) throw new RedirectError('invalid_request', 'max_age must be a non-negative integer of seconds');
    const loginHint = text('login_hint');
    const acrValues = text('acr_values')?.split(' ').filter((v) => v !== '').slice(0, 10);
    const request: AuthorizationRequest = {
      client_id: client.client_id,
      redirect_uri,
      scope,
      ...(state !== undefined && { state }),
      ...(nonce !== undefined && { nonce }),
      ...(challenge !== undefined && { code_challenge: challenge }),
      ...(maxAgeText !== undefined && { max_age: Number(maxAgeText) }),
      ...(loginHint !== undefined && { login_hint: loginHint.slice(0, 256) }),
      ...(acrValues !== undefined && acrValues.length > 0 && { acr_values: acrValues }),
      ...(pushed && { pushed: true as const }),
      csrf: '',
    };
    return { request, prompts };
  }

  /** The code is redeemed at this region's token endpoint, on this actor: no consistency wait is needed. */
  async function issueCode(org: IssuingOrg, request: AuthorizationRequest, facts: SignInFacts, headers?: Record<string, string>, session?: PersonSession): Promise<AuthorizeAnswer> {
    const code = randomBytes(32).toString('base64url');
    await org.execute({
      kind: 'IssueOAuthCode',
      code: {
        code_hash: sha256(code),
        client_id: request.client_id,
        redirect_uri: request.redirect_uri,
        ...(request.code_challenge !== undefined && { code_challenge: request.code_challenge }),
        scope: request.scope,
        ...(request.nonce !== undefined && { nonce: request.nonce }),
        ...facts,
      },
      ...(session !== undefined && { session }),
    });
    return back(request.redirect_uri, { code, state: request.state }, headers);
  }

  function ssoButtons(state: OrgState, authorizeUrl: string): SsoButton[] {
    const out: SsoButton[] = [];
    for (const c of state.sso_credentials.values()) {
      if (!c.enable_in_slashid_oidc_authz_server) continue;
      out.push({ label: c.label || c.provider, href: `/authenticate/oidc/${encodeURIComponent(c.client_id)}/start?redirect_uri=${encodeURIComponent(authorizeUrl)}` });
    }
    return out;
  }

  async function page(found: NonNullable<ReturnType<ClientFinder['find']>>, request: AuthorizationRequest, status: number, error?: string, handleType?: HandleType): Promise<AuthorizeAnswer> {
    const csrf = newCsrf();
    const sealed = deps.sealer.seal('authorize-request', { ...request, csrf }, now() + FORM_TTL_S);
    const again = new URL('/oauth2/authorize', deps.issuer());
    const params: PushedParams = {};
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: request.client_id, redirect_uri: request.redirect_uri, scope: request.scope.join(' '), state: request.state, nonce: request.nonce, code_challenge: request.code_challenge, code_challenge_method: request.code_challenge && 'S256' })) {
      if (v !== undefined && v !== '') params[k] = v;
    }
    // A pushed request comes back from an SSO sign-in through a reference of its own, as the form lives: pushed
    // again (an entry in the organization's log) only when the page offers an SSO button to come back from.
    const offersSso = [...found.org.state.sso_credentials.values()].some((c) => c.enable_in_slashid_oidc_authz_server);
    const pushedAgain = request.pushed && offersSso ? await pushRequest(found.org, request.client_id, params, FORM_TTL_S) : undefined;
    for (const [k, v] of Object.entries(pushedAgain ? { client_id: request.client_id, request_uri: pushedAgain.request_uri } : params)) again.searchParams.set(k, v);
    const hint = request.login_hint;
    return {
      kind: 'page',
      status,
      html: signInPage({
        org_name: found.org.state.org_name,
        client_name: found.client.client_name,
        request: sealed,
        csrf,
        handle_type: handleType ?? guessHandleType(hint),
        ...(hint !== undefined && { login_hint: hint }),
        ...(error !== undefined && { error }),
        sso: ssoButtons(found.org.state, again.href),
      }),
      headers: { 'Set-Cookie': setCookie(CSRF_COOKIE, csrf, FORM_TTL_S, secure()), 'Content-Security-Policy': signInPageCsp(request.redirect_uri) },
    };
  }

  /** A posted form of the hosted page: its sealed request, from this browser (double submit), its client still there. */
  function openForm(form: Partial<Pick<SignInForm, 'request' | 'csrf'>>, caller: Caller): { request: AuthorizationRequest; found: NonNullable<ReturnType<ClientFinder['find']>> } | AuthorizeAnswer {
    const request = deps.sealer.open<AuthorizationRequest>('authorize-request', form.request ?? '', now());
    if (!request) return badPage('invalid_request', 'the sign-in form expired or was altered; start again from the application');
    // Double submit: the form's value and the cookie set with it, so another site cannot sign the browser in.
    const cookieCsrf = readCookie(caller.cookie, CSRF_COOKIE);
    if (form.csrf !== request.csrf || cookieCsrf !== request.csrf) return badPage('invalid_request', 'the sign-in form did not come from this browser; start again from the application');
    const found = deps.clients.find(request.client_id);
    if (!found || !found.client.redirect_uris.includes(request.redirect_uri)) return badPage('invalid_client', 'the client or its redirect_uri no longer exists');
    return { request, found };
  }

  const secondStep = (found: NonNullable<ReturnType<ClientFinder['find']>>, request: AuthorizationRequest, form: Pick<SecondFactorForm, 'request' | 'csrf'>, challenge: string, methods: readonly string[], status: number, error?: string) =>
    secondStepPage(deps, { org: found.org, client_name: found.client.client_name, redirect_uri: request.redirect_uri }, form, challenge, methods, status, error);

  return {
    async push(clientId, params) {
      const refuse = (error: string, description: string) => new ServiceError('ERR_BAD_REQUEST', description, { oauth: error });
      if (params['client_id'] !== undefined && params['client_id'] !== clientId) throw refuse('invalid_request', 'client_id: differs from the authenticated client');
      const query = { ...params, client_id: clientId };
      const resolved = clientOf(query);
      if ('kind' in resolved) throw refuse(resolved.error, resolved.description);
      try {
        check(query, resolved.found.client, resolved.redirect_uri, true);
      } catch (error) {
        if (error instanceof RedirectError) throw refuse(error.error, error.description);
        throw error;
      }
      const kept: PushedParams = {};
      for (const [k, v] of Object.entries(query)) if (typeof v === 'string') kept[k] = v;
      const pushed = await pushRequest(resolved.found.org, clientId, kept);
      if (pushed === undefined) throw new ServiceError('ERR_TOO_MANY_REQUESTS', 'too many pushed authorization requests are waiting; retry shortly', { oauth: 'temporarily_unavailable', headers: { 'Retry-After': '5' } });
      return pushed;
    },

    async start(query, caller) {
      // RFC 9126 4: a request_uri stands for the whole pushed request; other parameters but client_id are ignored.
      let pushed = false;
      if (query['request_uri'] !== undefined) {
        const clientId = query['client_id'];
        const requestUri = query['request_uri'];
        if (typeof clientId !== 'string' || clientId === '') return badPage('invalid_request', 'client_id is required with request_uri');
        if (typeof requestUri !== 'string') return badPage('invalid_request_uri', 'request_uri must be a string');
        const owner = deps.clients.find(clientId);
        const redeemed = owner === undefined ? { ok: false as const, reason: 'unknown' as const } : await redeemRequest(owner.org, requestUri, clientId);
        if (!redeemed.ok) return badPage('invalid_request_uri', redeemed.reason === 'expired' ? 'request_uri has expired; push the request again' : 'request_uri is unknown or was used already; push the request again');
        query = redeemed.params;
        pushed = true;
      }
      const resolved = clientOf(query);
      if ('kind' in resolved) return badPage(resolved.error, resolved.description);
      const { found, redirect_uri } = resolved;
      let checked: ReturnType<typeof check>;
      try {
        checked = check(query, found.client, redirect_uri, pushed);
      } catch (error) {
        const state = query['state'];
        // The state goes back with the refusal too, unless it is the refusal.
        if (error instanceof RedirectError) return back(redirect_uri, { error: error.error, error_description: error.description, state: typeof state === 'string' && state.length <= MAX_STATE ? state : undefined });
        throw error;
      }
      const { request, prompts } = checked;
      const session = currentSession(deps.sealer, found.org, caller.cookie, deps.clock.nowMs());
      const fresh = session !== undefined && !prompts.includes('login') && (request.max_age === undefined || now() - session.auth_time <= request.max_age) &&
        // step-up: a session weaker than the acr asked for signs in again, where a second factor is asked for
        acrSatisfied(request.acr_values, session.amr);
      if (fresh) {
        const { org: _org, expires: _expires, password: _password, ...facts } = session;
        return issueCode(found.org, request, facts);
      }
      if (prompts.includes('none')) return back(redirect_uri, { error: 'login_required', error_description: 'the person must sign in', state: request.state });
      return page(found, request, 200);
    },

    async signIn(form, caller) {
      const opened = openForm(form, caller);
      if ('kind' in opened) return opened;
      const { request, found } = opened;
      const handleType = HANDLE_TYPES.find((t) => t === form.handle_type) ?? 'email_address';
      const signedIn = await hostedSignIn(deps, found.org, form, caller, PAGE_SECOND_FACTORS);
      if ('status' in signedIn) return withRetry(await page(found, request, signedIn.status, signedIn.message, handleType), signedIn);
      // The same request and check value go on to the second step.
      if ('second_factor' in signedIn) return await secondStep(found, request, form as SecondFactorForm, signedIn.second_factor.challenge, signedIn.second_factor.methods, 200);
      // The session the sign-in opens is recorded with the code, in one entry.
      return issueCode(found.org, request, signedIn.facts, { 'Set-Cookie': signedIn.cookie }, signedIn.session);
    },

    async secondFactor(form, caller) {
      const opened = openForm(form, caller);
      if ('kind' in opened) return opened;
      const { request, found } = opened;
      const step = form as SecondFactorForm;
      const { methods, answered } = secondStepPosted(form);
      if (!answered) return await secondStep(found, request, step, form.challenge ?? '', methods, 400, NOTHING_ENTERED);
      const signedIn = await hostedSecondFactor(deps, found.org, form, caller);
      if ('status' in signedIn) {
        // A challenge expired or not this organization's: the sign-in starts again; a wrong code: the code again.
        if (signedIn.status === 400) return page(found, request, 400, SIGN_IN_AGAIN);
        return withRetry(await secondStep(found, request, step, form.challenge ?? '', methods, signedIn.status, signedIn.message), signedIn);
      }
      return issueCode(found.org, request, signedIn.facts, { 'Set-Cookie': signedIn.cookie }, signedIn.session);
    },
  };
}
