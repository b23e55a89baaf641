import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetch } from 'undici';
import { startTestServer, type TestServer } from '../support/server.js';
import { newOrg, type Org } from '../support/auth.js';

const PAGE = 'http://localhost:5173';
const OTHER = 'http://evil.example';

describe('CORS for browser-facing routes', () => {
  let server: TestServer;
  let org: Org;
  before(async () => {
    server = await startTestServer({ SERVICE_CORS_ORIGINS: `${PAGE},http://127.0.0.2:9000` });
    org = await newOrg(server);
  });
  after(() => server.stop());

  const preflight = (path: string, origin: string, method: string, headers = 'content-type, service-orgid') =>
    fetch(server.base + path, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers } });

  test('a listed origin is answered the preflight with the methods and every header a page sends', async () => {
    const r = await preflight('/register/password', PAGE, 'POST');
    assert.equal(r.status, 204);
    assert.equal(r.headers.get('access-control-allow-origin'), PAGE);
    assert.equal(r.headers.get('access-control-allow-methods'), 'POST');
    const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(', ');
    for (const h of ['content-type', 'authorization', 'service-orgid', 'service-sdkversion', 'service-analytics-correlation-id', 'service-consistency-token']) {
      assert.ok(allowed.includes(h), `${h} allowed`);
    }
    assert.equal(r.headers.get('vary'), 'Origin');
    assert.ok(Number(r.headers.get('access-control-max-age')) > 0);
  });

  test('an origin that is not listed gets no CORS header, in the preflight or the answer', async () => {
    const r = await preflight('/register/password', OTHER, 'POST');
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('access-control-allow-origin'), null);
    const answer = await org.user.post('/authenticate/password', { handle: { type: 'email_address', value: 'a@example.com' }, password: 'x' }, { Origin: OTHER });
    assert.equal(answer.status, 401);
    assert.equal(answer.headers.get('access-control-allow-origin'), null);
  });

  test("a listed origin's request is answered with the CORS headers, errors included", async () => {
    const answer = await org.user.post('/authenticate/password', { handle: { type: 'email_address', value: 'a@example.com' }, password: 'x' }, { Origin: PAGE });
    assert.equal(answer.status, 401);
    assert.equal(answer.headers.get('access-control-allow-origin'), PAGE);
    assert.match(answer.headers.get('access-control-expose-headers') ?? '', /Service-Consistency-Token/);
    const validate = await server.client.post('/token/validate', { token: 'x' }, { Origin: PAGE, 'Service-OrgID': '', 'Service-API-Key': '' });
    assert.equal(validate.status, 200);
    assert.equal(validate.headers.get('access-control-allow-origin'), PAGE);
  });

  test('management calls with an API key never answer cross-origin, even for a listed origin', async () => {
    const pre = await preflight('/persons', PAGE, 'POST', 'content-type, service-orgid, service-api-key');
    assert.equal(pre.status, 403);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    const list = await org.admin.get('/persons', { Origin: PAGE });
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('access-control-allow-origin'), null);
    const sub = await preflight('/organizations/suborganizations', PAGE, 'POST');
    assert.equal(sub.status, 403);
  });

  test('a preflight for a method the path does not have is refused', async () => {
    const r = await preflight('/register/password', PAGE, 'DELETE');
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('access-control-allow-origin'), null);
  });
});

describe('CORS without SERVICE_CORS_ORIGINS', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('no origin is allowed by default', async () => {
    const r = await fetch(`${server.base}/register/password`, { method: 'OPTIONS', headers: { Origin: PAGE, 'Access-Control-Request-Method': 'POST' } });
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('access-control-allow-origin'), null);
  });
});
