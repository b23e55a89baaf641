// The UserInfo endpoint (OpenID Connect Core 5.3), GET and POST: a bearer access token → claims about the person.
import { Type } from '@sinclair/typebox';
import { USERINFO_PATH, bearerOf, dpopTokenOf, type UserInfo } from '../../oauth/userinfo.js';
import type { Authenticator, Principal } from '../auth.js';
import { route, type Request, type Response, type Route } from '../route.js';

const PUBLIC: Principal = Object.freeze({ kind: 'public' });

/** The bearer token is checked by the handler: its refusals are RFC 6750's, not the envelope. */
const bearer: Authenticator = {
  headers: ['authorization'],
  crossOrigin: true,
  client: false,
  security: [{ bearer: [] }],
  schemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (RFC 9068 access token); a DPoP-bound one as Authorization: DPoP with a DPoP proof header' } },
  authenticate: () => PUBLIC,
};

const UserInfoClaims = Type.Object({
  sub: Type.String(),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(Type.Boolean()),
  phone_number: Type.Optional(Type.String()),
  groups: Type.Optional(Type.Array(Type.String())),
  roles: Type.Optional(Type.Array(Type.String())),
});

const FormToken = Type.Object({ access_token: Type.Optional(Type.String()) }, { additionalProperties: true });

export function oauthUserInfoRoutes(userinfo: UserInfo): Route[] {
  const handle = (method: 'GET' | 'POST') => async (req: Request<{ access_token?: string } | undefined, unknown>): Promise<Response> => {
    const dpopToken = dpopTokenOf(req.headers['authorization']);
    const answer =
      dpopToken === undefined
        ? await userinfo.answer(bearerOf(req.headers['authorization'], req.body?.access_token))
        : await userinfo.answer(req.body?.access_token === undefined ? dpopToken : 'both', { proof: req.headers['dpop'], method });
    const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
    if (answer.ok) return { status: 200, document: answer.claims, headers };
    headers['WWW-Authenticate'] = answer.challenge;
    if (answer.nonce !== undefined) headers['DPoP-Nonce'] = answer.nonce;
    return { status: answer.status, document: answer.error === undefined ? { error: 'invalid_token', error_description: 'an access token is required' } : { error: answer.error, error_description: answer.description }, headers };
  };
  const common = {
    path: USERINFO_PATH,
    headers: ['dpop'],
    summary: "Claims about the person of a bearer access token with the openid scope (OpenID Connect Core 5.3)",
    tag: 'oauth2',
    auth: bearer,
    success: { status: 200, document: UserInfoClaims },
    errors: [400, 401, 403],
  };
  return [
    route({ ...common, method: 'get', handler: handle('GET') }),
    route({ ...common, method: 'post', codec: 'form', body: FormToken, bodyOptional: true, handler: handle('POST') }),
  ];
}
