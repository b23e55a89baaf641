// The console's routes: its three files, what the page needs to start a sign-in, and the two ways to make an
// administrator. Everything else the console does is a call of the public API.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { checkPasswordPolicy, PASSWORD_MAX, type PasswordHasher } from '../auth/password-hash.js';
import { notFound } from '../errors.js';
import type { Registry } from '../org/registry.js';
import { Handle } from '../http/schemas.js';
import { route, type Route } from '../http/route.js';
import { consoleClientOf } from './auth.js';
import { makeAdministrator, type FirstAdministrator } from './administrators.js';
import type { ConsoleBundle } from './build.js';

export interface ConsoleDeps {
  registry: Registry;
  bundle(): Promise<ConsoleBundle>;
  issuer(): string;
  passwords: PasswordHasher;
  firstAdministrator: FirstAdministrator;
}

// The page runs only its own script and style, talks only to its own origin, and is never framed.
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

const FirstAdministratorBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 200, description: 'the code of the link printed at the first start' }),
    handle: Handle,
    password: Type.String({ maxLength: PASSWORD_MAX * 4 }),
  },
  { additionalProperties: false },
);

/** The hosted sign-in page's answer (RFC 6749 4.1.2, RFC 9207 iss) and the organization to sign in to; all read by the page. */
const SignInAnswer = Type.Object(
  Object.fromEntries(['code', 'state', 'iss', 'error', 'error_description', 'org'].map((name) => [name, Type.Optional(Type.String({ maxLength: 2048 }))])),
  { additionalProperties: false },
);

const Administrator = Type.Object({ person_id: Type.String(), roles: Type.Array(Type.String()), client_id: Type.String() });

export function consoleRoutes(deps: ConsoleDeps): Route[] {
  const file = (path: string, pick: (b: ConsoleBundle) => Buffer, contentType: string, summary: string, query?: TSchema): Route =>
    route({
      method: 'get',
      path,
      summary,
      tag: 'console',
      auth: 'none',
      ...(query && { query }),
      success: { status: 200, description: contentType },
      handler: async () => ({ status: 200, bytes: pick(await deps.bundle()), contentType, headers: PAGE_HEADERS }),
    });
  return [
    file('/console', (b) => b.html, 'text/html; charset=utf-8', 'The console (off with SERVICE_CONSOLE=0)', SignInAnswer),
    file('/console/app.js', (b) => b.js, 'text/javascript; charset=utf-8', "The console's script"),
    file('/console/app.css', (b) => b.css, 'text/css; charset=utf-8', "The console's style sheet"),
    route<unknown, { org_id?: string }>({
      method: 'get',
      path: '/console/config',
      summary: "What the console needs to sign an administrator in: the organization's console OAuth client (null until it has an administrator)",
      tag: 'console',
      auth: 'org_or_query',
      query: Type.Object({ org_id: Type.Optional(Type.String()) }, { additionalProperties: false }),
      success: { status: 200, result: Type.Object({ org_id: Type.String(), org_name: Type.String(), client_id: Type.Union([Type.String(), Type.Null()]), issuer: Type.String() }) },
      errors: [400, 404],
      handler: (req) => ({
        status: 200,
        result: { org_id: req.org.id, org_name: req.org.state.org_name, client_id: consoleClientOf(req.org.state, deps.issuer())?.client_id ?? null, issuer: deps.issuer() },
      }),
    }),
    route<Static<typeof FirstAdministratorBody>>({
      method: 'post',
      path: '/console/first-administrator',
      summary: 'Spend the one-time code printed at the first start: creates a person with this handle and password and makes them the root organization\'s first administrator',
      tag: 'console',
      auth: 'none',
      body: FirstAdministratorBody,
      success: { status: 201, result: Type.Object({ org_id: Type.String(), person_id: Type.String(), client_id: Type.String() }) },
      errors: [400, 403, 409],
      handler: async (req) => {
        // Checked before the code is spent: a weak password costs the caller a retry, not the link.
        checkPasswordPolicy(req.body.password);
        const orgId = await deps.firstAdministrator.redeem(req.body.code);
        const org = deps.registry.get(orgId);
        if (!org) throw notFound(`organization ${orgId} not found`);
        let person: { person_id: string };
        try {
          person = (await org.execute<{ person_id: string }>({ kind: 'CreatePerson', input: { handles: [req.body.handle] } })).reply;
        } catch (error) {
          // A handle already taken is the caller's to fix: the link stays good for another try.
          await deps.firstAdministrator.issue(orgId, req.body.code);
          throw error;
        }
        await org.execute({ kind: 'SetPassword', person_id: person.person_id, password_hash: await deps.passwords.hash(req.body.password) });
        const made = await makeAdministrator(org, person.person_id, deps.issuer());
        return { status: 201, result: { org_id: orgId, person_id: person.person_id, client_id: made.client_id } };
      },
    }),
    route<{ person_id: string }>({
      method: 'post',
      path: '/console/administrators',
      summary: 'Make a person an administrator of the organization in the console (the console-administrator role, created with the console permissions and client when missing)',
      tag: 'console',
      auth: 'key',
      body: Type.Object({ person_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      success: { status: 200, result: Administrator },
      errors: [400, 401, 403, 404],
      handler: async (req) => {
        if (!req.org.state.persons.has(req.body.person_id)) throw notFound(`person ${req.body.person_id} not found`);
        return { status: 200, result: await makeAdministrator(req.org, req.body.person_id, deps.issuer()) };
      },
    }),
  ];
}
