// The console over HTTP: served at /console (and not at all with SERVICE_CONSOLE=0), its first administrator
// made by the one-time link, administrators signed in through the hosted page with PKCE, and their access
// tokens taken by the management routes only with the console permission each route needs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { until } from '../support/browser.js';
import { expectResult } from '../support/expect.js';
import { consoleAccessToken } from '../support/console.js';
import { removeDir, ROOT_ORG, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { spawnService } from '../support/process.js';
import { Subscriber } from '../support/ws.js';

const ADMIN = 'ada@example.com';
const READER = 'rita@example.com';
const PASSWORD = 'correct horse battery staple';
const emailHandle = (value: string) => ({ type: 'email_address', value });

describe('the console', () => {
  let server: TestServer;
  const dataDir = tempDir();
  let clientId: string;
  let adminToken: string;
  let readerToken: string;
  const asToken = (_token: string) => server.client.as(ROOT_ORG, '');
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  before(async () => {
    server = await startTestServer({}, {}, dataDir);
  });
  after(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  test('is served at /console as a page, a script and a style sheet, under 150 KB compressed', async () => {
    const page = await fetch(`${server.base}/console`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.match(await page.text(), /<script type="module" src="\/console\/app.js">/);
    let compressed = 0;
    for (const [path, type] of [['/console/app.js', /^text\/javascript/], ['/console/app.css', /^text\/css/]] as const) {
      const res = await fetch(`${server.base}${path}`);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', type);
      compressed += gzipSync(Buffer.from(await res.arrayBuffer())).length;
    }
    const bundle = await server.service.console?.bundle();
    assert.ok(bundle && bundle.gzipBytes < 150 * 1024 && compressed < bundle.gzipBytes, `bundle ${bundle?.gzipBytes} bytes compressed`);
  });

  test('the link printed at the first start makes its user the first administrator, once', async () => {
    const link = server.service.root?.console_link;
    assert.ok(link, 'the first start has a first-administrator link');
    const fragment = new URLSearchParams(new URL(link).hash.slice(1));
    const code = fragment.get('first-administrator') as string;
    assert.equal(fragment.get('org'), ROOT_ORG);
    const anonymous = server.client.as('', '');
    const wrong = await anonymous.post('/console/first-administrator', { code: 'not-the-code', handle: emailHandle(ADMIN), password: PASSWORD });
    assert.equal(wrong.status, 403, wrong.text);
    const weak = await anonymous.post('/console/first-administrator', { code, handle: emailHandle(ADMIN), password: 'short' });
    assert.equal(weak.status, 400, weak.text);
    const made = expectResult(await anonymous.post('/console/first-administrator', { code, handle: emailHandle(ADMIN), password: PASSWORD }), 201) as { org_id: string; person_id: string; client_id: string };
    assert.equal(made.org_id, ROOT_ORG);
    clientId = made.client_id;
    const again = await anonymous.post('/console/first-administrator', { code, handle: emailHandle('eve@example.com'), password: PASSWORD });
    assert.equal(again.status, 403, 'the link works once');
    const permissions = JSON.stringify(expectResult(await server.client.get(`/persons/${made.person_id}/permissions`), 200));
    for (const p of ['console.read', 'console.write', 'console.keys']) assert.ok(permissions.includes(p), `${p} in ${permissions}`);
    const config = expectResult(await anonymous.get(`/console/config?org_id=${ROOT_ORG}`), 200) as { client_id: string };
    assert.equal(config.client_id, clientId);
  });

  test("an administrator's console access token reads and writes; API keys keep working", async () => {
    adminToken = await consoleAccessToken(server.base, clientId, ADMIN, PASSWORD);
    const admin = asToken(adminToken);
    expectResult(await admin.get('/persons', bearer(adminToken)), 200);
    const created = expectResult(await admin.post('/persons', { handles: [emailHandle(READER)] }, bearer(adminToken)), 201) as { person_id: string };
    expectResult(await server.client.get(`/persons/${created.person_id}`), 200);
    // A reader: console.read alone, through a role the API key makes.
    assert.equal((await server.client.post('/rbac/roles', { name: 'console-reader', permissions: ['console.read'] })).status, 204);
    assert.ok((await server.client.put(`/persons/${created.person_id}/roles`, { roles: ['console-reader'] })).status < 300);
    assert.equal((await server.client.put(`/persons/${created.person_id}/credentials/password`, { password: PASSWORD })).status, 204);
    readerToken = await consoleAccessToken(server.base, clientId, READER, PASSWORD);
  });

  test('a person without console.write may read, and is refused every write with 403; console.keys guards the API key', async () => {
    const reader = asToken(readerToken);
    expectResult(await reader.get('/groups', bearer(readerToken)), 200);
    const write = await reader.post('/groups', { name: 'readers' }, bearer(readerToken));
    assert.equal(write.status, 403, write.text);
    assert.match(write.text, /console\.write/);
    const rotate = await reader.put('/organizations/api-keys', undefined, bearer(readerToken));
    assert.equal(rotate.status, 403, rotate.text);
    assert.match(rotate.text, /console\.keys/);
    const made = await reader.post('/console/administrators', { person_id: 'x' }, bearer(readerToken));
    assert.equal(made.status, 403, made.text);
  });

  test('a revoked console access token (signing out) is refused with 401', async () => {
    const revoke = await fetch(`${server.base}/oauth2/tokens/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: readerToken, client_id: clientId }),
    });
    assert.equal(revoke.status, 200, await revoke.text());
    const after = await asToken(readerToken).get('/groups', bearer(readerToken));
    assert.equal(after.status, 401, after.text);
  });

  test('what is not a console access token of the organization is refused with 401', async () => {
    const other = asToken('');
    for (const value of [`Bearer ${adminToken.slice(0, -4)}AAAA`, 'Bearer not.a.token', 'Basic dXNlcjpwYXNz']) {
      const res = await other.get('/persons', { Authorization: value });
      assert.equal(res.status, 401, `${value}: ${res.text}`);
    }
    // Another organization's name with this token: the token's client is not that organization's console.
    const sub = expectResult(await server.client.post('/organizations/suborganizations', { sub_org_name: 'sub' }), 200) as { id: string };
    const foreign = await server.client.as(sub.id, '').get('/persons', bearer(adminToken));
    assert.equal(foreign.status, 401, foreign.text);
  });

  test('the event stream takes a console access token in the query, as a browser sends it; a bad one closes it before any event', async () => {
    const sub = await Subscriber.open(server.base, { key: '', query: { org_id: ROOT_ORG, access_token: adminToken, types: 'PersonCreated_v1' } });
    const bad = await Subscriber.open(server.base, { key: '', query: { org_id: ROOT_ORG, access_token: 'not.a.token' } });
    const closed = await bad.closed;
    assert.equal(closed.code, 4001, closed.reason);
    expectResult(await server.client.post('/persons', { handles: [emailHandle('watched@example.com')] }), 201);
    await sub.waitForCount(1);
    assert.equal(bad.frames.length, 0);
    sub.socket.close();
    const reader = await Subscriber.open(server.base, { key: '', query: { org_id: ROOT_ORG, access_token: readerToken } });
    assert.equal((await reader.closed).code, 4001, 'the revoked token');
    await assert.rejects(Subscriber.open(server.base, { org: 'no-such-org', key: '', query: { access_token: adminToken } }), (e: { status?: number }) => e.status === 404);
  });
});

describe('with SERVICE_CONSOLE=0', () => {
  let server: TestServer;
  const dataDir = tempDir();
  before(async () => {
    server = await startTestServer({ SERVICE_CONSOLE: '0' }, {}, dataDir);
  });
  after(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  test('there is no console, no link, and management routes know only API keys', async () => {
    assert.equal((await fetch(`${server.base}/console`)).status, 404);
    assert.equal(server.service.root?.console_link, undefined);
    assert.equal(server.service.console, undefined);
    const res = await server.client.as(ROOT_ORG, '').get('/persons', { Authorization: 'Bearer x.y.z' });
    assert.equal(res.status, 401, res.text);
    await assert.rejects(Subscriber.open(server.base, { key: '', query: { org_id: ROOT_ORG, access_token: 'x.y.z' } }), (e: { status?: number }) => e.status === 400);
  });
});

describe('npm start', () => {
  test("prints the first-administrator link beside the root API key, and the console's bundle size", async () => {
    const dataDir = tempDir();
    const service = await spawnService({}, dataDir);
    try {
      // The size comes from the build at start, which ends after the service listens.
      const size = await until('the console size line', () => /^console at (http:\/\/\S+\/console): ([\d.]+) KB, ([\d.]+) KB gzip$/m.exec(service.process.output()) ?? undefined);
      assert.equal(size[1], `${service.base}/console`);
      const [bytes, gzip] = [Number(size[2]), Number(size[3])];
      assert.ok(gzip > 0 && gzip < bytes && gzip < 150, `${bytes} KB, ${gzip} KB gzip: under 150 KB compressed`);
      const output = service.process.output();
      assert.match(output, /Service-API-Key: /);
      const link = /open this link once to become the first administrator in the console:\n {2}(\S+)/.exec(output);
      assert.ok(link, output);
      assert.match(link[1] as string, new RegExp(`^${service.base}/console#first-administrator=[^&]+&org=${ROOT_ORG}$`));
      // The size printed is what the service serves.
      let served = 0;
      for (const path of ['/console', '/console/app.js', '/console/app.css']) served += (await (await fetch(`${service.base}${path}`)).arrayBuffer()).byteLength;
      assert.equal((served / 1024).toFixed(1), bytes.toFixed(1));
    } finally {
      await service.stop();
      removeDir(dataDir);
    }
  });
});
