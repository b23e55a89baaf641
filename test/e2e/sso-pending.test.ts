// SSO sign-ins in flight: bounded per organization and per address, so that one organization's starts never
// refuse another's; and kept beside the WAL, so that a sign-in started before a restart completes after it.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { verifyIdentityToken } from '../support/auth.js';
import { freePort } from '../support/free-port.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { ssoSetup } from '../support/sso.js';

const APP = 'http://127.0.0.1:9/signed-in';
const fragment = (url: string) => new URLSearchParams(new URL(url).hash.slice(1));
const dirs: string[] = [];
after(() => {
  for (const d of dirs) removeDir(d);
});

/** `count` starts of a sign-in at `url`, `parallel` at a time, each from the address `from(i)`: their statuses. */
async function starts(url: string, count: number, from: (i: number) => string, parallel = 32): Promise<number[]> {
  const agent = new Agent({ keepAliveTimeout: 1000, connections: parallel });
  const statuses: number[] = new Array(count);
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        for (let i = next++; i < count; i = next++) {
          const res = await fetch(url, { redirect: 'manual', headers: { 'x-forwarded-for': from(i) }, dispatcher: agent });
          await res.arrayBuffer();
          statuses[i] = res.status;
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return statuses;
}

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});

describe('SSO sign-ins in flight', () => {
  test("10,000 anonymous starts in one organization fill only that organization's share: another organization still starts", async () => {
    const dir = tempDir();
    dirs.push(dir);
    // The starts come through a trusted proxy that names 20 client addresses, 500 starts each.
    const server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_TRUSTED_PROXIES: '127.0.0.1', SERVICE_DURABILITY: 'nosync' }, {}, dir);
    const a = await ssoSetup(server, 'flooded', APP);
    const b = await ssoSetup(server, 'bystander', APP);
    try {
      const flood = await starts(a.startUrl(), 10_000, (i) => `198.51.100.${i % 20}`);
      assert.deepEqual(tally(flood), { 302: 10_000 });
      const more = await a.browser.request(a.startUrl(), { headers: { 'x-forwarded-for': '198.51.100.99' } });
      assert.equal(more.status, 429, more.body);
      assert.match(JSON.parse(more.body).errors[0].message, /too many SSO sign-ins are in progress for this organization/);

      // The other organization, from the flood's own addresses and from another.
      for (const from of ['198.51.100.1', '203.0.113.7']) {
        const start = await b.browser.request(b.startUrl(), { headers: { 'x-forwarded-for': from } });
        assert.equal(start.status, 302, start.body);
      }
      // And its sign-in completes.
      const walk = await b.browser.walk(b.startUrl(), { stop: (u) => u.startsWith(APP) });
      assert.ok(fragment(walk.stoppedAt as string).get('token'));
    } finally {
      await a.close();
      await b.close();
      await server.stop();
    }
  });

  test("one address's starts fill only that address's share in that organization", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_TRUSTED_PROXIES: '127.0.0.1', SERVICE_DURABILITY: 'nosync', SERVICE_SSO_PENDING_PER_ADDRESS: '50' }, {}, dir);
    const a = await ssoSetup(server, 'one-address', APP);
    const b = await ssoSetup(server, 'same-address-elsewhere', APP);
    try {
      assert.deepEqual(tally(await starts(a.startUrl(), 50, () => '198.51.100.1')), { 302: 50 });
      const refused = await a.browser.request(a.startUrl(), { headers: { 'x-forwarded-for': '198.51.100.1' } });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.includes('from this address for this organization'), true, refused.body);
      assert.equal((await a.browser.request(a.startUrl(), { headers: { 'x-forwarded-for': '198.51.100.2' } })).status, 302);
      assert.equal((await b.browser.request(b.startUrl(), { headers: { 'x-forwarded-for': '198.51.100.1' } })).status, 302);
    } finally {
      await a.close();
      await b.close();
      await server.stop();
    }
  });

  test('a sign-in started before a restart completes after it, on the same data dir; its replay is still refused', async () => {
    const dir = tempDir();
    dirs.push(dir);
    // The provider knows the callback URL, so the service comes back on the same port.
    const port = String(await freePort());
    const env = { SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_PORT: port, SERVICE_SECRETS_KEY: '07'.repeat(32) };
    let server: TestServer = await startTestServer(env, {}, dir);
    const s = await ssoSetup(server, 'restarting', APP);
    try {
      const started = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(`${server.base}/authenticate/oidc/callback`) });
      assert.ok(started.stoppedAt, `ended at ${started.last.status} ${started.last.url}`);
      await server.stop();

      server = await startTestServer(env, {}, dir);
      const done = await s.browser.request(started.stoppedAt);
      assert.equal(done.status, 302, done.body);
      const token = fragment(done.location as string).get('token');
      assert.ok(token, done.location ?? '');
      assert.deepEqual((await verifyIdentityToken(server, token))['authenticated_methods'], ['oidc']);

      await server.stop();
      server = await startTestServer(env, {}, dir);
      const replay = await s.browser.request(started.stoppedAt);
      assert.equal(replay.status, 400);
      assert.match(JSON.parse(replay.body).errors[0].message, /single use/);
    } finally {
      await s.close();
      await server.stop();
    }
  });
});
