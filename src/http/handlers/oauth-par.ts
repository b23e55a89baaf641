// The pushed authorization request endpoint (RFC 9126): a client posts its authorization request, checked
// as the authorization endpoint would, and gets a single-use request_uri for it. A client's endpoint: its
// authentication as at the token endpoint, errors in RFC 6749 5.2's form.
import { Type, type Static } from '@sinclair/typebox';
import type { Authorize } from '../../oauth/authorize.js';
import type { Authenticator } from '../auth.js';
import { route, type Route } from '../route.js';
import { AuthorizationParams } from './oauth-authorize.js';
import { callerOf } from './oauth-tokens.js';

export const PAR_PATH = '/oauth2/par';

const Param = (description: string) => Type.Optional(Type.String({ maxLength: 16_384, description }));
/** The authorization request's parameters and the client's credentials; unknown ones are ignored (RFC 6749 3.1). */
const PushForm = Type.Composite(
  [
    AuthorizationParams,
    Type.Object({
      client_secret: Param('client_secret_post'),
      client_assertion_type: Param('private_key_jwt'),
      client_assertion: Param('private_key_jwt'),
    }),
  ],
  { additionalProperties: true },
);
const Pushed = Type.Object({
  request_uri: Type.String({ description: 'urn:ietf:params:oauth:request_uri:…; send it with client_id to /oauth2/authorize, once' }),
  expires_in: Type.Integer({ description: 'seconds' }),
});

/** The client's credentials are not part of the request it pushes. */
const CREDENTIALS = ['client_secret', 'client_assertion_type', 'client_assertion'];

export function oauthParRoutes(deps: { clientAuth: Authenticator; authorize: Authorize }): Route[] {
  return [
    route<Static<typeof PushForm>>({
      method: 'post',
      path: PAR_PATH,
      summary: 'Pushed authorization request (RFC 9126): the request checked now, a request_uri for /oauth2/authorize in return',
      tag: 'oauth2',
      auth: deps.clientAuth,
      codec: 'form',
      body: PushForm,
      errorFormat: 'oauth',
      success: { status: 201, document: Pushed },
      errors: [400, 401, 429],
      handler: async (req) => {
        const caller = callerOf(req);
        const params = Object.fromEntries(Object.entries(req.body as Record<string, unknown>).filter(([k]) => !CREDENTIALS.includes(k)));
        const document = await deps.authorize.push(caller.client.client_id, params);
        return { status: 201, document, headers: { 'Cache-Control': 'no-store' } };
      },
    }),
  ];
}
