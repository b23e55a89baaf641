// The device authorization grant's person side and its endpoint (RFC 8628): the device authorization endpoint
// that hands a client a device code and a user code, and the user code page where a person enters the code,
// signs in on the hosted sign-in page if they have no session there, and allows or denies the device. The
// token endpoint's grant (grants/device-code.ts) then redeems the allowed code.
import { randomBytes, randomInt } from 'node:crypto';
import { createLimiter } from '../auth/throttle.js';
import type { IssuingOrg } from '../auth/issue.js';
import { DEVICE_CODE_GRANT } from '../domain/oauth-clients.js';
import { DEVICE_CODE_TTL_MS, DEVICE_POLL_INTERVAL_S, deviceCodeByUser, type DecideOutcome, type OAuthDeviceCode } from '../domain/device-codes.js';
import type { OrgState } from '../domain/state.js';
import { ServiceError } from '../errors.js';
import { readCookie } from '../lib/signed.js';
import {
  currentSession,
  hostedSecondFactor,
  hostedSignIn,
  NOTHING_ENTERED,
  PAGE_SECOND_FACTORS,
  secondStepPage,
  secondStepPosted,
  SIGN_IN_AGAIN,
  withRetry,
  type AuthorizeAnswer,
  type AuthorizeDeps,
  type Caller,
  type HostedSignedIn,
  type SecondFactorForm,
} from './authorize.js';
import type { AuthenticatedClient } from './client-auth.js';
import { deviceDonePage, deviceEntryPage, deviceConfirmPage } from './device-page.js';
import { oauthError } from './errors.js';
import { personScope } from './scopes.js';
import { CSRF_COOKIE, FORM_TTL_S, newCsrf, setCookie } from './session.js';
import { signInPage } from './sign-in-page.js';
import { sha256 } from './user-tokens.js';

export const DEVICE_AUTHORIZATION_PATH = '/oauth2/device_authorization';
export const DEVICE_PATH = '/oauth2/device';
export const DEVICE_SIGN_IN_PATH = '/oauth2/device/sign-in';
export const DEVICE_CONFIRM_PATH = '/oauth2/device/confirm';
/** the sign-in's second step, for a person who holds TOTP or a passkey */
export const DEVICE_SECOND_FACTOR_PATH = '/oauth2/device/second-factor';

/** RFC 8628 6.1: consonants only (no words, no 0/O or 1/I to mistake), 8 of them: 20^8, about 34 bits. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
/** RFC 8628 5.1: wrong codes one address may enter before it waits; with 34 bits, guessing a live code is hopeless. */
const WRONG_CODES = { windowMs: 5 * 60_000, limit: 20 };

/** A user code as shown: two groups of four. */
const shown = (canonical: string): string => (canonical.length === USER_CODE_LENGTH ? `${canonical.slice(0, 4)}-${canonical.slice(4)}` : canonical);

export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return shown(code);
}

/** RFC 8628 6.1: what the person typed, as compared: case and dashes or spaces do not matter. */
export const canonicalUserCode = (typed: string): string => typed.toUpperCase().replace(/[^A-Z]/g, '').slice(0, 64);

/** RFC 8628 3.2 */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface DeviceFlowDeps extends Pick<AuthorizeDeps, 'sealer' | 'clock' | 'signIn' | 'secondFactor' | 'passkeys' | 'issuer' | 'newSessionId'> {
  /** every organization: a user code is entered without naming its organization */
  orgs(): Iterable<IssuingOrg & { state: OrgState }>;
}

/** The user code's request, sealed into the sign-in and confirmation forms so that it comes back unaltered. */
interface DeviceRequest {
  org: string;
  user_code: string;
  csrf: string;
}

export interface DeviceFlow {
  /** POST /oauth2/device_authorization */
  authorize(caller: AuthenticatedClient, scope: string | undefined): Promise<DeviceAuthorizationResponse>;
  /** GET /oauth2/device: the code form, or with a user_code the sign-in or the confirmation */
  enter(userCode: string | undefined, caller: Caller): AuthorizeAnswer;
  /** POST /oauth2/device/sign-in: the hosted sign-in, then back to the confirmation */
  signIn(form: Record<string, string | undefined>, caller: Caller): Promise<AuthorizeAnswer>;
  /** POST /oauth2/device/second-factor: the sign-in's second step (a code, a recovery code or a passkey), then back to the confirmation */
  secondFactor(form: Partial<SecondFactorForm>, caller: Caller): Promise<AuthorizeAnswer>;
  /** POST /oauth2/device/confirm: allow or deny */
  confirm(form: Record<string, string | undefined>, caller: Caller): Promise<AuthorizeAnswer>;
}

export function createDeviceFlow(deps: DeviceFlowDeps): DeviceFlow {
  const nowS = () => Math.floor(deps.clock.nowMs() / 1000);
  const wrongCodes = createLimiter({ ...WRONG_CODES, maxKeys: 10_000 });
  const pageOf = (status: number, html: string, headers?: Record<string, string>): AuthorizeAnswer => ({ kind: 'page', status, html, ...(headers && { headers }) });

  /** The live device code a user code names, in whichever organization holds it. */
  function lookup(userCode: string): { org: IssuingOrg & { state: OrgState }; code: OAuthDeviceCode } | undefined {
    const hash = sha256(canonicalUserCode(userCode));
    const now = deps.clock.nowMs();
    for (const org of deps.orgs()) {
      const code = deviceCodeByUser(org.state, hash, now);
      if (code !== undefined) return { org, code };
    }
    return undefined;
  }

  const clientName = (state: OrgState, clientId: string) => state.oauth_clients.get(clientId)?.client_name ?? 'an application';

  /** A form with a fresh double-submit value: the sealed request and the cookie that goes with it. */
  function sealedForm(org: string, userCode: string): { request: string; csrf: string; cookie: string } {
    const csrf = newCsrf();
    const request = deps.sealer.seal('device-request', { org, user_code: canonicalUserCode(userCode), csrf } satisfies DeviceRequest, nowS() + FORM_TTL_S);
    return { request, csrf, cookie: setCookie(CSRF_COOKIE, csrf, FORM_TTL_S, deps.issuer().startsWith('https:')) };
  }

  function signInStep(org: IssuingOrg & { state: OrgState }, code: OAuthDeviceCode, userCode: string, status: number, error?: string, retryAfter?: string): AuthorizeAnswer {
    const form = sealedForm(org.id, userCode);
    const html = signInPage({
      org_name: org.state.org_name,
      client_name: `${clientName(org.state, code.client_id)} on your device`,
      request: form.request,
      csrf: form.csrf,
      action: DEVICE_SIGN_IN_PATH,
      handle_type: 'email_address',
      ...(error !== undefined && { error }),
      // SSO sign-in returns to the authorization endpoint, which a device request does not go through.
      sso: [],
    });
    return pageOf(status, html, { 'Set-Cookie': form.cookie, ...(retryAfter !== undefined && { 'Retry-After': retryAfter }) });
  }

  /** The person signed in at the hosted page in the code's organization, while that session stands. */
  const sessionFor = (org: IssuingOrg & { state: OrgState }, cookie: string | undefined) => currentSession(deps.sealer, org, cookie, deps.clock.nowMs());

  /** The request a posted form carries, when it is this browser's and still open. */
  function opened(form: Record<string, string | undefined>, caller: Caller): DeviceRequest | undefined {
    const request = deps.sealer.open<DeviceRequest>('device-request', form['request'] ?? '', nowS());
    if (!request || form['csrf'] !== request.csrf || readCookie(caller.cookie, CSRF_COOKIE) !== request.csrf) return undefined;
    return request;
  }

  /** A posted form's request and the live code it names, or the page to show instead. */
  function posted(form: Record<string, string | undefined>, caller: Caller): { request: DeviceRequest; found: NonNullable<ReturnType<typeof lookup>> } | AuthorizeAnswer {
    const request = opened(form, caller);
    if (!request) return expired();
    const found = lookup(request.user_code);
    if (!found || found.org.id !== request.org) return pageOf(400, deviceEntryPage({ error: 'That code expired meanwhile. Start again on your device.' }));
    return { request, found };
  }

  /** The second step's page, posting to the device page's own route; it redirects only to the service. */
  const secondStep = (found: { org: IssuingOrg & { state: OrgState }; code: OAuthDeviceCode }, form: Pick<SecondFactorForm, 'request' | 'csrf'>, challenge: string, methods: readonly string[], status: number, error?: string) =>
    secondStepPage(deps, { org: found.org, client_name: `${clientName(found.org.state, found.code.client_id)} on your device`, action: DEVICE_SECOND_FACTOR_PATH }, form, challenge, methods, status, error);

  /** A completed sign-in (one factor or two): its session opened, and back to the code for the confirmation. */
  async function signedInBack(org: IssuingOrg, request: DeviceRequest, signedIn: HostedSignedIn): Promise<AuthorizeAnswer> {
    // No code is issued here to record the session with: it opens in an entry of its own, and the device's grant joins it.
    await org.execute({ kind: 'StartSession', session: signedIn.session });
    // Back to the code with the new session: the confirmation is asked for there, as for a person already signed in.
    const back = `${DEVICE_PATH}?user_code=${encodeURIComponent(request.user_code)}`;
    return { kind: 'redirect', location: back, headers: { 'Set-Cookie': signedIn.cookie } };
  }

  const expired = () => pageOf(400, deviceEntryPage({ error: 'The form expired or did not come from this browser. Enter the code again.' }));

  return {
    async authorize(caller, requested) {
      const { org, client } = caller;
      if (!client.grant_types.includes(DEVICE_CODE_GRANT)) throw oauthError('unauthorized_client', `the client is not registered for the ${DEVICE_CODE_GRANT} grant`);
      const { scope, refused } = personScope(requested, client.scopes);
      if (refused !== undefined) throw oauthError('invalid_scope', `scope "${refused.slice(0, 100)}" is not allowed for this client`);
      const device_code = randomBytes(32).toString('base64url');
      // A user code is entered without its organization, so it must be free in every one; a clash is redrawn.
      for (let attempt = 0; ; attempt++) {
        const user_code = newUserCode();
        if (lookup(user_code) !== undefined && attempt < 5) continue;
        try {
          await org.execute({ kind: 'IssueOAuthDeviceCode', input: { device_code_hash: sha256(device_code), user_code_hash: sha256(canonicalUserCode(user_code)), client_id: client.client_id, scope } });
        } catch (error) {
          if (error instanceof ServiceError && error.status === 409 && attempt < 5) continue;
          throw error;
        }
        const verification_uri = `${deps.issuer()}${DEVICE_PATH}`;
        return { device_code, user_code, verification_uri, verification_uri_complete: `${verification_uri}?user_code=${user_code}`, expires_in: DEVICE_CODE_TTL_MS / 1000, interval: DEVICE_POLL_INTERVAL_S };
      }
    },

    enter(userCode, caller) {
      if (userCode === undefined || userCode.trim() === '') return pageOf(200, deviceEntryPage({}));
      const waitMs = wrongCodes.retryAfterMs(caller.ip, deps.clock.nowMs());
      if (waitMs > 0) return pageOf(429, deviceEntryPage({ error: 'Too many wrong codes from this address. Wait a few minutes and try again.' }), { 'Retry-After': String(Math.ceil(waitMs / 1000)) });
      const found = lookup(userCode);
      if (!found || found.code.approved !== undefined || found.code.denied) {
        wrongCodes.fail(caller.ip, deps.clock.nowMs());
        return pageOf(400, deviceEntryPage({ user_code: userCode.slice(0, 64), error: 'That code is unknown, expired or already used. Check the code your device shows.' }));
      }
      const { org, code } = found;
      if (!sessionFor(org, caller.cookie)) return signInStep(org, code, userCode, 200);
      const form = sealedForm(org.id, userCode);
      const html = deviceConfirmPage({ org_name: org.state.org_name, client_name: clientName(org.state, code.client_id), user_code: shown(canonicalUserCode(userCode)), scope: code.scope, request: form.request, csrf: form.csrf, action: DEVICE_CONFIRM_PATH });
      return pageOf(200, html, { 'Set-Cookie': form.cookie });
    },

    async signIn(form, caller) {
      const open = posted(form, caller);
      if ('kind' in open) return open;
      const { request, found } = open;
      const signedIn = await hostedSignIn(deps, found.org, form, caller, PAGE_SECOND_FACTORS);
      if ('status' in signedIn) return signInStep(found.org, found.code, request.user_code, signedIn.status, signedIn.message, signedIn.retryAfter);
      // The same request and check value go on to the second step, as on the authorization endpoint's page.
      if ('second_factor' in signedIn) return secondStep(found, { request: form['request'] ?? '', csrf: form['csrf'] ?? '' }, signedIn.second_factor.challenge, signedIn.second_factor.methods, 200);
      return signedInBack(found.org, request, signedIn);
    },

    async secondFactor(form, caller) {
      const open = posted(form, caller);
      if ('kind' in open) return open;
      const { request, found } = open;
      const step = form as SecondFactorForm;
      const { methods, answered } = secondStepPosted(form);
      if (!answered) return secondStep(found, step, form.challenge ?? '', methods, 400, NOTHING_ENTERED);
      const signedIn = await hostedSecondFactor(deps, found.org, form, caller);
      if ('status' in signedIn) {
        // A challenge expired or not this organization's: the sign-in starts again; a wrong code: the code again.
        if (signedIn.status === 400) return signInStep(found.org, found.code, request.user_code, 400, SIGN_IN_AGAIN);
        return withRetry(await secondStep(found, step, form.challenge ?? '', methods, signedIn.status, signedIn.message), signedIn);
      }
      return signedInBack(found.org, request, signedIn);
    },

    async confirm(form, caller) {
      const open = posted(form, caller);
      if ('kind' in open) return open;
      const { request, found } = open;
      const session = sessionFor(found.org, caller.cookie);
      if (!session) return signInStep(found.org, found.code, request.user_code, 200);
      const allow = form['decision'] === 'allow';
      const { org: _org, expires: _expires, password: _password, ...facts } = session;
      const decided = await found.org.execute({ kind: 'DecideOAuthDeviceCode', input: { user_code_hash: found.code.user_code_hash, approved: allow ? facts : undefined } });
      const reply = decided.reply as DecideOutcome;
      if (!reply.ok) return pageOf(400, deviceEntryPage({ error: `${reply.description}.` }));
      return pageOf(200, deviceDonePage({ allowed: allow, client_name: clientName(found.org.state, found.code.client_id) }));
    },
  };
}
