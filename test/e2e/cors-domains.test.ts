// An organization's allowed origin domains (POST /organizations/config/domains) are its CORS origins,
// beside SERVICE_CORS_ORIGINS: its pages' preflights and requests are answered, another organization's are not.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetch } from 'undici';
import { expectNoContent } from '../support/expect.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { newOrg, type Org } from '../support/auth.js';

const SHOP = 'https://www.acme-shop.example';
let server: TestServer;
let acme: Org;
let other: Org;

before(async () => {
  server = await startTestServer({ SERVICE_CORS_ORIGINS: 'http://localhost:5173' });
  acme = await newOrg(server, 'acme');
  other = await newOrg(server, 'other');
});
after(() => server.stop());

const preflight = (origin: string) =>
  fetch(`${server.base}/persons/anonymous`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, service-orgid' } });

describe("an organization's allowed domains as its CORS origins", () => {
  test('before the domain is allowed, its page gets no preflight', async () => {
    assert.equal((await preflight(SHOP)).status, 403);
  });

  test("once allowed (with a wildcard), the preflight and the organization's answers carry the origin", async () => {
    expectNoContent(await acme.admin.post('/organizations/config/domains', { domains: ['*.acme-shop.example'] }));
    const pre = await preflight(SHOP);
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), SHOP);
    const created = await acme.user.post('/persons/anonymous', {}, { Origin: SHOP });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers.get('access-control-allow-origin'), SHOP);
  });

  test("another organization's route refuses that origin before anything changes", async () => {
    const before = (await other.admin.get('/persons')).body.result.length as number;
    const r = await other.user.post('/persons/anonymous', {}, { Origin: SHOP });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.headers.get('access-control-allow-origin'), null);
    assert.equal((await other.admin.get('/persons')).body.result.length, before);
  });

  test('removing the domain closes the preflight again', async () => {
    expectNoContent(await acme.admin.delete(`/organizations/config/domains?domain=${encodeURIComponent('*.acme-shop.example')}`));
    assert.equal((await preflight(SHOP)).status, 403);
  });
});
