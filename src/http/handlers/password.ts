// Passwords: set by the organization (API key), and end-user sign-in and registration (Service-OrgID only).
import { Type, type Static } from '@sinclair/typebox';
import { checkPasswordPolicy, PASSWORD_MAX, PASSWORD_MIN, type PasswordHasher } from '../../auth/password-hash.js';
import type { SignInService } from '../../auth/sign-in.js';
import type { AnonymousPersons } from '../../browser/anonymous.js';
import { badRequest } from '../../errors.js';
import { requirePerson } from '../../domain/lookup.js';
import type { Handle as HandleValue } from '../../domain/state.js';
import { route, type Request, type Route } from '../route.js';
import { Handle, SignInOutcome } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const PasswordBody = Type.Object({ password: Type.String({ description: `${PASSWORD_MIN}-${PASSWORD_MAX} characters` }) }, { additionalProperties: false });
const Credentials = Type.Object({ handle: Handle, password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }) }, { additionalProperties: false });
const TokenRet = Type.Object({ token: Type.String({ description: 'the identity token (JWT)' }) });
const RegistrationRet = Type.Union([
  TokenRet,
  Type.Object(
    { awaiting_approval: Type.Literal(true), person_id: Type.String() },
    { description: "202: the organization requires manual approval; the person was created inactive and no token was issued" },
  ),
]);

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The browser SDK sends its correlation id so that the service's own authentication events carry it too. */
function correlationOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!UUID.test(header)) throw badRequest('Service-Analytics-Correlation-ID: must be a UUID');
  return header;
}

export function passwordRoutes(deps: HandlerDeps, auth: { passwords: PasswordHasher; signIn: SignInService; anonymous?: Pick<AnonymousPersons, 'held'> }): Route[] {
  // An anonymous person's token sent along (Authorization: Bearer) is upgraded by registration, discarded by sign-in.
  const attempt = async (req: Request<Static<typeof Credentials>>) => ({
    analytics_correlation_id: correlationOf(req.headers['service-analytics-correlation-id']),
    anonymous_person_id: await auth.anonymous?.held(req.org, req.headers['authorization']),
    org: req.org,
    handle: req.body.handle as HandleValue,
    password: req.body.password,
    ip: req.ip,
    origin: req.origin,
    userAgent: req.userAgent,
    consistency: req.consistency,
  });
  return [
    route<Static<typeof PasswordBody>>({
      method: 'put',
      path: '/persons/{person_id}/credentials/password',
      summary: "Set a person's password (emits PasswordChanged, initiated by AdminAPI)",
      tag: 'authentication',
      auth: 'key',
      body: PasswordBody,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const personId = req.params['person_id'] as string;
        checkPasswordPolicy(req.body.password);
        requirePerson(req.org.state, personId);
        const hash = await auth.passwords.hash(req.body.password);
        await execute(deps, req, { kind: 'SetPassword', person_id: personId, password_hash: hash });
        return { status: 204 };
      },
    }),
    route<Static<typeof Credentials>>({
      method: 'post',
      path: '/authenticate/password',
      summary: 'Sign in with a handle and password; runs the token_minted hooks, then answers the identity token',
      tag: 'authentication',
      auth: 'org',
      headers: ['authorization', 'service-analytics-correlation-id'],
      body: Credentials,
      success: { status: 200, result: SignInOutcome },
      errors: [400, 401, 403, 404, 408, 429, 502],
      handler: async (req) => ({ status: 200, result: await auth.signIn.authenticate(await attempt(req)) }),
    }),
    route<Static<typeof Credentials>>({
      method: 'post',
      path: '/register/password',
      summary: 'Register a person with a handle and password; runs the token_minted hooks, then answers the identity token (202 without one when the organization requires manual approval)',
      tag: 'authentication',
      auth: 'org',
      headers: ['authorization', 'service-analytics-correlation-id'],
      body: Credentials,
      success: { status: 201, result: RegistrationRet },
      errors: [400, 401, 403, 404, 408, 409, 429, 502],
      handler: async (req) => {
        const registered = await auth.signIn.register(await attempt(req));
        return { status: 'token' in registered ? 201 : 202, result: registered };
      },
    }),
  ];
}
