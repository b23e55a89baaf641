// One-time codes and links: the end user asks for one to be sent to a handle (the answer is the ticket the
// browser keeps), then signs in with the code and the ticket, or with the link (Service-OrgID only).
import { Type, type Static } from '@sinclair/typebox';
import type { OneTimeCodes } from '../../auth/one-time-codes.js';
import type { Handle as HandleValue } from '../../domain/state.js';
import { route, type Request, type Route } from '../route.js';
import { Handle, SignInOutcome } from '../schemas.js';

const Ticket = Type.String({ minLength: 1, maxLength: 2048, description: 'the ticket the start answered' });
const StartBody = Type.Object({ handle: Handle }, { additionalProperties: false });
const StartRet = Type.Object({
  ticket: Ticket,
  expires_in: Type.Integer({ description: 'seconds the code or link and the ticket live' }),
});
const CodeBody = Type.Object({ ticket: Ticket, code: Type.String({ minLength: 1, maxLength: 16, description: 'the six digits received' }) }, { additionalProperties: false });
const LinkBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: "the link's token query parameter" }),
    ticket: Type.Optional(Ticket),
    confirm: Type.Optional(Type.Boolean({ description: 'sign in though the link was asked for in another browser' })),
  },
  { additionalProperties: false },
);

const context = (req: Request<unknown>) => ({ org: req.org, ip: req.ip, origin: req.origin, userAgent: req.userAgent, consistency: req.consistency });
const common = { method: 'post', tag: 'authentication', auth: 'org' } as const;

export function oneTimeCodeRoutes(codes: OneTimeCodes): Route[] {
  const starts = (['otp_via_email', 'email_link', 'otp_via_sms', 'sms_link'] as const).map((method) =>
    route<Static<typeof StartBody>>({
      ...common,
      path: `/authenticate/${method}/start`,
      summary: `Send a single-use ${method.includes('link') ? 'link' : 'code'} to the ${method.includes('email') ? 'email address' : 'phone number'}; answers the ticket it is bound to (the same answer for a handle nobody holds)`,
      body: StartBody,
      success: { status: 202, result: StartRet },
      errors: [400, 401, 403, 404, 408, 429, 502],
      handler: async (req) => ({ status: 202, result: await codes.send({ ...context(req), method, handle: req.body.handle as HandleValue }) }),
    }),
  );
  const answerCodes = (['otp_via_email', 'otp_via_sms'] as const).map((method) =>
    route<Static<typeof CodeBody>>({
      ...common,
      path: `/authenticate/${method}`,
      summary: 'Sign in with the code received and the ticket of the browser that asked; once; runs the token_minted hooks, then answers the identity token',
      body: CodeBody,
      success: { status: 200, result: SignInOutcome },
      errors: [400, 401, 403, 404, 408, 429, 502],
      handler: async (req) => ({ status: 200, result: await codes.answerCode({ ...context(req), method, ticket: req.body.ticket, code: req.body.code }) }),
    }),
  );
  const answerLinks = (['email_link', 'sms_link'] as const).map((method) =>
    route<Static<typeof LinkBody>>({
      ...common,
      path: `/authenticate/${method}`,
      summary: "Sign in with a link's token, once; without the asking browser's ticket, 409 until confirm: true",
      body: LinkBody,
      success: { status: 200, result: SignInOutcome },
      errors: [400, 401, 403, 404, 408, 409, 429, 502],
      handler: async (req) => ({
        status: 200,
        result: await codes.answerLink({ ...context(req), method, token: req.body.token, ticket: req.body.ticket, confirm: req.body.confirm }),
      }),
    }),
  );
  return [...starts, ...answerCodes, ...answerLinks];
}
