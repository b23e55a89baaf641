// Identity tokens over HTTP, checked as a relying party would: jose against the key set fetched from the service.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { movableClock } from '../support/clock.js';
import { email, removeDir, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';

const OPERATOR_KEY = 'operator-key-for-tests-0123456789';
const RFC3339_NANOS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;

async function createPerson(server: TestServer, address: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await server.client.post('/persons', { ...email(address), ...extra });
  assert.equal(r.status, 201, r.text);
  return r.body.result.person_id as string;
}

async function mint(server: TestServer, personId: string, body?: unknown): Promise<string> {
  const r = await server.client.post(`/persons/${personId}/mint-token`, body);
  assert.equal(r.status, 201, r.text);
  assert.equal(typeof r.body.result, 'string');
  return r.body.result as string;
}

async function validate(server: TestServer, token: string) {
  const r = await server.client.as('', '').post('/token/validate', { token });
  assert.equal(r.status, 200, r.text);
  return r.body.result as { valid: boolean; invalidity_reason?: string; expires_in_seconds?: number; expires_at?: string };
}

/** The relying party's view: discovery document, then the key set it names, then jose. */
async function verifyAsRelyingParty(server: TestServer, token: string) {
  const discovery = await server.client.as('', '').get('/.well-known/openid-configuration');
  assert.equal(discovery.status, 200);
  const jwks = createRemoteJWKSet(new URL(discovery.body.jwks_uri as string), { cooldownDuration: 0 });
  return jwtVerify(token, jwks, { issuer: discovery.body.issuer as string, audience: ROOT_ORG, algorithms: discovery.body.id_token_signing_alg_values_supported as string[] });
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

for (const alg of ['ES256', 'RS256', 'EdDSA']) {
  test(`${alg}: minted tokens verify against the published key set`, async () => {
    // The service's wall clock, moved forward below to see the token's remaining life count down.
    const clock = movableClock();
    const server = await startTestServer({ SERVICE_TOKEN_ALG: alg }, { clock });
    const seconds = () => Math.floor(clock.nowMs() / 1000);
    try {
      const discovery = await server.client.as('', '').get('/.well-known/openid-configuration');
      assert.equal(discovery.body.issuer, server.service.issuer);
      assert.equal(discovery.body.issuer, server.base, 'with SERVICE_PORT=0 the issuer carries the real port');
      assert.deepEqual(discovery.body.id_token_signing_alg_values_supported, [alg]);
      const keys = await server.client.as('', '').get('/.well-known/jwks.json');
      assert.equal(keys.body.keys.length, 1);
      assert.equal(keys.body.keys[0].alg, alg);
      assert.equal(keys.body.keys[0].use, 'sig');
      assert.equal(typeof keys.body.keys[0].kid, 'string');

      await server.client.post('/groups', { name: 'staff' });
      const personId = await createPerson(server, `${alg.toLowerCase()}@example.com`, { groups: ['staff'] });
      const mintedFrom = seconds();
      const token = await mint(server, personId);
      const mintedTo = seconds();
      const { payload, protectedHeader } = await verifyAsRelyingParty(server, token);
      assert.equal(protectedHeader.alg, alg);
      assert.equal(protectedHeader.kid, keys.body.keys[0].kid);
      assert.equal(payload.sub, personId);
      assert.equal(payload['person_id'], personId);
      assert.equal(payload['oid'], ROOT_ORG);
      assert.deepEqual(payload['authenticated_methods'], ['api']);
      assert.equal(payload['first_token'], false);
      assert.equal(payload['region'], 'europe-belgium');
      assert.deepEqual(payload['groups'], ['staff']);
      const iat = payload.iat as number;
      const exp = payload.exp as number;
      assert.ok(iat >= mintedFrom && iat <= mintedTo, `iat ${iat} outside the request's ${mintedFrom}..${mintedTo}`);
      assert.equal(exp - iat, 86400);
      clock.advance(3_600_000);
      const validatedFrom = seconds();
      const verdict = await validate(server, token);
      const validatedTo = seconds();
      assert.equal(verdict.valid, true);
      assert.equal(verdict.expires_at, new Date(exp * 1000).toISOString());
      // What is left when the service validated it, an hour later: however long the requests took.
      const left = verdict.expires_in_seconds as number;
      assert.ok(left >= exp - validatedTo && left <= exp - validatedFrom, `${left} s left, not within ${exp - validatedTo}..${exp - validatedFrom}`);
      assert.ok(left <= 86400 - 3600, `${left} s left an hour after minting`);
    } finally {
      await server.stop();
      removeDir(server.dataDir);
    }
  });
}

describe('mint-token and validation', () => {
  let server: TestServer;
  let personId: string;
  before(async () => {
    server = await startTestServer({ SERVICE_OPERATOR_KEY: OPERATOR_KEY }, { operatorKey: OPERATOR_KEY });
    personId = await createPerson(server, 'grace@example.com');
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  test('each token names the previous one, and each is recorded as a TokenMinted event', async () => {
    const before = server.service.wal.events(ROOT_ORG, 1, 1000).length;
    const first = decodeJwt(await mint(server, personId));
    const second = decodeJwt(await mint(server, personId, {}));
    assert.equal('prev_token_id' in first, false, 'the first token has no predecessor');
    assert.equal(second['prev_token_id'], first.jti);
    assert.equal(second['first_token'], false);

    const events = server.service.wal.events(ROOT_ORG, 1, 1000).slice(before).map((e) => e.event as Record<string, any>);
    assert.deepEqual(events.map((e) => e['event_metadata'].event_name), ['TokenMinted_v1', 'TokenMinted_v1']);
    const [e1, e2] = events;
    assert.equal(e1?.['token_id'], first.jti);
    assert.equal(e2?.['token_id'], second.jti);
    for (const [e, claims] of [[e1, first], [e2, second]] as const) {
      assert.equal(e?.['person_id'], personId);
      assert.equal(e?.['mint_token_api'], true);
      assert.equal(e?.['first_token'], false);
      assert.deepEqual(e?.['authentications'], []);
      assert.match(e?.['issued_at'], RFC3339_NANOS);
      assert.match(e?.['expires_at'], RFC3339_NANOS);
      assert.equal(Math.floor(Date.parse(e?.['issued_at']) / 1000), claims.iat);
      assert.equal(Date.parse(e?.['expires_at']) / 1000, claims.exp);
      assert.equal(e?.['event_metadata'].organization_id, ROOT_ORG);
    }
  });

  test('concurrent mints for one person still form a single chain', async () => {
    const id = await createPerson(server, 'chain@example.com');
    const tokens = await Promise.all(Array.from({ length: 20 }, () => mint(server, id)).map(async (t) => decodeJwt(await t)));
    const prevs = tokens.map((t) => t['prev_token_id']);
    assert.equal(prevs.filter((p) => p === undefined).length, 1, 'exactly one token starts the chain');
    const jtis = new Set(tokens.map((t) => t.jti));
    const named = prevs.filter((p): p is string => p !== undefined);
    assert.equal(new Set(named).size, 19, 'no token is named as predecessor twice');
    for (const p of named) assert.ok(jtis.has(p));
    const person = server.service.registry.get(ROOT_ORG)?.state.persons.get(id);
    assert.equal(person?.token_count, 20);
    assert.ok(jtis.has(person?.last_token_id) && !named.includes(person?.last_token_id as string), 'the last token is the chain end');
  });

  test('custom claims are added after the standard ones; reserved names are refused, naming the claim', async () => {
    const claims = decodeJwt(await mint(server, personId, { custom_claims: { plan: 'pro', limits: { seats: 3 } } }));
    assert.equal(claims['plan'], 'pro');
    assert.deepEqual(claims['limits'], { seats: 3 });
    assert.deepEqual(Object.keys(claims).slice(-2), ['plan', 'limits']);
    const events = server.service.wal.events(ROOT_ORG, 1, 1000).length;

    for (const name of ['sub', 'groups', 'prev_token_id', 'gdpr_consent']) {
      const r = await server.client.post(`/persons/${personId}/mint-token`, { custom_claims: { plan: 'x', [name]: 'y' } });
      assert.equal(r.status, 400, name);
      assert.match(r.body.errors[0].message, new RegExp(`"${name}" is a reserved claim`));
    }
    for (const body of [{ custom_claims: ['a'] }, { custom_claims: 'a' }, { custom_claims: null }, { other: 1 }]) {
      const r = await server.client.post(`/persons/${personId}/mint-token`, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0].message, /custom_claims|other/);
    }
    const malformed = await server.client.post(`/persons/${personId}/mint-token`, '{"custom_claims":');
    assert.equal(malformed.status, 400);
    const huge = await server.client.post(`/persons/${personId}/mint-token`, { custom_claims: { blob: 'x'.repeat(20_000) } });
    assert.equal(huge.status, 400);
    assert.match(huge.body.errors[0].message, /custom_claims/);
    assert.equal(server.service.wal.events(ROOT_ORG, 1, 1000).length, events, 'refused requests record nothing');
  });

  test('unknown persons are 404, inactive ones 400, and tokens of a deactivated or deleted person stop validating', async () => {
    const unknown = await server.client.post('/persons/no-such-person/mint-token');
    assert.equal(unknown.status, 404);
    const id = await createPerson(server, 'leaving@example.com');
    const token = await mint(server, id);
    assert.equal((await validate(server, token)).valid, true);
    assert.equal((await server.client.patch(`/persons/${id}`, { active: false })).status, 200);
    assert.deepEqual(await validate(server, token), { valid: false, invalidity_reason: 'person_not_active' });
    const refused = await server.client.post(`/persons/${id}/mint-token`);
    assert.equal(refused.status, 400);
    assert.match(refused.body.errors[0].message, /not active/);
    assert.equal((await server.client.patch(`/persons/${id}`, { active: true })).status, 200);
    assert.equal((await validate(server, token)).valid, true);
    assert.equal((await server.client.delete(`/persons/${id}`)).status, 204);
    assert.deepEqual(await validate(server, token), { valid: false, invalidity_reason: 'person_not_active' });
  });

  test('validation refuses forged and altered tokens', async () => {
    const token = await mint(server, personId);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = decodeJwt(token);
    const { kid } = decodeProtectedHeader(token);
    const invalid = { valid: false, invalidity_reason: 'invalid_token_content' };

    const otherPayload = b64({ ...claims, sub: 'someone-else', person_id: 'someone-else' });
    assert.deepEqual(await validate(server, `${header}.${otherPayload}.${signature}`), invalid, 'payload swapped');
    const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
    assert.deepEqual(await validate(server, `${header}.${payload}.${flipped}`), invalid, 'signature altered');
    assert.deepEqual(await validate(server, `${b64({ alg: 'none', typ: 'JWT', kid })}.${payload}.`), invalid, 'alg none');

    // HS256 keyed with our public key, in every form an attacker could fetch it in.
    const jwk = (await server.client.get('/.well-known/jwks.json')).body.keys[0] as JWK;
    const pem = createPublicKey({ key: jwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
    for (const secret of [pem, JSON.stringify(jwk)]) {
      const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: kid as string }).sign(new TextEncoder().encode(secret));
      assert.deepEqual(await validate(server, hs), invalid, 'HS256 with the public key');
    }

    // A key the token names itself (jku, jwk, x5u) is never used, with our kid or the attacker's own.
    const attacker = await generateKeyPair('ES256');
    const attackerJwk = await exportJWK(attacker.publicKey);
    for (const extra of [{ jku: 'http://127.0.0.1:9/jwks.json' }, { jwk: attackerJwk }, { x5u: 'http://127.0.0.1:9/cert.pem' }]) {
      for (const k of [kid as string, 'attacker-key']) {
        const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: k, ...extra }).sign(attacker.privateKey);
        assert.deepEqual(await validate(server, forged), invalid, `${Object.keys(extra)[0]} with kid ${k}`);
      }
    }
    for (const garbage of ['', 'not-a-jwt', 'a.b.c', `${header}.${payload}`]) assert.deepEqual(await validate(server, garbage), invalid, garbage);
    assert.equal((await validate(server, token)).valid, true, 'the untouched token is still valid');
  });

  test('a token without sub, exp or iat is refused even when we signed it', async () => {
    const keys = server.service.tokens.keys;
    for (const drop of ['sub', 'exp', 'iat']) {
      const claims: Record<string, unknown> = { ...decodeJwt(await mint(server, personId)) };
      delete claims[drop];
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: keys.current().kid }).sign(keys.current().privateKey);
      assert.deepEqual(await validate(server, token), { valid: false, invalidity_reason: 'invalid_token_content' }, drop);
    }
  });

  test('the validate body must carry a token string; the answer needs no organization header', async () => {
    const anonymous = server.client.as('', '');
    for (const body of [{}, { token: 42 }, { token: null }]) {
      const r = await anonymous.post('/token/validate', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0].message, /token/);
    }
    assert.equal((await anonymous.post('/token/validate')).status, 400);
  });

  test('after a rotation old tokens still verify, new ones carry the new kid', async () => {
    const old = await mint(server, personId);
    const oldKid = decodeProtectedHeader(old).kid;
    const anonymous = server.client.as('', '');
    assert.equal((await anonymous.post('/ops/keys/rotate')).status, 401);
    assert.equal((await anonymous.post('/ops/keys/rotate', undefined, { 'Service-Operator-Key': 'wrong' })).status, 401);
    const rotated = await anonymous.post('/ops/keys/rotate', undefined, { 'Service-Operator-Key': OPERATOR_KEY });
    assert.equal(rotated.status, 201, rotated.text);
    assert.notEqual(rotated.body.result.kid, oldKid);

    const fresh = await mint(server, personId);
    assert.equal(decodeProtectedHeader(fresh).kid, rotated.body.result.kid);
    const published = (await anonymous.get('/.well-known/jwks.json')).body.keys.map((k: JWK) => k.kid);
    assert.deepEqual(published, [rotated.body.result.kid, oldKid]);
    for (const token of [old, fresh]) {
      await verifyAsRelyingParty(server, token);
      assert.equal((await validate(server, token)).valid, true);
    }
  });
});

test('operator endpoints are absent without an operator key', async () => {
  const server = await startTestServer();
  try {
    const r = await server.client.post('/ops/keys/rotate', undefined, { 'Service-Operator-Key': 'anything' });
    assert.equal(r.status, 404);
  } finally {
    await server.stop();
    removeDir(server.dataDir);
  }
});

test('tokens expire, retired keys drop out of the set once their tokens have, and the chain survives a restart', async () => {
  const clock = movableClock();
  let server = await startTestServer({ SERVICE_TOKEN_TTL: '60' }, { clock, operatorKey: OPERATOR_KEY });
  const dataDir = server.dataDir;
  try {
    const personId = await createPerson(server, 'ttl@example.com');
    const first = await mint(server, personId);
    const oldKid = decodeProtectedHeader(first).kid;
    const verdict = await validate(server, first);
    assert.equal(verdict.valid, true);
    assert.ok((verdict.expires_in_seconds as number) >= 59 && (verdict.expires_in_seconds as number) <= 60, String(verdict.expires_in_seconds));

    const rotated = await server.client.post('/ops/keys/rotate', undefined, { 'Service-Operator-Key': OPERATOR_KEY });
    assert.equal(rotated.status, 201);
    clock.advance(30_000);
    const verdict30 = await validate(server, first);
    assert.ok(verdict30.valid && (verdict30.expires_in_seconds as number) <= 30);

    await server.stop();
    server = await startTestServer({ SERVICE_TOKEN_TTL: '60' }, { clock, operatorKey: OPERATOR_KEY }, dataDir);
    const second = await mint(server, personId);
    assert.equal(decodeJwt(second)['prev_token_id'], decodeJwt(first).jti, 'the last token id is durable');
    assert.equal(server.service.registry.get(ROOT_ORG)?.state.persons.get(personId)?.token_count, 2);

    // 61 s: the first token has expired, and with it the reason to publish the key that signed it.
    clock.advance(31_000);
    const kids = (await server.client.get('/.well-known/jwks.json')).body.keys.map((k: JWK) => k.kid);
    assert.deepEqual(kids, [rotated.body.result.kid], `retired key ${oldKid} is gone`);
    assert.equal((await validate(server, first)).valid, false);
    assert.equal((await validate(server, second)).valid, true);
    clock.advance(30_000);
    assert.deepEqual(await validate(server, second), { valid: false, invalidity_reason: 'expired' });
  } finally {
    await server.stop();
    removeDir(dataDir);
  }
});

test('a token from another issuer is refused as such', async () => {
  let server = await startTestServer({ SERVICE_ISSUER: 'https://id-a.example' });
  const dataDir = server.dataDir;
  try {
    const personId = await createPerson(server, 'issuer@example.com');
    const token = await mint(server, personId);
    assert.equal(decodeJwt(token).iss, 'https://id-a.example');
    assert.equal((await validate(server, token)).valid, true);
    await server.stop();
    server = await startTestServer({ SERVICE_ISSUER: 'https://id-b.example' }, {}, dataDir);
    assert.deepEqual(await validate(server, token), { valid: false, invalidity_reason: 'invalid_issuer' });
    const jwk = (await server.client.get('/.well-known/jwks.json')).body.keys[0] as JWK;
    await jwtVerify(token, await importJWK(jwk), { issuer: 'https://id-a.example' });
  } finally {
    await server.stop();
    removeDir(dataDir);
  }
});
