// The end-session endpoint (OpenID RP-Initiated Logout 1.0) and its confirmation form: HTML pages and
// redirects, not the envelope, since a browser is the caller.
import { Type } from '@sinclair/typebox';
import type { EndSession } from '../../oauth/end-session.js';
import { LOGOUT_CONFIRM_PATH, LOGOUT_PATH } from '../../oauth/logout-page.js';
import { route, type Route } from '../route.js';
import { answer, browser } from './oauth-authorize.js';

const optional = (description: string) => Type.Optional(Type.String({ description }));

// §2: other parameters (logout_hint, ui_locales) are accepted and ignored.
const LogoutParams = Type.Object(
  {
    id_token_hint: optional('an ID token this server issued to the client (expired ones too): its session is ended without asking'),
    client_id: optional('the client, when no id_token_hint names it'),
    post_logout_redirect_uri: optional("exactly one of the client's registered post_logout_redirect_uris"),
    state: optional('returned unchanged with the redirect'),
  },
  { additionalProperties: true },
);

const ConfirmFields = Type.Object({ request: optional('the sealed sign-out request'), csrf: optional("the form's check value") }, { additionalProperties: true });

export function oauthLogoutRoutes(endSession: EndSession): Route[] {
  const start = {
    path: LOGOUT_PATH,
    summary: "OpenID end-session endpoint: ends the person's session (with an id_token_hint at once, otherwise once confirmed)",
    tag: 'oauth2',
    auth: browser,
    success: { status: 302, description: 'to post_logout_redirect_uri with state; 200 the confirmation or signed-out page' },
    errors: [400],
  };
  return [
    route<unknown, Record<string, unknown>>({ ...start, method: 'get', query: LogoutParams, handler: async (req) => answer(await endSession.start(req.query, req.headers['cookie'])) }),
    // §2: the OP supports GET and POST.
    route<Record<string, unknown>>({ ...start, method: 'post', codec: 'form', body: LogoutParams, bodyOptional: true, handler: async (req) => answer(await endSession.start(req.body ?? {}, req.headers['cookie'])) }),
    route<Record<string, unknown>>({
      method: 'post',
      path: LOGOUT_CONFIRM_PATH,
      summary: "The end-session endpoint's confirmation form: ends the browser's session",
      tag: 'oauth2',
      auth: browser,
      codec: 'form',
      body: ConfirmFields,
      bodyOptional: true,
      success: { status: 302, description: 'to post_logout_redirect_uri with state; 200 the signed-out page' },
      errors: [400],
      handler: async (req) => answer(await endSession.confirm(req.body ?? {}, req.headers['cookie'])),
    }),
  ];
}
