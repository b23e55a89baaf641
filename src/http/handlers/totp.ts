// TOTP as a second factor: the person enrolls with their own identity token (the secret, its otpauth:// URI
// and QR code shown once), confirms with a first code (the recovery codes shown once), and answers the
// challenge a first factor gave with a code or a recovery code (Service-OrgID only).
import { Type, type Static } from '@sinclair/typebox';
import type { TotpService } from '../../auth/totp.js';
import type { Authenticator } from '../auth.js';
import { route, type Request, type Route } from '../route.js';

const EnrollRet = Type.Object({
  credential_id: Type.String(),
  key_uri: Type.String({ description: 'otpauth://totp/… for an authenticator app; shown this once' }),
  qr_code_svg: Type.String({ description: 'the key URI as a QR code (SVG)' }),
});
const Code = Type.String({ minLength: 6, maxLength: 6, description: 'six digits' });
const ConfirmBody = Type.Object({ credential_id: Type.String({ minLength: 1, maxLength: 64 }), code: Code }, { additionalProperties: false });
const RecoveryRet = Type.Object({ recovery_codes: Type.Array(Type.String(), { description: 'ten single-use codes, shown this once' }) });
const AnswerBody = Type.Object(
  {
    challenge: Type.String({ minLength: 1, maxLength: 4096, description: "the first factor's second_factor.challenge" }),
    code: Type.Optional(Code),
    recovery_code: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'instead of a code: one of the recovery codes, used up' })),
  },
  { additionalProperties: false },
);
const TokenRet = Type.Object({ token: Type.String({ description: 'the identity token (JWT); authenticated_methods lists each factor' }) });

/** The person the token names (the authenticator made the principal). */
const personOf = (req: Request<unknown, unknown>) => (req.principal as { person_id: string }).person_id;

export function totpRoutes(totp: TotpService, personAuth: Authenticator): Route[] {
  const own = { tag: 'authentication', auth: personAuth, cors: true } as const;
  return [
    route({
      ...own,
      method: 'post',
      path: '/register/totp',
      summary: 'Begin TOTP enrollment for the calling person: a new secret (sealed at rest), its otpauth:// URI and QR code; unconfirmed until a first code',
      success: { status: 201, result: EnrollRet },
      errors: [401, 404, 408, 409],
      handler: async (req) => ({ status: 201, result: await totp.enroll(req.org, personOf(req)) }),
    }),
    route<Static<typeof ConfirmBody>>({
      ...own,
      method: 'post',
      path: '/register/totp/confirm',
      summary: 'Confirm the TOTP enrollment with a first code; answers ten recovery codes, shown once',
      body: ConfirmBody,
      success: { status: 200, result: RecoveryRet },
      errors: [400, 401, 404, 408, 409, 429],
      handler: async (req) => ({ status: 200, result: { recovery_codes: await totp.confirm(req.org, personOf(req), req.body.credential_id, req.body.code) } }),
    }),
    route({
      ...own,
      method: 'post',
      path: '/register/totp/recovery-codes',
      summary: 'Ten new recovery codes in place of the old ones, shown once',
      success: { status: 200, result: RecoveryRet },
      errors: [401, 404, 408],
      handler: async (req) => ({ status: 200, result: { recovery_codes: await totp.regenerateRecoveryCodes(req.org, personOf(req)) } }),
    }),
    route<Static<typeof AnswerBody>>({
      method: 'post',
      path: '/authenticate/totp',
      summary: "Answer a first factor's second-factor challenge with a TOTP code or a recovery code; runs the token_minted hooks, then answers the identity token",
      tag: 'authentication',
      auth: 'org',
      body: AnswerBody,
      success: { status: 200, result: TokenRet },
      errors: [400, 401, 403, 404, 408, 429, 502],
      handler: async (req) => ({
        status: 200,
        result: {
          token: await totp.authenticate({
            org: req.org,
            challenge: req.body.challenge,
            code: req.body.code,
            recovery_code: req.body.recovery_code,
            ip: req.ip,
            origin: req.origin,
            userAgent: req.userAgent,
            consistency: req.consistency,
          }),
        },
      }),
    }),
  ];
}
