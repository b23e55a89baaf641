// SSO sign-in: the start (302 to the provider, state cookie set) and the provider's callback (302 to the
// organization's redirect_uri with the token or the error in the fragment, or {token} JSON for API clients);
// a form_post callback is turned into that GET, so that the SameSite=Lax state cookie arrives with it.
import { Type, type Static } from '@sinclair/typebox';
import { badRequest, ServiceError } from '../../errors.js';
import type { AnonymousPersons } from '../../browser/anonymous.js';
import type { IssuingOrg } from '../../auth/issue.js';
import type { SsoSignIn } from '../../sso/flow.js';
import { route, type Response, type Route } from '../route.js';
import { SignInOutcome } from '../schemas.js';

const StartQuery = Type.Object(
  {
    redirect_uri: Type.String({ minLength: 1, maxLength: 2048, description: "where to send the browser afterwards: one of the organization's sso_allowed_redirect_uris" }),
    org_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the organization, for browsers that cannot send Service-OrgID' })),
    anonymous_token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 8192,
        description: "an anonymous person's token (a redirect cannot carry Authorization: Bearer, which is taken too): a registration upgrades that person, a sign-in of an existing person deletes it",
      }),
    ),
  },
  { additionalProperties: false },
);

const Param = Type.String({ maxLength: 2048 });
/** What providers send back (RFC 6749 §4.1.2, RFC 9207's iss), and what some add (session_state, scope...). */
const CallbackQuery = Type.Record(Type.String({ maxLength: 64 }), Param, { maxProperties: 16 });

/** A form_post callback (Apple's): code, state, or error; Apple adds `user` (the name, on the first sign-in only). */
const CallbackForm = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), { maxProperties: 16 });
/** What a form_post callback passes on to the GET callback; `user` and anything else stays behind. */
const FORWARDED = ['code', 'state', 'error', 'error_description', 'iss'];


/** Answers that carry a token or a state must never be cached or leak the URL onward. */
const PRIVATE = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' };

function redirect(location: string, cookie: string): Response {
  return { status: 302, headers: { Location: location, 'Set-Cookie': cookie, ...PRIVATE } };
}

/** The redirect_uri with the answer in its fragment, which browsers never send to a server. */
function withFragment(uri: string, fields: Record<string, string>): string {
  return `${uri}#${new URLSearchParams(fields).toString()}`;
}

/**
 * The anonymous person whose token came with the start, as the `anonymous_token` parameter or as
 * `Authorization: Bearer`: checked now, so that a wrong token is a 400 before the browser leaves for the provider.
 */
async function heldAnonymous(anonymous: Pick<AnonymousPersons, 'held'> | undefined, org: IssuingOrg, param: string | undefined, authorization: string | undefined): Promise<string | undefined> {
  if (!anonymous || (param === undefined && authorization === undefined)) return undefined;
  if (param === undefined) return anonymous.held(org, authorization);
  if (authorization !== undefined) throw badRequest('anonymous_token: send the anonymous token once, as this parameter or as Authorization: Bearer, not both');
  try {
    return await anonymous.held(org, `Bearer ${param}`);
  } catch (error) {
    // held names the header it expects; here the token came as the parameter.
    if (error instanceof ServiceError && error.status === 400) throw badRequest(error.message.replace(/^Authorization:/, 'anonymous_token:'));
    throw error;
  }
}

export function ssoSignInRoutes(sso: SsoSignIn, anonymous?: Pick<AnonymousPersons, 'held'>): Route[] {
  return [
    route<unknown, Static<typeof StartQuery>>({
      method: 'get',
      path: '/authenticate/oidc/{oauth_client_id}/start',
      summary: "Start SSO sign-in through an OIDC provider credential: 302 to the provider's authorization endpoint (state, nonce, PKCE S256)",
      tag: 'authentication',
      auth: 'org_or_query',
      headers: ['authorization'],
      query: StartQuery,
      success: { status: 302, description: "redirect to the provider; sets the HttpOnly sso_state cookie (10 minutes) that binds the sign-in to this browser" },
      errors: [400, 403, 404, 429, 502],
      handler: async (req) => {
        const started = await sso.start({
          org: req.org,
          client_id: req.params['oauth_client_id'] as string,
          redirect_uri: req.query.redirect_uri,
          ip: req.ip,
          consistency: req.consistency,
          anonymous_person_id: await heldAnonymous(anonymous, req.org, req.query.anonymous_token, req.headers['authorization']),
        });
        return redirect(started.location, started.cookie);
      },
    }),
    route<unknown, Record<string, string>>({
      method: 'get',
      path: '/authenticate/oidc/callback',
      summary: "The providers' redirect back: verifies state, exchanges the code, verifies the ID token, signs the person in by email handle",
      tag: 'authentication',
      auth: 'none',
      client: true,
      headers: ['cookie', 'accept'],
      query: CallbackQuery,
      success: {
        status: 302,
        result: SignInOutcome,
        description:
          'redirect to redirect_uri with #token=<JWT>, or for a person who holds a second factor #second_factor_challenge=&second_factor_methods=&expires_in= ' +
          '(methods space-separated; the challenge is answered at /authenticate/<method>), or #error=&error_description=; with Accept: application/json, ' +
          '200 {token} or {second_factor}, or the error',
      },
      errors: [400, 401, 403, 404, 429, 502],
      handler: async (req) => {
        const outcome = await sso.callback({
          query: req.query,
          cookieHeader: req.headers['cookie'],
          ip: req.ip,
          origin: req.origin,
          userAgent: req.userAgent,
          consistency: req.consistency,
        });
        const json = /\bapplication\/json\b/i.test(req.headers['accept'] ?? '');
        const clear = sso.clearCookie();
        if (outcome.kind === 'signed_in') {
          if (json) return { status: 200, result: { token: outcome.token }, headers: { 'Set-Cookie': clear, ...PRIVATE } };
          return redirect(withFragment(outcome.redirect_uri, { token: outcome.token }), clear);
        }
        if (outcome.kind === 'second_factor') {
          // As password sign-in answers it: the page answers the challenge at /authenticate/<method>.
          const f = outcome.second_factor;
          if (json) return { status: 200, result: { second_factor: f }, headers: { 'Set-Cookie': clear, ...PRIVATE } };
          return redirect(withFragment(outcome.redirect_uri, { second_factor_challenge: f.challenge, second_factor_methods: f.methods.join(' '), expires_in: String(f.expires_in) }), clear);
        }
        if (json || outcome.redirect_uri === undefined) {
          // A state this browser did not start has no redirect_uri that can be trusted: the error is answered here.
          const e = outcome.error;
          throw new ServiceError(e.code, e.message, { cause: e.cause, headers: { ...e.headers, 'Set-Cookie': clear, ...PRIVATE } });
        }
        return redirect(withFragment(outcome.redirect_uri, { error: outcome.oauth_error, error_description: outcome.error.message }), clear);
      },
    }),
    route<Record<string, string>>({
      method: 'post',
      path: '/authenticate/oidc/callback',
      summary: "The providers' form_post answer (Apple's): 303 to the GET callback with its code and state",
      tag: 'authentication',
      auth: 'none',
      codec: 'form',
      body: CallbackForm,
      success: { status: 303, description: 'See Other: GET /authenticate/oidc/callback with code, state (or error, error_description) and iss, nothing else' },
      errors: [400],
      handler: (req) => {
        // A cross-site POST carries no SameSite=Lax cookie, a top-level GET does: the state is checked there, once.
        const query = new URLSearchParams();
        for (const name of FORWARDED) {
          const value = req.body[name];
          // The GET callback takes parameters of up to 2048 characters; a longer error_description is cut.
          if (value !== undefined) query.set(name, value.slice(0, 2048));
        }
        return { status: 303, headers: { Location: `/authenticate/oidc/callback?${query.toString()}`, ...PRIVATE } };
      },
    }),
  ];
}
