// SSO sign-in through an organization's OIDC provider credential: the start (state, nonce and PKCE, bound to
// the browser) and the callback (state, code exchange and ID-token verification by openid-client), then the
// person found or registered by verified email handle: the new first step in front of the issuing pipeline.
import * as oidc from 'openid-client';
import { badRequest, notFound, quote, ServiceError } from '../errors.js';
import type { Command } from '../domain/commands.js';
import { expired } from '../domain/anonymous.js';
import { checkFactorAllowed, checkRedirectAllowed, checkSelfRegistration, newPersonActive } from '../domain/org-config.js';
import { joinableBySso } from '../domain/handle-verification.js';
import { checkHandle } from '../domain/rules.js';
import { SIGN_IN_DENIED } from '../domain/sign-in.js';
import { handleKey, type Handle, type Person, type SsoCredential } from '../domain/state.js';
import type { Clock } from '../lib/clock.js';
import { createAdmission, type Admitted, type SecondFactorRequired, type SignInContext, type SignInOutcome } from '../auth/admission.js';
import type { Consistency, IssuePipeline, IssuingOrg } from '../auth/issue.js';
import type { Sealer } from '../lib/signed.js';
import { appleClientSecret } from './apple.js';
import { describe, type ProviderEndpoints, type ProviderSetup } from './endpoints.js';
import { followedGroups } from './groups-claim.js';
import type { PendingFlow, PendingFlows } from './pending.js';
import type { SecretSealer } from './secrets.js';
import { STATE_TTL_MS, type StateCookies } from './state-cookie.js';
import { readApiPerson, UserApiError } from './user-api.js';
import { verifiedEmail } from './verified-email.js';
import type { SsoProvider } from './providers.js';
import type { ProviderClient, ProviderTokenResponse, ProviderTokens } from './provider-tokens.js';

const METHOD = 'oidc' as const;

/** The linking rule's refusal (domain/handle-verification.ts): an unverified address may be someone's pre-claim. */
const NOT_JOINED =
  'email_address: the person holding this address registered it without verifying it, so an SSO sign-in does not join them; ' +
  'verify the address first: complete a password reset sent to it, then sign in again';

export interface SsoSignInDeps {
  clock: Clock;
  endpoints: ProviderEndpoints;
  sealer: SecretSealer;
  cookies: StateCookies;
  pending: PendingFlows;
  /** where the provider's tokens of each sign-in are kept */
  providerTokens: Pick<ProviderTokens, 'keep'>;
  pipeline: Pick<IssuePipeline, 'issue' | 'verify' | 'refuse'>;
  /** signs the second-factor challenge a person who holds a second factor answers (the one password sign-in's use) */
  challenges: Sealer;
  /** the organization, when it exists here */
  org(id: string): IssuingOrg | undefined;
  /** the service's own callback URL, registered with every provider: <issuer>/authenticate/oidc/callback */
  callbackUrl(): string;
  /** where self-registered persons live: the local region */
  region: string;
  newPersonId(): string;
  /** the ID of the session a sign-in opens */
  newSessionId(): string;
}

export interface StartRequest {
  org: IssuingOrg;
  client_id: string;
  redirect_uri: string;
  /** the browser's address, for the AuthenticationFailed of a refused start */
  ip: string;
  consistency: Consistency;
  /**
   * the live anonymous person of this organization whose token came with the start (see
   * src/browser/anonymous.ts): kept with the pending flow, the callback's registration upgrades it and its
   * sign-in of an existing person deletes it, as password sign-in and registration do
   */
  anonymous_person_id?: string | undefined;
}

export interface Started {
  /** the provider's authorization URL */
  location: string;
  /** the Set-Cookie value binding the state to this browser */
  cookie: string;
}

export interface CallbackRequest {
  /** the callback's query parameters as received */
  query: Record<string, string>;
  cookieHeader: string | undefined;
  ip: string;
  origin: string;
  userAgent: string;
  consistency: Consistency;
}

/**
 * How a callback ended. A failure carries the error to answer and, once the flow is known, the redirect_uri to
 * send the browser to with `error` (an OAuth error code) and `error_description` (the error's message).
 */
export type CallbackOutcome =
  | { kind: 'signed_in'; token: string; redirect_uri: string }
  /** the person holds a second factor: no token yet, the challenge to answer at /authenticate/<method> */
  | { kind: 'second_factor'; second_factor: SecondFactorRequired; redirect_uri: string }
  | { kind: 'failed'; error: ServiceError; oauth_error: string; redirect_uri?: string };

export interface SsoSignIn {
  start(r: StartRequest): Promise<Started>;
  callback(r: CallbackRequest): Promise<CallbackOutcome>;
  /** The Set-Cookie value that removes the state cookie; every callback answer carries it. */
  clearCookie(): string;
  /** A credential's token and revocation endpoints, for the provider's tokens kept after sign-in; undefined when the credential is gone. */
  providerClient(orgId: string, clientId: string): Promise<ProviderClient | undefined>;
}

/** A failure already known for what it is: recorded as AuthenticationFailed with this reason and detail. */
class Refusal extends Error {
  /** once the provider vouched for an email address: the handle, and the person when one has it */
  handle?: Handle;
  person_id?: string;
  constructor(
    readonly reason: string,
    readonly error: ServiceError,
    readonly oauthError: string,
    /** false when the pipeline recorded it already */
    readonly record = true,
  ) {
    super(error.message);
  }
}

const refusal = (reason: string, error: ServiceError, oauthError: string) => new Refusal(reason, error, oauthError);
const unauthorized = (message: string) => new ServiceError('ERR_UNAUTHORIZED', message);

/** An admitted SSO sign-in: its token (and the jti the provider's tokens are kept under), or a second-factor challenge. */
type SsoOutcome = ({ token: string; jti: string } | { second_factor: SecondFactorRequired }) & { person_id: string };

/** The OAuth error code a provider sent, kept only if it looks like one (it is echoed into a URL). */
const OAUTH_ERROR = /^[a-z_]{1,64}$/;

export function createSsoSignIn(deps: SsoSignInDeps): SsoSignIn {
  const { clock } = deps;
  const admission = createAdmission(deps);
  // Key sets by their URL, kept across sign-ins so that each callback does not fetch the provider's keys again.
  const jwksCaches = new Map<string, oidc.ExportedJWKSCache>();

  function credentialOf(org: IssuingOrg, clientId: string): SsoCredential {
    const credential = org.state.sso_credentials.get(clientId);
    if (!credential) throw notFound(`OIDC provider credential ${quote(clientId)} not found`);
    return credential;
  }

  function clientSecret(org: IssuingOrg, credential: SsoCredential): string {
    if (credential.provider !== 'apple') return deps.sealer.open(org.id, credential.client_id, 'client_secret', credential.client_secret);
    const options = credential.options['apple'];
    if (!credential.private_key || !options?.team_id || !options.key_id) {
      throw badRequest(`credential ${quote(credential.client_id)}: apple sign-in needs options.apple.private_key, team_id and key_id`);
    }
    return appleClientSecret(
      {
        client_id: credential.client_id,
        team_id: options.team_id,
        key_id: options.key_id,
        private_key: deps.sealer.open(org.id, credential.client_id, 'private_key', credential.private_key),
        secret_lifetime: options.secret_lifetime ?? '720h',
      },
      clock.nowMs(),
    );
  }

  async function configuration(credential: SsoCredential, secret: string | undefined): Promise<ProviderSetup> {
    const setup = await deps.endpoints.setup(credential, secret);
    const { config } = setup;
    // The ID token's signature is checked against the provider's key set, not only trusted for arriving over TLS.
    oidc.enableNonRepudiationChecks(config);
    const cached = jwksCaches.get(keySetOf(config));
    if (cached) oidc.setJwksCache(config, cached);
    return setup;
  }

  async function start(r: StartRequest): Promise<Started> {
    const credential = credentialOf(r.org, r.client_id);
    const policy: Array<[string, () => void]> = [
      ['method_not_allowed', () => checkFactorAllowed(r.org.state.config, METHOD)],
      ['redirect_uri_not_allowed', () => checkRedirectAllowed(r.org.state.config, r.redirect_uri)],
    ];
    for (const [reason, check] of policy) {
      try {
        check();
      } catch (error) {
        const detail = error instanceof ServiceError ? error.message : String(error);
        await deps.pipeline.refuse(r.org, r.consistency, { method: METHOD, client_ip_address: r.ip, failure_reason: reason, failure_detail: detail });
        throw error;
      }
    }
    const { config, userApi, pkce, responseMode } = await configuration(credential, undefined);
    const flow: PendingFlow = {
      state: oidc.randomState(),
      org: r.org.id,
      client_id: credential.client_id,
      redirect_uri: r.redirect_uri,
      nonce: oidc.randomNonce(),
      code_verifier: oidc.randomPKCECodeVerifier(),
      ...(r.anonymous_person_id !== undefined && { anonymous_person_id: r.anonymous_person_id }),
      expires: clock.nowMs() + STATE_TTL_MS,
    };
    const scopes = credential.options[credential.provider]?.authorize_scopes ?? [];
    const location = oidc.buildAuthorizationUrl(config, {
      redirect_uri: deps.callbackUrl(),
      scope: scopes.join(' '),
      state: flow.state,
      // A provider without ID tokens has nothing to carry a nonce back in.
      ...(!userApi && { nonce: flow.nonce }),
      ...(pkce && { code_challenge: await oidc.calculatePKCECodeChallenge(flow.code_verifier), code_challenge_method: 'S256' }),
      ...(responseMode && { response_mode: responseMode }),
    });
    const full = await deps.pending.add(flow, r.ip);
    if (full) {
      const whose = full === 'organization' ? 'for this organization' : 'from this address for this organization';
      throw new ServiceError('ERR_TOO_MANY_REQUESTS', `too many SSO sign-ins are in progress ${whose}; retry later`, { headers: { 'Retry-After': '60' } });
    }
    return { location: location.href, cookie: deps.cookies.issue(flow, clock.nowMs()) };
  }

  /** The state's flow, taken once; a missing, foreign, replayed or lapsed state is a Refusal (recorded when the organization is known). */
  async function takeFlow(r: CallbackRequest): Promise<{ flow?: PendingFlow; org?: string; refusal?: Refusal }> {
    const state = r.query['state'];
    const binding = deps.cookies.read(r.cookieHeader);
    const bad = (reason: string, message: string, org?: string) => ({ ...(org !== undefined && { org }), refusal: refusal(reason, badRequest(message), 'invalid_request') });
    if (!state) {
      if (binding) await deps.pending.take(binding.state);
      return bad('invalid_state', 'state: the callback has no state parameter', binding?.org);
    }
    const taken = await deps.pending.take(state);
    if (taken.kind === 'used') return bad('state_already_used', 'state: this sign-in was completed or refused already; its state is single use, start again', taken.org);
    if (taken.kind === 'unknown') {
      if (binding && binding.state === state) return bad('state_expired', 'state: this sign-in expired (10 minutes); start again', binding.org);
      // The browser's own flow, if any, ends too: someone else's state arrived in its place.
      if (binding) await deps.pending.take(binding.state);
      return bad('invalid_state', 'state: not a sign-in this service started, or not the one this browser started', binding?.org);
    }
    if (!binding || binding.state !== state) {
      if (binding) await deps.pending.take(binding.state);
      return bad('invalid_state', 'state: the sign-in was not started by this browser (its sso_state cookie is missing or names another sign-in)', taken.flow.org);
    }
    return { flow: taken.flow, org: taken.flow.org };
  }

  /**
   * Code exchange, then the ID token verified, or for a provider without one its user API read; library errors
   * become refusals naming the cause. The claims returned carry `email` and `email_verified` either way.
   */
  async function exchange(flow: PendingFlow, credential: SsoCredential, secret: string, query: Record<string, string>): Promise<{ claims: Record<string, unknown>; tokens: ProviderTokenResponse }> {
    let setup: ProviderSetup;
    try {
      setup = await configuration(credential, secret);
    } catch (error) {
      if (error instanceof ServiceError && error.status === 502) throw refusal('provider_unreachable', error, 'server_error');
      throw error;
    }
    const { config, userApi } = setup;
    const current = new URL(deps.callbackUrl());
    for (const [k, v] of Object.entries(query)) current.searchParams.set(k, v);
    let stage = 'the code exchange';
    try {
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        ...(setup.pkce && { pkceCodeVerifier: flow.code_verifier }),
        expectedState: flow.state,
        ...(!userApi && { expectedNonce: flow.nonce }),
        idTokenExpected: !userApi,
      });
      const kept: ProviderTokenResponse = { access_token: tokens.access_token, refresh_token: tokens.refresh_token, id_token: tokens.id_token, expires_in: tokens.expires_in };
      if (userApi) {
        stage = `${userApi.kind}'s user API`;
        const person = await readApiPerson(config, tokens.access_token, userApi);
        if (person.email === undefined) {
          throw refusal('email_not_verified', unauthorized(`${credential.provider} lists no verified email address for this account (GET /user/emails)`), 'access_denied');
        }
        return { claims: { ...person.claims, email: person.email, email_verified: true }, tokens: kept };
      }
      const jwks = oidc.getJwksCache(config);
      if (jwks) jwksCaches.set(keySetOf(config), jwks);
      const claims = tokens.claims();
      if (!claims) throw refusal('invalid_id_token', unauthorized('the provider answered without an ID token'), 'access_denied');
      return { claims, tokens: kept };
    } catch (error) {
      if (error instanceof Refusal) throw error;
      if (error instanceof UserApiError) throw refusal('user_api_failed', unauthorized(error.message), 'access_denied');
      const refused = oauthBodyError(error);
      if (refused) {
        throw refusal('code_exchange_failed', unauthorized(`the provider refused the code exchange: ${refused.error}${refused.description ? ` (${quote(refused.description, 200)})` : ''}`), 'access_denied');
      }
      if (isNetworkError(error)) {
        deps.endpoints.refresh(credential);
        throw refusal('provider_unreachable', new ServiceError('ERR_BAD_GATEWAY', `the provider could not be reached for ${stage}: ${describe(error)}`, { cause: error }), 'server_error');
      }
      if (userApi && stage !== 'the code exchange') throw refusal('user_api_failed', unauthorized(`${stage} failed: ${describe(error)}`), 'access_denied');
      if (error instanceof oidc.ClientError || (error instanceof Error && typeof (error as { code?: unknown }).code === 'string')) {
        deps.endpoints.refresh(credential);
        if (userApi) throw refusal('code_exchange_failed', unauthorized(`the provider's token response was refused: ${describe(error)}`), 'access_denied');
        throw refusal('invalid_id_token', unauthorized(`the provider's ID token was refused: ${describe(error)}`), 'access_denied');
      }
      throw error;
    }
  }

  async function signIn(org: IssuingOrg, flow: PendingFlow, r: CallbackRequest): Promise<SignInOutcome> {
    const providerError = r.query['error'];
    if (providerError !== undefined) {
      const code = OAUTH_ERROR.test(providerError) ? providerError : 'server_error';
      const description = (r.query['error_description'] ?? '').slice(0, 200);
      throw refusal('provider_error', unauthorized(`the provider ended the sign-in: ${quote(providerError)}${description ? ` (${quote(description, 200)})` : ''}`), code);
    }
    if (!r.query['code']) throw refusal('invalid_request', badRequest('code: the callback has neither a code nor an error'), 'invalid_request');
    const credential = org.state.sso_credentials.get(flow.client_id);
    if (!credential) throw refusal('credential_not_found', notFound(`OIDC provider credential ${quote(flow.client_id)} was deleted during the sign-in`), 'server_error');
    try {
      checkFactorAllowed(org.state.config, METHOD);
    } catch (error) {
      throw refusal('method_not_allowed', error as ServiceError, 'access_denied');
    }
    const { claims, tokens } = await exchange(flow, credential, clientSecret(org, credential), r.query);

    const email = verifiedEmail(credential.provider as SsoProvider, claims);
    if (email === undefined) {
      const how = credential.provider === 'azuread' ? 'email_verified true or xms_edov true' : 'email_verified true';
      throw refusal('email_not_verified', unauthorized(`the provider did not vouch for an email address (the ID token has no email with ${how})`), 'access_denied');
    }
    const handle: Handle = { type: 'email_address', value: email };
    try {
      checkHandle(handle, 'email');
    } catch (error) {
      throw refusal('invalid_email', error as ServiceError, 'access_denied');
    }
    try {
      const admitted = await admit(org, r, credential, claims, handle, heldAnonymous(org, flow));
      // The provider's tokens are kept only for a sign-in that ends here: none for a person not yet signed in.
      if ('second_factor' in admitted) return { second_factor: admitted.second_factor };
      // The sign-in's identity token names this authentication: GET /sso/oidc/tokens finds the tokens by it.
      await deps.providerTokens.keep(org.id, admitted.person_id, credential, admitted.jti, tokens);
      return { token: admitted.token };
    } catch (error) {
      if (error instanceof Refusal) {
        error.handle = handle;
        const id = org.state.handles.get(handleKey(handle));
        if (id !== undefined) error.person_id = id;
      }
      throw error;
    }
  }

  /**
   * The anonymous person the start was sent with, if it still is one and alive: upgraded, deleted or past its
   * life while the browser was at the provider, the sign-in goes on as an ordinary one (as an expired token
   * sent to password sign-in does).
   */
  function heldAnonymous(org: IssuingOrg, flow: PendingFlow): Person | undefined {
    if (flow.anonymous_person_id === undefined) return undefined;
    const held = org.state.persons.get(flow.anonymous_person_id);
    return held && held.person_type === 'anonymous' && !expired(held, clock.nowMs()) ? held : undefined;
  }

  /**
   * The person of a verified handle, found or registered, through the admission step every sign-in method
   * shares: the organization's policy, then their token, or a second-factor challenge for a person who holds
   * a second factor (answered at /authenticate/<method>, which issues the token). With a held anonymous
   * person, a registration is that person's upgrade and a sign-in of an existing person deletes it.
   */
  async function admit(org: IssuingOrg, r: CallbackRequest, credential: SsoCredential, claims: Record<string, unknown>, handle: Handle, held: Person | undefined): Promise<SsoOutcome> {
    const groups = followedGroups(credential, claims, org.state);
    const id = org.state.handles.get(handleKey(handle));
    const found = id === undefined ? undefined : org.state.persons.get(id);
    const c: SignInContext = { org, ip: r.ip, origin: r.origin, userAgent: r.userAgent, consistency: r.consistency, anonymous_person_id: held?.person_id };
    let a: Admitted;
    if (found) {
      if (!found.active) throw refusal('person_not_active', unauthorized(SIGN_IN_DENIED), 'access_denied');
      if (!joinableBySso(found, handle)) throw refusal('handle_not_verified', new ServiceError('ERR_FORBIDDEN', NOT_JOINED), 'access_denied');
      // The provider's groups first: the organization's second-factor policy names groups.
      if (groups && groups.join('\n') !== found.groups.join('\n')) await org.execute({ kind: 'SetPersonGroups', person_id: found.person_id, groups });
      a = { method: METHOD, person: org.state.persons.get(found.person_id) ?? found, handle, proof: { method: METHOD } };
    } else {
      try {
        checkSelfRegistration(org.state.config, METHOD, handle);
      } catch (error) {
        throw refusal('self_registration_denied', error as ServiceError, 'access_denied');
      }
      if (!newPersonActive(org.state.config)) {
        // Created, and left for the organization to approve: no token until then.
        const command: Command = { kind: 'CreatePerson', input: { handles: [handle], region: deps.region, active: false, ...(groups && { groups }) }, verified_by: METHOD };
        await org.execute(command);
        throw refusal('person_not_active', unauthorized('the person was registered and awaits the organization\'s approval'), 'access_denied');
      }
      // The upgrade keeps the anonymous person's record, so the provider's groups are set on it first, as for a known person.
      if (held && groups && groups.join('\n') !== held.groups.join('\n')) await org.execute({ kind: 'SetPersonGroups', person_id: held.person_id, groups });
      const { person, upgrade } = admission.registrant(c, { person_id: deps.newPersonId(), region: deps.region, groups }, handle);
      a = { method: METHOD, person, handle, proof: { method: METHOD }, registration: upgrade ? { upgrade } : groups ? { groups } : {} };
    }
    try {
      const challenged = await admission.secondFactor(c, a);
      if (challenged) return { ...challenged, person_id: a.person.person_id };
      const issued = await deps.pipeline.issue(org, admission.request(c, a));
      await openSession(org, r, a.person.person_id, issued);
      return { token: issued.token, jti: issued.jti, person_id: a.person.person_id };
    } catch (error) {
      // The admission step and the pipeline recorded their own refusals (a second factor missing, a hook's
      // denial or failure, the person changed meanwhile).
      const e = error instanceof ServiceError ? error : new ServiceError('ERR_INTERNAL', 'internal error', { cause: error });
      throw new Refusal('pipeline', e, e.status >= 500 ? 'server_error' : 'access_denied', false);
    }
  }

  /** The sign-in's session, which its token belongs to: listed, and ended (the token revoked) by the person or the organization. */
  async function openSession(org: IssuingOrg, r: CallbackRequest, personId: string, issued: { jti: string; exp: number; iat: number }): Promise<void> {
    const nowMs = clock.nowMs();
    await org.execute({
      kind: 'StartSession',
      session: {
        session_id: deps.newSessionId(),
        person_id: personId,
        methods: [METHOD],
        clients: [],
        created_ms: nowMs,
        last_used_ms: nowMs,
        expires_at_ms: issued.exp * 1000,
        ip: r.ip,
        user_agent: r.userAgent,
        tokens: [{ jti: issued.jti, exp: issued.exp }],
      },
    });
  }

  async function record(orgId: string | undefined, r: CallbackRequest, f: Refusal): Promise<void> {
    const org = orgId === undefined ? undefined : deps.org(orgId);
    if (!org) return;
    await deps.pipeline.refuse(org, r.consistency, {
      method: METHOD,
      client_ip_address: r.ip,
      failure_reason: f.reason,
      failure_detail: f.error.message,
      ...(f.handle && { handle: f.handle }),
      ...(f.person_id !== undefined && { person_id: f.person_id }),
    });
  }

  async function providerClient(orgId: string, clientId: string): Promise<ProviderClient | undefined> {
    const org = deps.org(orgId);
    const credential = org?.state.sso_credentials.get(clientId);
    if (!org || !credential) return undefined;
    const { config } = await configuration(credential, clientSecret(org, credential));
    const revocation = config.serverMetadata().revocation_endpoint;
    return {
      async refresh(refreshToken) {
        const t = await oidc.refreshTokenGrant(config, refreshToken);
        return { access_token: t.access_token, refresh_token: t.refresh_token, id_token: t.id_token, expires_in: t.expires_in };
      },
      revoke: revocation === undefined ? undefined : (token, hint) => oidc.tokenRevocation(config, token, { token_type_hint: hint }),
    };
  }

  return {
    start,
    providerClient,
    clearCookie: () => deps.cookies.clear(),
    async callback(r) {
      const taken = await takeFlow(r);
      if (taken.refusal || !taken.flow) {
        const f = taken.refusal as Refusal;
        await record(taken.org, r, f);
        return { kind: 'failed', error: f.error, oauth_error: f.oauthError };
      }
      const flow = taken.flow;
      const org = deps.org(flow.org);
      if (!org) return { kind: 'failed', error: notFound(`organization ${flow.org} not found`), oauth_error: 'server_error', redirect_uri: flow.redirect_uri };
      try {
        const outcome = await signIn(org, flow, r);
        if ('second_factor' in outcome) return { kind: 'second_factor', second_factor: outcome.second_factor, redirect_uri: flow.redirect_uri };
        return { kind: 'signed_in', token: outcome.token, redirect_uri: flow.redirect_uri };
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        if (error.record) await record(flow.org, r, error);
        return { kind: 'failed', error: error.error, oauth_error: error.oauthError, redirect_uri: flow.redirect_uri };
      }
    },
  };
}

/** fetch's failures to connect, and its timeouts: the provider is down or too slow, not wrong. */
/**
 * The OAuth error a token endpoint answered: in an error status (RFC 6749 §5.2, openid-client's
 * ResponseBodyError), or in a 200 body, as GitHub does (openid-client then finds no access_token).
 */
function oauthBodyError(error: unknown): { error: string; description?: string } | undefined {
  if (error instanceof oidc.ResponseBodyError) return { error: error.error, ...(error.error_description && { description: error.error_description }) };
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const body = (e.cause as { body?: unknown } | undefined)?.body as Record<string, unknown> | undefined;
    if (body && typeof body['error'] === 'string') {
      const description = body['error_description'];
      return { error: OAUTH_ERROR.test(body['error']) ? body['error'] : 'invalid_request', ...(typeof description === 'string' && { description }) };
    }
  }
  return undefined;
}

/** Where a provider's keys are published: what its key-set cache is kept under. */
function keySetOf(config: oidc.Configuration): string {
  const metadata = config.serverMetadata();
  return metadata.jwks_uri ?? metadata.issuer;
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return true;
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) return true;
  return error.cause instanceof Error && isNetworkError(error.cause);
}
