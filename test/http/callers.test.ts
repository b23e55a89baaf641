// Callers at the front: each authenticator's principal, an authenticator that must wait, and form-encoded
// bodies, served by a front of test-only routes over the real service's organizations.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type, type Static } from '@sinclair/typebox';
import { Agent, fetch } from 'undici';
import { ServiceError } from '../../src/errors.js';
import { createAuthContext, type Authenticator, type Principal } from '../../src/http/auth.js';
import { buildRequest, compileRoute } from '../../src/http/request.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { route, type Request, type Route } from '../../src/http/route.js';
import { Front } from '../../src/http/server.js';
import { Metrics } from '../../src/lib/metrics.js';
import { Client, ROOT_KEY, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';

const OPERATOR_KEY = 'operator-key-0123456789abcdef';
const FORM = 'application/x-www-form-urlencoded';

/** What the handler saw of its caller. */
const seen = (req: Request) => ({ kind: req.principal.kind, principal_org: 'org' in req.principal ? req.principal.org.id : null, org: req.org?.id ?? null });

/** A caller named by `Authorization: Bearer <org id>`, found only after a turn of the event loop, as a token check would be. */
const bearerOfOrg: Authenticator = {
  headers: ['authorization'],
  crossOrigin: false,
  client: false,
  security: [{ bearer: [] }],
  schemes: { bearer: { type: 'http', scheme: 'bearer' } },
  async authenticate(headers, ctx): Promise<Principal> {
    await new Promise((resolve) => setImmediate(resolve));
    const org = ctx.registry.get(/^Bearer (.+)$/.exec(headers['authorization'] ?? '')?.[1] ?? '');
    if (!org) throw new ServiceError('ERR_UNAUTHORIZED', 'the bearer token is not valid');
    return ctx.principals(org).end_user;
  },
};

const TokenForm = Type.Object(
  {
    grant_type: Type.Union([Type.Literal('client_credentials'), Type.Literal('refresh_token')]),
    scope: Type.Optional(Type.String({ maxLength: 20 })),
    max: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

const routes: Route[] = [
  ...(['none', 'org', 'key', 'operator'] as const).map((auth) =>
    route({ method: 'get', path: `/callers/${auth}`, summary: auth, tag: 'test', auth, success: { status: 200 }, handler: (req) => ({ status: 200, result: seen(req) }) }),
  ),
  route({ method: 'get', path: '/callers/bearer', summary: 'bearer', tag: 'test', auth: bearerOfOrg, success: { status: 200 }, handler: (req) => ({ status: 200, result: seen(req) }) }),
  route({
    method: 'post',
    path: '/callers/bearer',
    summary: 'bearer with a body',
    tag: 'test',
    auth: bearerOfOrg,
    body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
    success: { status: 200 },
    handler: (req) => ({ status: 200, result: req.body }),
  }),
  route<Static<typeof TokenForm>>({
    method: 'post',
    path: '/callers/token',
    summary: 'a form-encoded body',
    tag: 'test',
    auth: 'key',
    codec: 'form',
    body: TokenForm,
    success: { status: 200 },
    handler: (req) => ({ status: 200, result: { ...seen(req), body: req.body } }),
  }),
];

let server: TestServer;
let front: Front;
let c: Client;
let agent: Agent;
let other: { id: string; api_key: string };

before(async () => {
  server = await startTestServer();
  const made = await server.client.post('/organizations/suborganizations', { sub_org_name: 'other' });
  other = made.body.result;
  front = new Front(server.service.registry, new Metrics(), {
    bodyLimit: 1024,
    corsOrigins: [],
    operatorKey: OPERATOR_KEY,
    checkOperatorKey: (presented) => presented === OPERATOR_KEY,
    log: () => {},
  });
  front.mount(routes);
  const port = await front.listen('127.0.0.1', 0);
  agent = new Agent({ keepAliveTimeout: 1000 });
  c = new Client(`http://127.0.0.1:${port}`, ROOT_ORG, ROOT_KEY, agent);
});

after(async () => {
  await agent.close();
  front.close();
  await server.stop();
});

describe('principals', () => {
  test('each built-in authenticator gives its kind of caller, and req.org is its organization', async () => {
    assert.deepEqual((await c.as('', '').get('/callers/none')).body.result, { kind: 'public', principal_org: null, org: null });
    assert.deepEqual((await c.as(other.id, '').get('/callers/org')).body.result, { kind: 'end_user', principal_org: other.id, org: other.id });
    assert.deepEqual((await c.get('/callers/key')).body.result, { kind: 'organization', principal_org: ROOT_ORG, org: ROOT_ORG });
    assert.deepEqual((await c.as('', '').get('/callers/operator', { 'Service-Operator-Key': OPERATOR_KEY })).body.result, { kind: 'operator', principal_org: null, org: null });
  });

  test('refusals keep their statuses and messages', async () => {
    const cases: Array<[Client, string, number, RegExp, Record<string, string>?]> = [
      [c.as('', ''), '/callers/org', 400, /Service-OrgID header is required/],
      [c.as('bad id!', ''), '/callers/key', 400, /Service-OrgID: must be/],
      [c.as('nobody', ''), '/callers/org', 404, /organization nobody not found/],
      [c.as(ROOT_ORG, ''), '/callers/key', 401, /Service-API-Key header is required/],
      [c.as(ROOT_ORG, other.api_key), '/callers/key', 403, /does not belong/],
      [c.as('', ''), '/callers/operator', 401, /Service-Operator-Key is missing or wrong/, { 'Service-Operator-Key': 'wrong' }],
    ];
    for (const [client, path, status, message, headers] of cases) {
      const r = await client.get(path, headers);
      assert.equal(r.status, status, `${path}: ${r.text}`);
      assert.match(r.body.errors[0].message, message);
    }
  });

  test('an authenticator that must wait: its principal reaches the handler, its refusal comes before the body is read', async () => {
    assert.deepEqual((await c.as('', '').get('/callers/bearer', { Authorization: `Bearer ${other.id}` })).body.result, { kind: 'end_user', principal_org: other.id, org: other.id });
    const refused = await c.as('', '').post('/callers/bearer', '{not json', { Authorization: 'Bearer nobody' });
    assert.equal(refused.status, 401);
    assert.match(refused.body.errors[0].message, /bearer token is not valid/);
    const badBody = await c.as('', '').post('/callers/bearer', { n: 'x' }, { Authorization: `Bearer ${other.id}` });
    assert.equal(badBody.status, 400);
    assert.match(badBody.body.errors[0].message, /^n: /);
    assert.deepEqual((await c.as('', '').post('/callers/bearer', { n: 3 }, { Authorization: `Bearer ${other.id}` })).body.result, { n: 3 });
  });
});

test('buildRequest: an organization\'s principal is made once, not per request; a route naming no known authenticator fails at start', async () => {
  const ctx = createAuthContext(server.service.registry, { operatorKey: undefined, checkOperatorKey: () => false });
  const parts = compileRoute(routes.find((r) => r.path === '/callers/key') as Route);
  const copied = { params: [], query: '', headers: { 'service-orgid': ROOT_ORG, 'service-api-key': ROOT_KEY }, ip: '' };
  const first = (await buildRequest(parts, copied, undefined, ctx)).principal;
  const second = (await buildRequest(parts, copied, undefined, ctx)).principal;
  assert.equal(first.kind, 'organization');
  assert.equal(first, second);
  assert.throws(() => buildRequest(parts, { ...copied, headers: { 'service-orgid': ROOT_ORG } }, undefined, ctx), /Service-API-Key header is required/);
  assert.throws(() => compileRoute({ ...parts.route, auth: 'cookie' as never }), /unknown auth "cookie"/);
  assert.throws(() => compileRoute({ ...parts.route, codec: 'xml' as never }), /unknown codec "xml"/);
});

describe('form-encoded bodies', () => {
  const form = (body: string, headers: Record<string, string> = {}) => c.post('/callers/token', body, { 'Content-Type': FORM, ...headers });

  test('fields arrive as strings, or as the numbers the schema asks for, percent-decoded', async () => {
    const r = await form('grant_type=client_credentials&scope=read+write%21&max=5');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.result, { kind: 'organization', principal_org: ROOT_ORG, org: ROOT_ORG, body: { grant_type: 'client_credentials', scope: 'read write!', max: 5 } });
    assert.equal((await form('grant_type=refresh_token', { 'Content-Type': `${FORM}; charset=UTF-8` })).status, 200);
  });

  test('the schema validates them by name: missing, unknown, wrong value, too long, not an integer', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /^grant_type: is required/],
      ['scope=x', /^grant_type: is required/],
      ['grant_type=client_credentials&client_secret=s', /^client_secret: unknown field/],
      ['grant_type=password', /^grant_type: must be one of client_credentials, refresh_token/],
      [`grant_type=client_credentials&scope=${'a'.repeat(21)}`, /^scope: /],
      ['grant_type=client_credentials&max=1.5', /^max: /],
      ['grant_type=client_credentials&__proto__=x', /^__proto__: unknown field/],
    ];
    for (const [body, message] of cases) {
      const r = await form(body);
      assert.equal(r.status, 400, body);
      assert.match(r.body.errors[0].message, message, body);
    }
  });

  test('a parameter given twice is a 400 naming it', async () => {
    const r = await form('grant_type=client_credentials&grant_type=refresh_token');
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0].message, /^grant_type: given more than once/);
  });

  test('another Content-Type is a 415 naming the expected one; without one the body is read as a form', async () => {
    const r = await c.post('/callers/token', { grant_type: 'client_credentials' });
    assert.equal(r.status, 415);
    assert.equal(r.body.errors[0].message, `Content-Type must be ${FORM}, got "application/json"`);
    // Bytes, not a string: fetch would label a string text/plain.
    const bare = await fetch(`${c.base}/callers/token`, { method: 'POST', headers: { 'Service-OrgID': ROOT_ORG, 'Service-API-Key': ROOT_KEY }, body: Buffer.from('grant_type=client_credentials'), dispatcher: agent });
    assert.equal(bare.status, 200, await bare.text());
  });

  test('the caller is checked before the body: bad credentials with a bad body are still a 401', async () => {
    const r = await c.as(ROOT_ORG, 'wrong-key').post('/callers/token', '{}', { 'Content-Type': 'application/json' });
    assert.equal(r.status, 401);
  });
});

test('the OpenAPI document names each route\'s body media type and its authenticator\'s security', () => {
  const doc = openApiDocument(routes, { title: 't', version: '0', server: 'http://x' }) as any;
  const token = doc.paths['/callers/token'].post;
  assert.deepEqual(Object.keys(token.requestBody.content), [FORM]);
  assert.equal(token.requestBody.content[FORM].schema.properties.grant_type.anyOf.length, 2);
  assert.deepEqual(token.security, [{ orgId: [], apiKey: [] }]);
  assert.deepEqual(Object.keys(doc.paths['/callers/bearer'].post.requestBody.content), ['application/json']);
  assert.deepEqual(doc.paths['/callers/bearer'].get.security, [{ bearer: [] }]);
  assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'bearer', 'operatorKey', 'orgId']);
});
