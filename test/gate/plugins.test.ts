// token-translation-upgrade (enrichment through the mint-token API, cached), ratelimit (GCRA, recovery) and
// token-reminting, in front of an echo upstream and the real service.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createGcra } from '../../src/gate/plugins/gcra.js';
import { gateDoc, startEchoUpstream, startTestGate, type EchoUpstream } from '../support/gate.js';
import { email, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber } from '../support/ws.js';

let server: TestServer;
let upstream: EchoUpstream;
let gate: Awaited<ReturnType<typeof startTestGate>>;
let helper: http.Server;
let helperBase: string;
let person: string;
const mapped: string[] = [];

before(async () => {
  server = await startTestServer();
  upstream = await startEchoUpstream();
  person = (await server.client.post('/persons', email('legacy-user@example.com'))).body.result.person_id;
  // The customer's map-token and remint endpoints.
  helper = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const { token } = JSON.parse(raw) as { token: string };
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/remint') return token === 'old-bad' ? json(401, {}) : json(200, { token: `reminted-${token}` });
      mapped.push(token);
      if (token === 'legacy-bad') return json(401, { error: 'unknown token' });
      if (token === 'legacy-broken') return json(500, {});
      if (token === 'legacy-reserved') return json(200, { person_id: person, custom_claims: { iss: 'https://forged.example' } });
      return json(200, { person_id: person, custom_claims: { legacy_id: token, plan: 'gold' } });
    });
  });
  helper.listen(0, '127.0.0.1');
  await once(helper, 'listening');
  helperBase = `http://127.0.0.1:${(helper.address() as AddressInfo).port}`;
  gate = await startTestGate(
    gateDoc(server.base, {
      default: { target: upstream.base },
      urls: [
        { pattern: '*/enrich/*', plugins: { enrich: { enabled: true } } },
        { pattern: '*/limited/*', plugins: { 'ip-limit': { enabled: true } } },
        { pattern: '*/per-tenant/*', plugins: { 'tenant-limit': { enabled: true } } },
        { pattern: '*/per-person/*', plugins: { enrich: { enabled: true }, jwt: { enabled: true }, 'person-limit': { enabled: true } } },
        { pattern: '*/remint/*', plugins: { remint: { enabled: true } } },
      ],
      plugins: [
        { id: 'enrich', type: 'token-translation-upgrade', enabled: false, parameters: { map_token_endpoint: `${helperBase}/map`, header_with_token: 'X-Legacy-Token', target_headers: ['Authorization'] } },
        { id: 'jwt', type: 'validate-jwt', enabled: false },
        { id: 'ip-limit', type: 'ratelimit', enabled: false, parameters: { limits: [{ key: 'ip', interval: '400ms', burst: 3 }] } },
        { id: 'tenant-limit', type: 'ratelimit', enabled: false, parameters: { limits: [{ key: 'header:X-Tenant', interval: '1m', burst: 1 }], headers: { ratelimit_remaining: false } } },
        { id: 'person-limit', type: 'ratelimit', enabled: false, parameters: { limits: [{ key: 'claim:sub', interval: '1m', burst: 2 }] } },
        { id: 'remint', type: 'token-reminting', enabled: false, parameters: { remint_token_endpoint: `${helperBase}/remint`, keep_old_token: true } },
      ],
    }),
  );
});
after(async () => {
  await gate.close();
  await upstream.close();
  await server.stop();
  helper.close();
});

async function call(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${gate.base}${path}`, { headers });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

test('enrichment: the upstream gets a service token jose verifies, with the mapper\'s claims; TokenMinted is emitted; the second request hits the cache', async () => {
  const sub = await Subscriber.open(server.base);
  try {
    const n = upstream.seen.length;
    assert.equal((await call('/enrich/a', { 'x-legacy-token': 'legacy-42' })).status, 200);
    const auth = String(upstream.seen[n]?.headers['authorization']);
    assert.match(auth, /^Bearer /);
    const { payload } = await jwtVerify(auth.slice(7), createRemoteJWKSet(new URL(`${server.base}/.well-known/jwks.json`)), { audience: ROOT_ORG });
    assert.equal(payload.sub, person);
    assert.equal(payload['legacy_id'], 'legacy-42');
    assert.equal(payload['plan'], 'gold');

    assert.equal((await call('/enrich/b', { 'x-legacy-token': 'legacy-42' })).status, 200);
    assert.equal(upstream.seen[n + 1]?.headers['authorization'], auth, 'the cached token');
    assert.equal(mapped.filter((t) => t === 'legacy-42').length, 1, 'the mapper was asked once');

    const events = () => sub.frames.map((f) => f.event);
    const handled = (path: string) => events().find((e) => e.event_metadata.event_name === 'GateRequestHandled_v1' && e.http_request_metadata.url.endsWith(path));
    await sub.waitUntil(() => handled('/enrich/b') !== undefined, 30_000, 'the second request reported');
    const minted = events().filter((e) => e.event_metadata.event_name === 'TokenMinted_v1');
    assert.equal(minted.length, 1);
    assert.equal(minted[0].mint_token_api, true);
    assert.equal(minted[0].person_id, person);
    const first = handled('/enrich/a').plugins[0];
    assert.equal(first.plugin_metadata.cache, 'miss');
    assert.deepEqual(first.round_trips.map((t: any) => new URL(t.http_request_metadata.url).pathname), ['/map', `/persons/${person}/mint-token`]);
    assert.deepEqual(first.round_trips.map((t: any) => t.http_request_metadata.status_code), [200, 201]);
    const second = handled('/enrich/b').plugins[0];
    assert.equal(second.plugin_metadata.cache, 'hit');
    assert.deepEqual(second.round_trips, []);
  } finally {
    await sub.close();
  }
});

test('enrichment refusals: a rejected token is 401, a failing mapper 502, reserved claims refused as mint-token refuses them; the upstream sees none', async () => {
  const n = upstream.seen.length;
  assert.equal((await call('/enrich/x')).status, 401);
  assert.equal((await call('/enrich/x', { 'x-legacy-token': 'legacy-bad' })).status, 401);
  assert.equal((await call('/enrich/x', { 'x-legacy-token': 'legacy-broken' })).status, 502);
  const reserved = await call('/enrich/x', { 'x-legacy-token': 'legacy-reserved' });
  assert.equal(reserved.status, 502);
  assert.match(reserved.body, /400.*iss/);
  assert.equal(upstream.seen.length, n);
});

test('ratelimit by IP: a burst, then 429 with Retry-After and RateLimit-*, then recovery', async () => {
  for (let i = 0; i < 3; i++) assert.equal((await call('/limited/x')).status, 200, `request ${i}`);
  const limited = await call('/limited/x');
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  assert.equal(limited.headers.get('ratelimit-limit'), '3');
  assert.equal(limited.headers.get('ratelimit-remaining'), '0');
  assert.ok(Number(limited.headers.get('ratelimit-reset')) >= 1);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await call('/limited/x')).status, 200, 'recovered after Retry-After');
});

test('ratelimit by header and by a validated token\'s claim keeps keys apart; switched-off headers are left out', async () => {
  assert.equal((await call('/per-tenant/x', { 'x-tenant': 'a' })).status, 200);
  const a = await call('/per-tenant/x', { 'x-tenant': 'a' });
  assert.equal(a.status, 429);
  assert.equal(a.headers.get('ratelimit-remaining'), null);
  assert.equal((await call('/per-tenant/x', { 'x-tenant': 'b' })).status, 200);
  // enrich → jwt → limit by sub: the enriched token's person.
  assert.equal((await call('/per-person/x', { 'x-legacy-token': 'legacy-p1' })).status, 200);
  assert.equal((await call('/per-person/x', { 'x-legacy-token': 'legacy-p2' })).status, 200);
  assert.equal((await call('/per-person/x', { 'x-legacy-token': 'legacy-p3' })).status, 429, 'same person, another legacy token');
});

test('GCRA with a fake clock: burst, spacing, exact retry time, bounded keys', () => {
  const g = createGcra({ intervalMs: 100, burst: 2 }, 2);
  assert.deepEqual([g.take('k', 0).allowed, g.take('k', 0).allowed, g.take('k', 0).allowed], [true, true, false]);
  assert.equal(g.take('k', 0).retryAfterMs, 100);
  assert.equal(g.take('k', 99).allowed, false);
  assert.equal(g.take('k', 100).allowed, true);
  assert.equal(g.take('k', 100).allowed, false);
  g.take('a', 100);
  g.take('b', 100);
  assert.equal(g.size(), 2);
});

test('token-reminting: the answer replaces the token, the old one kept on request; a refused token is 401', async () => {
  const n = upstream.seen.length;
  assert.equal((await call('/remint/x', { authorization: 'Bearer old-1' })).status, 200);
  assert.equal(upstream.seen[n]?.headers['authorization'], 'Bearer reminted-old-1');
  assert.equal(upstream.seen[n]?.headers['x-gate-original-token'], 'old-1');
  assert.equal((await call('/remint/x', { authorization: 'Bearer old-bad' })).status, 401);
  assert.equal(upstream.seen.length, n + 1);
});
