// The end-session endpoint's use case (OpenID RP-Initiated Logout 1.0): an application sends the browser here
// to end the person's session. With an id_token_hint the session is the one its sid's grant belongs to, ended
// at once; without one the person confirms first (a form bound to this browser). The session's end revokes its
// grants and tells the other clients by back-channel logout (backchannel-logout.ts); the browser goes back to a
// post_logout_redirect_uri registered for the client, with state, or sees that it is signed out.
import { ServiceError } from '../errors.js';
import { sessionActive } from '../domain/sessions.js';
import type { OAuthClient, OrgState } from '../domain/state.js';
import type { Command } from '../domain/commands.js';
import type { Clock } from '../lib/clock.js';
import { readCookie, type Sealer } from '../lib/signed.js';
import type { IdTokenHintVerifier } from '../tokens/id-token-hint.js';
import type { AuthorizeAnswer } from './authorize.js';
import { signInPageCsp } from './sign-in-page.js';
import { logoutConfirmPage, logoutErrorPage, signedOutPage } from './logout-page.js';
import { CSRF_COOKIE, FORM_TTL_S, SESSION_COOKIE, newCsrf, readSession, setCookie } from './session.js';

/** An organization as the endpoint needs it: its state, and its actor to end a session. */
export interface LogoutOrg {
  id: string;
  state: OrgState;
  execute<R = unknown>(command: Command): Promise<{ reply: R }>;
}

export interface EndSessionDeps {
  clients: { find(clientId: string): { org: LogoutOrg; client: Pick<OAuthClient, 'client_id' | 'post_logout_redirect_uris'> } | undefined };
  org(id: string): LogoutOrg | undefined;
  hints: IdTokenHintVerifier;
  sealer: Sealer;
  clock: Clock;
  issuer(): string;
}

/** The request, checked, sealed into the confirmation form so that it comes back unaltered. */
interface LogoutRequest {
  post_logout_redirect_uri?: string;
  state?: string;
  csrf: string;
}

export interface EndSession {
  start(params: Record<string, unknown>, cookie: string | undefined): Promise<AuthorizeAnswer>;
  confirm(form: Record<string, unknown>, cookie: string | undefined): Promise<AuthorizeAnswer>;
}

const MAX_STATE = 2048;

class Refusal extends Error {
  constructor(readonly error: string, readonly description: string) {
    super(description);
  }
}

export function createEndSession(deps: EndSessionDeps): EndSession {
  const nowS = () => Math.floor(deps.clock.nowMs() / 1000);
  const secure = () => deps.issuer().startsWith('https:');
  const clearSession = () => setCookie(SESSION_COOKIE, '', 0, secure());

  const text = (params: Record<string, unknown>, name: string): string | undefined => {
    const v = params[name];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') throw new Refusal('invalid_request', `${name} must be a string`);
    return v;
  };

  /** Where the browser goes afterwards: the registered URI with state (§3), or the signed-out page. */
  function done(request: Omit<LogoutRequest, 'csrf'>, cookie?: string): AuthorizeAnswer {
    const headers = cookie === undefined ? undefined : { 'Set-Cookie': cookie };
    if (request.post_logout_redirect_uri === undefined) return { kind: 'page', status: 200, html: signedOutPage(), ...(headers && { headers }) };
    const url = new URL(request.post_logout_redirect_uri);
    if (request.state !== undefined) url.searchParams.set('state', request.state);
    return { kind: 'redirect', location: url.href, ...(headers && { headers }) };
  }

  /** The browser's session at the hosted page, when it is still on. */
  function browserSession(cookie: string | undefined) {
    const session = readSession(deps.sealer, cookie, nowS());
    const org = session && deps.org(session.org);
    if (!session || !org || session.session_id === undefined || !sessionActive(org.state, session.session_id, deps.clock.nowMs())) return undefined;
    return { org, person_id: session.person_id, session_id: session.session_id };
  }

  async function start(params: Record<string, unknown>, cookie: string | undefined): Promise<AuthorizeAnswer> {
    const hintToken = text(params, 'id_token_hint');
    const clientId = text(params, 'client_id');
    const redirect = text(params, 'post_logout_redirect_uri');
    const state = text(params, 'state');
    if (state !== undefined && state.length > MAX_STATE) throw new Refusal('invalid_request', `state is longer than ${MAX_STATE} characters`);
    const hint = hintToken === undefined ? undefined : await deps.hints.verify(hintToken);
    if (hintToken !== undefined && !hint) throw new Refusal('invalid_request', 'id_token_hint is not an ID token issued by this server');
    // §2: client_id, when given with a hint, must be the client the hint was issued to.
    if (hint && clientId !== undefined && clientId !== hint.client_id) throw new Refusal('invalid_request', 'client_id is not the client the id_token_hint was issued to');
    const id = clientId ?? hint?.client_id;
    const found = id === undefined ? undefined : deps.clients.find(id);
    if (id !== undefined && !found) throw new Refusal('invalid_client', 'no such client');
    if (redirect !== undefined) {
      // §3: only a URI registered for the client, compared exactly; never an open redirect.
      if (!found) throw new Refusal('invalid_request', 'post_logout_redirect_uri needs client_id or id_token_hint to say whose it is');
      if (!(found.client.post_logout_redirect_uris ?? []).includes(redirect)) throw new Refusal('invalid_request', "post_logout_redirect_uri is not one of the client's registered post_logout_redirect_uris");
    }
    const request = { ...(redirect !== undefined && { post_logout_redirect_uri: redirect }), ...(state !== undefined && { state }) };
    const browser = browserSession(cookie);
    if (hint && found) {
      const { reply } = await found.org.execute<{ ended: string | null }>({ kind: 'EndSessionOf', person_id: hint.sub, grant_id: hint.sid });
      // The browser's own sign-in goes with it when it is that session.
      const forget = browser !== undefined && reply.ended === browser.session_id;
      return done(request, forget ? clearSession() : undefined);
    }
    // Nothing to end, nothing to confirm.
    if (!browser) return done(request);
    const csrf = newCsrf();
    const sealed = deps.sealer.seal('logout-request', { ...request, csrf }, nowS() + FORM_TTL_S);
    return {
      kind: 'page',
      status: 200,
      html: logoutConfirmPage({ org_name: browser.org.state.org_name, request: sealed, csrf }),
      // The form's answer redirects to the client: browsers hold that redirect to form-action too.
      headers: { 'Set-Cookie': setCookie(CSRF_COOKIE, csrf, FORM_TTL_S, secure()), ...(redirect !== undefined && { 'Content-Security-Policy': signInPageCsp(redirect) }) },
    };
  }

  const refused = (error: unknown): AuthorizeAnswer => {
    if (error instanceof Refusal) return { kind: 'page', status: 400, html: logoutErrorPage(error.error, error.description) };
    throw error;
  };

  return {
    start: (params, cookie) => start(params, cookie).catch(refused),
    async confirm(form, cookie) {
      const request = deps.sealer.open<LogoutRequest>('logout-request', typeof form['request'] === 'string' ? form['request'] : '', nowS());
      if (!request) return refused(new Refusal('invalid_request', 'the sign-out form expired or was altered; start again from the application'));
      const cookieCsrf = readCookie(cookie, CSRF_COOKIE);
      if (form['csrf'] !== request.csrf || cookieCsrf !== request.csrf) return refused(new Refusal('invalid_request', 'the sign-out form did not come from this browser'));
      const browser = browserSession(cookie);
      if (browser) {
        try {
          await browser.org.execute({ kind: 'EndSession', person_id: browser.person_id, session_id: browser.session_id, reason: 'logout' });
        } catch (error) {
          // Ended meanwhile (another tab, the organization): the outcome the person asked for.
          if (!(error instanceof ServiceError) || error.status !== 404) throw error;
        }
      }
      const { csrf: _csrf, ...rest } = request;
      return done(rest, clearSession());
    },
  };
}
