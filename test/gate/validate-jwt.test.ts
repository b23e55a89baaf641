// validate-jwt in front of an echo upstream: the service's tokens pass, every bad token is refused before the
// upstream sees it, groups give 403, OPTIONS is validated too, key rotation is picked up with one JWKS refetch, and
// third-party issuers are checked by jwks_url, issuer and audience.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { exportJWK, exportSPKI, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { movableClock } from '../support/clock.js';
import { gateDoc, startEchoUpstream, startTestGate, type EchoUpstream } from '../support/gate.js';
import { email, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber } from '../support/ws.js';

const OPERATOR_KEY = 'operator-key-for-gate-tests-0123';
const clock = movableClock();
let server: TestServer;
let upstream: EchoUpstream;
let gate: Awaited<ReturnType<typeof startTestGate>>;
let person: string;
let token: string;
let jwks: http.Server;
let jwksBase: string;
let thirdKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let thirdJwk: JWK;

async function mint(personId: string): Promise<string> {
  const r = await server.client.post(`/persons/${personId}/mint-token`, {});
  assert.equal(r.status, 201, r.text);
  return r.body.result as string;
}

before(async () => {
  server = await startTestServer({}, { operatorKey: OPERATOR_KEY, clock });
  upstream = await startEchoUpstream();
  const kp = await generateKeyPair('ES256');
  thirdKey = kp.privateKey;
  thirdJwk = { ...(await exportJWK(kp.publicKey)), kid: 'third-1', alg: 'ES256', use: 'sig' };
  jwks = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [thirdJwk] }));
  });
  jwks.listen(0, '127.0.0.1');
  await once(jwks, 'listening');
  jwksBase = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
  const r = await server.client.post('/persons', email('gate-person@example.com'));
  person = r.body.result.person_id;
  token = await mint(person);
  gate = await startTestGate(
    gateDoc(server.base, {
      default: { target: upstream.base },
      urls: [
        { pattern: '*/public/*', plugins: { jwt: { enabled: false } } },
        { pattern: '*/other-org/*', plugins: { jwt: { parameters: { service_org_id: 'another-org' } } } },
        { pattern: '*/other-issuer/*', plugins: { jwt: { parameters: { service_issuer: 'https://elsewhere.example' } } } },
        { pattern: '*/admins/*', plugins: { jwt: { parameters: { required_groups: ['admins'] } } } },
        { pattern: '*/third/*', plugins: { jwt: { enabled: false }, third: { enabled: true } } },
        { pattern: '*/checked/*', plugins: { jwt: { parameters: { revocation_check: true } } } },
      ],
      plugins: [
        { id: 'jwt', type: 'validate-jwt', parameters: { jwks_refetch_interval: '0s', forward_person_id: true } },
        { id: 'third', type: 'validate-jwt', enabled: false, parameters: { jwks_url: `${jwksBase}/jwks`, issuer: 'https://third.example', audience: 'gate-api', clock_leeway: '0s' } },
      ],
    }),
  );
});
after(async () => {
  await gate.close();
  await upstream.close();
  await server.stop();
  jwks.close();
});

async function call(path: string, bearer: string | undefined, method = 'GET') {
  const res = await fetch(`${gate.base}${path}`, { method, headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

function b64(json: unknown): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

test('a token of the service passes, and the upstream learns the person', async () => {
  const n = upstream.seen.length;
  const res = await call('/api/x', token);
  assert.equal(res.status, 200, res.body);
  assert.equal(upstream.seen.length, n + 1);
  assert.equal(upstream.seen[n]?.headers['service-personid'], person);
  assert.equal(upstream.seen[n]?.headers['authorization'], `Bearer ${token}`);
});

test('every bad token is refused with 401 before the upstream sees it', async () => {
  const [h, p, s] = token.split('.') as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));

  clock.advance(-3 * 24 * 3600_000);
  const expired = await mint(person);
  clock.advance(3 * 24 * 3600_000);
  const expiredExp = JSON.parse(Buffer.from(expired.split('.')[1]!, 'base64url').toString()).exp as number;
  assert.ok(expiredExp * 1000 < Date.now() - 60_000, 'the token really is expired');

  const jwksDoc = (await (await fetch(`${server.base}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
  const serviceJwk = jwksDoc.keys.find((k) => k.kid === header.kid) as JWK;
  const publicPem = await exportSPKI((await importJWK(serviceJwk, serviceJwk.alg)) as Parameters<typeof exportSPKI>[0]);
  const hs256 = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: header.kid }).sign(new TextEncoder().encode(publicPem));
  const own = await generateKeyPair('ES256');
  const unknownKid = await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: 'not-a-key-of-the-service' }).sign(own.privateKey);
  const sameKidOtherKey = await new SignJWT(payload).setProtectedHeader({ alg: header.alg, kid: header.kid }).sign(own.privateKey);

  const cases: Array<[string, string | undefined, string]> = [
    ['no token', undefined, '/api/x'],
    ['garbage', 'not.a.token', '/api/x'],
    ['expired', expired, '/api/x'],
    ['alg none', `${b64({ alg: 'none', kid: header.kid })}.${p}.`, '/api/x'],
    ['HS256 keyed with the public key', hs256, '/api/x'],
    ['unknown kid', unknownKid, '/api/x'],
    ['the right kid, another key', sameKidOtherKey, '/api/x'],
    ['tampered payload', `${h}.${b64({ ...payload, sub: 'someone-else' })}.${s}`, '/api/x'],
    ['another organization', token, '/other-org/x'],
    ['another issuer', token, '/other-issuer/x'],
  ];
  const n = upstream.seen.length;
  for (const [what, bad, path] of cases) {
    const res = await call(path, bad);
    assert.equal(res.status, 401, `${what}: ${res.body}`);
    assert.match(res.headers.get('www-authenticate') ?? '', what === 'no token' ? /^Bearer$/ : /invalid_token/, what);
  }
  assert.equal(upstream.seen.length, n, 'the upstream saw none of them');
});

test('OPTIONS is validated like any method; a URL with the plugin switched off needs no token', async () => {
  assert.equal((await call('/api/x', undefined, 'OPTIONS')).status, 401);
  assert.equal((await call('/public/x', undefined)).status, 200);
});

test('required_groups: 403 until the person is in the group', async () => {
  assert.equal((await call('/admins/x', token)).status, 403);
  assert.equal((await server.client.post('/groups', { name: 'admins' })).status, 201);
  assert.equal((await server.client.put(`/persons/${person}/groups`, { groups: ['admins'] })).status, 200);
  assert.equal((await call('/admins/x', await mint(person))).status, 200);
});

test('key rotation: a token of the new key is accepted after one JWKS refetch, seen as a round trip in GateRequestHandled', async () => {
  const sub = await Subscriber.open(server.base);
  try {
    const rotated = await server.client.as('', '').post('/ops/keys/rotate', undefined, { 'Service-Operator-Key': OPERATOR_KEY });
    assert.equal(rotated.status, 201, rotated.text);
    const fresh = await mint(person);
    assert.equal(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString()).kid, rotated.body.result.kid);
    assert.equal((await call('/api/rotated', fresh)).status, 200);
    assert.equal((await call('/api/rotated-again', fresh)).status, 200);
    const handled = (path: string) => sub.frames.map((f) => f.event).find((e) => e.event_metadata.event_name === 'GateRequestHandled_v1' && e.http_request_metadata.url.endsWith(path));
    await sub.waitUntil(() => handled('/api/rotated-again') !== undefined, 30_000, 'both requests reported');
    const first = handled('/api/rotated');
    const trips = first.plugins[0].round_trips.map((t: any) => t.http_request_metadata.url as string);
    assert.equal(trips.filter((u: string) => u.endsWith('/.well-known/jwks.json')).length, 1, JSON.stringify(trips));
    assert.deepEqual(handled('/api/rotated-again').plugins[0].round_trips, [], 'the second request uses the cached keys');
  } finally {
    await sub.close();
  }
});

test('third-party issuer: jwks_url, issuer and audience checked; exp required; nbf honoured', async () => {
  const now = Math.floor(Date.now() / 1000);
  const sign = (claims: Record<string, unknown>, kid = 'third-1') => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid }).sign(thirdKey);
  const good = { iss: 'https://third.example', aud: 'gate-api', sub: 'u1', exp: now + 600 };
  assert.equal((await call('/third/x', await sign(good))).status, 200);
  const n = upstream.seen.length;
  for (const [what, claims] of [
    ['wrong issuer', { ...good, iss: 'https://evil.example' }],
    ['wrong audience', { ...good, aud: 'other-api' }],
    ['no exp', { iss: good.iss, aud: good.aud, sub: 'u1' }],
    ['expired', { ...good, exp: now - 600 }],
    ['nbf in the future', { ...good, nbf: now + 600 }],
  ] as const) {
    assert.equal((await call('/third/x', await sign(claims))).status, 401, what);
  }
  assert.equal(upstream.seen.length, n);
});

test('a verified token is served from the cache, but never past its exp', async () => {
  const exp = Math.floor(Date.now() / 1000) + 5;
  const shortLived = await new SignJWT({ iss: 'https://third.example', aud: 'gate-api', sub: 'u2', exp }).setProtectedHeader({ alg: 'ES256', kid: 'third-1' }).sign(thirdKey);
  assert.equal((await call('/third/short', shortLived)).status, 200);
  assert.equal((await call('/third/short', shortLived)).status, 200);
  await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 1100));
  assert.equal((await call('/third/short', shortLived)).status, 401);
});

test('with revocation_check, a token revoked at the service is refused; without it, it passes until it leaves the cache', async () => {
  const fresh = await mint(person);
  assert.equal((await call('/checked/x', fresh)).status, 200);
  assert.equal((await call('/api/x', fresh)).status, 200);
  const revoked = await server.client.post('/token/revoke', { token: fresh });
  assert.equal(revoked.status, 204, revoked.text);
  // the per-URL parameters make a plugin of their own, with its own cache: a token it verified is asked about again
  // once that cache lets it go; a token it has not seen is asked about at once
  const another = await mint(person);
  await server.client.post('/token/revoke', { token: another });
  const n = upstream.seen.length;
  const res = await call('/checked/x', another);
  assert.equal(res.status, 401, res.body);
  assert.equal((await call('/api/x', another)).status, 200, 'offline validation cannot know of the revocation');
  assert.equal(upstream.seen.length, n + 1, 'the upstream saw only the unchecked request');
});
