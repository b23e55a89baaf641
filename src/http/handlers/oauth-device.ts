// The device authorization grant's routes (RFC 8628): the device authorization endpoint (form-encoded, the client
// authenticated, errors as RFC 6749 5.2 JSON), and the user code pages a person's browser visits.
import { Type, type Static } from '@sinclair/typebox';
import { DEVICE_AUTHORIZATION_PATH, DEVICE_CONFIRM_PATH, DEVICE_PATH, DEVICE_SECOND_FACTOR_PATH, DEVICE_SIGN_IN_PATH, type DeviceFlow } from '../../oauth/device.js';
import type { Authenticator } from '../auth.js';
import { route, type Route } from '../route.js';
import { AssertionParams, callerOf } from './oauth-tokens.js';
import { answer, browser, caller } from './oauth-authorize.js';

const Param = (description: string) => Type.Optional(Type.String({ maxLength: 4096, description }));
/** RFC 8628 3.1; unknown parameters are ignored, as at the token endpoint. */
const DeviceAuthorizationForm = Type.Object(
  {
    scope: Param('space-delimited: openid, email, phone, or among the client\'s scopes'),
    client_id: Param('the client (none, client_secret_post; optional with private_key_jwt)'),
    client_secret: Param('client_secret_post'),
    ...AssertionParams,
  },
  { additionalProperties: true },
);
const DeviceAuthorization = Type.Object({
  device_code: Type.String({ description: 'polled at the token endpoint with grant_type urn:ietf:params:oauth:grant-type:device_code' }),
  user_code: Type.String({ description: 'the code the person enters, e.g. BCDF-GHJK' }),
  verification_uri: Type.String(),
  verification_uri_complete: Type.String({ description: 'verification_uri with the user code, for a QR code or a link' }),
  expires_in: Type.Integer({ description: 'seconds' }),
  interval: Type.Integer({ description: 'seconds between polls' }),
});
const PageForm = Type.Object(
  {
    request: Param('the sealed device request'),
    csrf: Param("the form's check value"),
    handle_type: Param('sign-in: email_address, phone_number or username'),
    handle: Param('sign-in: the handle'),
    password: Param('sign-in: the password'),
    challenge: Param('second step: the challenge the password step answered with'),
    code: Param('second step: six digits from the authenticator app'),
    recovery_code: Param("second step: or one of the person's unused recovery codes"),
    webauthn: Param("second step: or a passkey's assertion (JSON, as the page's script posts it)"),
    methods: Param('second step: the methods the challenge named, space-separated'),
    decision: Param('confirmation: allow or deny'),
  },
  { additionalProperties: true },
);

export function oauthDeviceRoutes(device: DeviceFlow, clientAuth: Authenticator): Route[] {
  return [
    route<Static<typeof DeviceAuthorizationForm>>({
      method: 'post',
      path: DEVICE_AUTHORIZATION_PATH,
      summary: 'Device authorization endpoint (RFC 8628 3.1): a device code and the user code a person enters at the verification URI',
      tag: 'oauth2',
      auth: clientAuth,
      codec: 'form',
      body: DeviceAuthorizationForm,
      errorFormat: 'oauth',
      success: { status: 200, document: DeviceAuthorization },
      errors: [400, 401, 429],
      handler: async (req) => ({ status: 200, document: await device.authorize(callerOf(req), req.body.scope), headers: { 'Cache-Control': 'no-store' } }),
    }),
    route<unknown, { user_code?: string }>({
      method: 'get',
      path: DEVICE_PATH,
      summary: "The user code page (RFC 8628 3.3): the code form; with user_code, the hosted sign-in or the confirmation",
      tag: 'oauth2',
      auth: browser,
      query: Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: true }),
      success: { status: 200, description: 'an HTML page' },
      errors: [400, 429],
      handler: (req) => answer(device.enter(req.query.user_code, caller(req))),
    }),
    route<Record<string, string | undefined>>({
      method: 'post',
      path: DEVICE_SIGN_IN_PATH,
      summary: "The user code page's hosted sign-in (a password sign-in as any), then back to the confirmation",
      tag: 'oauth2',
      auth: browser,
      codec: 'form',
      body: PageForm,
      bodyOptional: true,
      success: { status: 302, description: 'to the confirmation; the second step for a person who holds TOTP or a passkey; the page again with the reason on a refusal' },
      errors: [400, 401, 429, 502],
      handler: async (req) => answer(await device.signIn(req.body ?? {}, caller(req))),
    }),
    route<Record<string, string | undefined>>({
      method: 'post',
      path: DEVICE_SECOND_FACTOR_PATH,
      summary: "The user code page's second step, for a person who holds TOTP or a passkey: a code, a recovery code or a passkey assertion, then back to the confirmation",
      tag: 'oauth2',
      auth: browser,
      codec: 'form',
      body: PageForm,
      bodyOptional: true,
      success: { status: 302, description: 'to the confirmation; the step again with the reason on a wrong code, the sign-in page on an expired challenge' },
      errors: [400, 401, 429],
      handler: async (req) => answer(await device.secondFactor(req.body ?? {}, caller(req))),
    }),
    route<Record<string, string | undefined>>({
      method: 'post',
      path: DEVICE_CONFIRM_PATH,
      summary: 'The signed-in person allows or denies the device',
      tag: 'oauth2',
      auth: browser,
      codec: 'form',
      body: PageForm,
      bodyOptional: true,
      success: { status: 200, description: 'an HTML page saying what was done' },
      errors: [400],
      handler: async (req) => answer(await device.confirm(req.body ?? {}, caller(req))),
    }),
  ];
}
