// Passkeys: the person registers one with their own identity token (options, then the authenticator's
// response); anyone signs in with one from the organization's page (options, then the assertion), as a first
// factor without a handle, or as the second factor a first factor's challenge asks for.
import { Type, type Static } from '@sinclair/typebox';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { PasskeyService } from '../../auth/webauthn.js';
import type { Handle as HandleValue } from '../../domain/state.js';
import type { Authenticator } from '../auth.js';
import { route, type Request, type Route } from '../route.js';
import { Handle, SignInOutcome } from '../schemas.js';

const Options = Type.Object({ options: Type.Record(Type.String(), Type.Unknown(), { description: 'PublicKeyCredential{Creation,Request}OptionsJSON, for navigator.credentials (e.g. @simplewebauthn/browser)' }) });
/** The browser's PublicKeyCredential as JSON; @simplewebauthn/server checks its shape and every field. */
const ResponseJSON = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1024 }), rawId: Type.String({ maxLength: 1024 }), type: Type.Literal('public-key'), response: Type.Record(Type.String(), Type.Unknown()) }, { additionalProperties: true });
const RegisterBody = Type.Object({ credential: ResponseJSON, label: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false });
const OptionsBody = Type.Object(
  {
    handle: Type.Optional(Handle),
    challenge: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "a first factor's second_factor.challenge: the options name that person's passkeys" })),
  },
  { additionalProperties: false },
);
const AuthenticateBody = Type.Object(
  { credential: ResponseJSON, challenge: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "a first factor's second_factor.challenge this passkey answers" })) },
  { additionalProperties: false },
);
const Passkey = Type.Object({
  id: Type.String(),
  type: Type.Literal('public-key'),
  params: Type.Object({
    webauthn_credential_id: Type.String(),
    public_key: Type.String(),
    attestation_type: Type.String(),
    authenticator: Type.Object({ aaguid: Type.String(), sign_count: Type.Integer(), clone_warning: Type.Boolean() }),
  }),
  label: Type.Optional(Type.String()),
});

const personOf = (req: Request<unknown, unknown>) => (req.principal as { person_id: string }).person_id;

export function webauthnRoutes(passkeys: PasskeyService, personAuth: Authenticator): Route[] {
  const own = { tag: 'authentication', auth: personAuth, cors: true, client: true } as const;
  return [
    route({
      ...own,
      method: 'post',
      path: '/register/webauthn/options',
      summary: "Options for registering a passkey for the calling person, on the page's origin (one of the organization's allowed domains: the RP ID)",
      bodyOptional: true,
      success: { status: 200, result: Options },
      errors: [400, 401, 404],
      handler: async (req) => ({ status: 200, result: { options: (await passkeys.registrationOptions(req.org, personOf(req), req.origin)) as unknown as Record<string, unknown> } }),
    }),
    route<Static<typeof RegisterBody>>({
      ...own,
      method: 'post',
      path: '/register/webauthn',
      summary: "Register the authenticator's new passkey for the calling person (the response to the options); answers the credential in the original's shape",
      body: RegisterBody,
      success: { status: 201, result: Passkey },
      errors: [400, 401, 404, 408, 409],
      handler: async (req) => ({ status: 201, result: await passkeys.register(req.org, personOf(req), req.origin, req.body.credential as unknown as RegistrationResponseJSON, req.body.label) }),
    }),
    route<Static<typeof OptionsBody>>({
      method: 'post',
      path: '/authenticate/webauthn/options',
      summary: 'Options for signing in with a passkey: discoverable (no handle), or the passkeys of a handle or of a second-factor challenge',
      tag: 'authentication',
      auth: 'org',
      bodyOptional: true,
      body: OptionsBody,
      success: { status: 200, result: Options },
      errors: [400, 401, 404],
      handler: async (req) => ({
        status: 200,
        result: { options: (await passkeys.authenticationOptions(req.org, req.origin, { handle: req.body?.handle as HandleValue | undefined, challenge: req.body?.challenge })) as unknown as Record<string, unknown> },
      }),
    }),
    route<Static<typeof AuthenticateBody>>({
      method: 'post',
      path: '/authenticate/webauthn',
      summary: "Sign in with a passkey's assertion: the identity token, or a second-factor challenge; with `challenge`, the second factor of a first factor's sign-in",
      tag: 'authentication',
      auth: 'org',
      body: AuthenticateBody,
      success: { status: 200, result: SignInOutcome },
      errors: [400, 401, 403, 404, 408, 502],
      handler: async (req) => ({
        status: 200,
        result: await passkeys.authenticate({
          org: req.org,
          credential: req.body.credential as unknown as AuthenticationResponseJSON,
          challenge: req.body.challenge,
          ip: req.ip,
          origin: req.origin,
          userAgent: req.userAgent,
          consistency: req.consistency,
        }),
      }),
    }),
  ];
}
