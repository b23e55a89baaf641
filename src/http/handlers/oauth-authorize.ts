// The authorization endpoint and the hosted sign-in form it serves (RFC 6749 4.1; OpenID Connect Core 3.1.2):
// HTML pages and redirects, not the envelope, since a browser is the caller.
import { Type } from '@sinclair/typebox';
import type { Authorize, AuthorizeAnswer, Caller } from '../../oauth/authorize.js';
import { PAGE_HEADERS, SECOND_FACTOR_PATH, SIGN_IN_PATH } from '../../oauth/sign-in-page.js';
import type { Authenticator, Principal } from '../auth.js';
import { route, type Request, type Response, type Route } from '../route.js';

const PUBLIC: Principal = Object.freeze({ kind: 'public' });

/** A browser: no credentials but its cookies, which the use case reads (the session and the form's check). */
export const browser: Authenticator = {
  headers: ['cookie'],
  crossOrigin: false,
  client: true,
  security: [],
  schemes: {},
  authenticate: () => PUBLIC,
};

const optional = (description: string) => Type.Optional(Type.String({ description }));

// RFC 6749 3.1: unrecognized parameters are ignored, so the schema allows them; the use case checks the rest,
// because its refusals go back to the client's redirect_uri, not into an envelope.
export const AuthorizationParams = Type.Object(
  {
    response_type: optional('code'),
    client_id: optional('the OAuth client'),
    redirect_uri: optional('exactly one of the client\'s registered redirect URIs'),
    scope: optional('space-separated; openid for an ID token'),
    state: optional('returned unchanged'),
    nonce: optional('copied into the ID token'),
    code_challenge: optional('PKCE (RFC 7636): required for public clients'),
    code_challenge_method: optional('S256'),
    prompt: optional('none or login'),
    max_age: optional('seconds since the last sign-in after which the person signs in again'),
    acr_values: optional('space-separated acr values in order of preference; the multi-factor one makes a one-factor session sign in again'),
    login_hint: optional('prefills the handle'),
  },
  { additionalProperties: true },
);

const SignInFields = Type.Object(
  {
    request: optional('the sealed authorization request'),
    csrf: optional('the form\'s check value'),
    handle_type: optional('email_address, phone_number or username'),
    handle: optional('the handle'),
    password: optional('the password'),
  },
  { additionalProperties: true },
);

const SecondFactorFields = Type.Object(
  {
    request: optional('the sealed authorization request'),
    csrf: optional('the form\'s check value'),
    challenge: optional('the second-factor challenge the password step answered with'),
    code: optional('six digits from the authenticator app'),
    recovery_code: optional('or one of the person\'s unused recovery codes'),
    webauthn: optional("or a passkey's assertion (JSON, as the page's script posts it)"),
    methods: optional('the methods the challenge named, space-separated: which forms the page shows again'),
  },
  { additionalProperties: true },
);

/** A page or a redirect of the hosted pages, as the front writes it. */
export function answer(a: AuthorizeAnswer): Response {
  if (a.kind === 'redirect') return { status: 302, text: '', contentType: 'text/plain', headers: { ...a.headers, Location: a.location, 'Cache-Control': 'no-store' } };
  return { status: a.status, text: a.html, contentType: 'text/html; charset=utf-8', headers: { ...PAGE_HEADERS, ...a.headers } };
}

export const caller = (req: Request<unknown, unknown>): Caller => ({ cookie: req.headers['cookie'], ip: req.ip, origin: req.origin, userAgent: req.userAgent, consistency: req.consistency });

export function oauthAuthorizeRoutes(authorize: Authorize): Route[] {
  const start = {
    path: '/oauth2/authorize' as const,
    summary: 'OAuth 2.0 authorization endpoint: the hosted sign-in page, then a redirect to the client with a code',
    tag: 'oauth2',
    auth: browser,
    success: { status: 302, description: 'to redirect_uri with code and state, or with error (RFC 6749 4.1.2.1); 200 the sign-in page' },
    errors: [400],
  };
  return [
    route<unknown, Record<string, unknown>>({
      ...start,
      method: 'get',
      query: AuthorizationParams,
      handler: async (req) => answer(await authorize.start(req.query, caller(req))),
    }),
    // OpenID Connect Core 3.1.2.1: the authorization endpoint also takes its parameters as a form POST.
    route<Record<string, unknown>>({
      ...start,
      method: 'post',
      codec: 'form',
      body: AuthorizationParams,
      bodyOptional: true,
      handler: async (req) => answer(await authorize.start(req.body ?? {}, caller(req))),
    }),
    route<Record<string, string | undefined>>({
      method: 'post',
      path: SIGN_IN_PATH,
      summary: 'The hosted sign-in form: a password sign-in (hooks, events and throttling as any), then the redirect with a code',
      tag: 'oauth2',
      auth: browser,
      codec: 'form',
      body: SignInFields,
      bodyOptional: true,
      success: { status: 302, description: 'to redirect_uri with code and state; the page again with the reason on a refusal' },
      errors: [400, 401, 429, 502],
      handler: async (req) => answer(await authorize.signIn(req.body ?? {}, caller(req))),
    }),
    route<Record<string, string | undefined>>({
      method: 'post',
      path: SECOND_FACTOR_PATH,
      summary: 'The hosted sign-in\'s second step, for a person who holds TOTP or a passkey: a code, a recovery code or a passkey assertion, then the redirect with a code',
      tag: 'oauth2',
      auth: browser,
      codec: 'form',
      body: SecondFactorFields,
      bodyOptional: true,
      success: { status: 302, description: 'to redirect_uri with code and state; the page again with the reason on a wrong code, the sign-in page on an expired challenge' },
      errors: [400, 401, 429],
      handler: async (req) => answer(await authorize.secondFactor(req.body ?? {}, caller(req))),
    }),
  ];
}
