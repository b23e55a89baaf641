import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { decodeProtectedHeader, type JWTPayload } from 'jose';
import { startReceiver, type Receiver } from '../../scripts/webhook-receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { emailHandle, newOrg, personWithPassword, recordEvents, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { startFaultReceiver, type FaultReceiver } from '../support/receivers.js';
import { freePort } from '../support/free-port.js';

const RFC3339_FRACTION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/;
const strict = { additionalProperties: false } as const;

// The seed's "Webhook delivery token" and token_minted trigger_content, every claim and type, nothing else.
const TriggerContent = Type.Object(
  {
    aud: Type.String(),
    sub: Type.String(),
    iss: Type.String(),
    authentications: Type.Array(
      Type.Object(
        {
          handle: Type.Object({ type: Type.Literal('email_address'), value: Type.String() }, strict),
          method: Type.Literal('password'),
          timestamp: Type.String({ pattern: RFC3339_FRACTION.source }),
        },
        strict,
      ),
      { minItems: 1 },
    ),
    first_token: Type.Boolean(),
    groups_claim_name: Type.String(),
    region: Type.String(),
    request_metadata: Type.Object({ client_ip_address: Type.String(), origin: Type.String(), user_agent: Type.String() }, strict),
  },
  strict,
);
const DeliveryToken = Type.Object(
  {
    aud: Type.String(),
    exp: Type.Integer(),
    iat: Type.Integer(),
    iss: Type.String(),
    jti: Type.String({ minLength: 1 }),
    sub: Type.String(),
    target_url: Type.String(),
    trigger_content: TriggerContent,
    trigger_name: Type.Literal('token_minted'),
    trigger_type: Type.Literal('sync_hook'),
    webhook_id: Type.String(),
  },
  strict,
);
type Delivery = Static<typeof DeliveryToken>;

const PASSWORD = 'correct horse battery';
const HEADERS = { 'User-Agent': 'sync-hook-test/1.0', Origin: 'https://app.example' };

/** A token_minted hook; its timeout, unless given, is one a busy machine's receiver cannot exceed (the default is 2 s). */
async function addHook(org: Org, target_url: string, extra: Record<string, unknown> = {}): Promise<string> {
  const w = await org.admin.post('/organizations/webhooks', { name: 'token hook', target_url, timeout: '10s', ...extra });
  assert.equal(w.status, 201, w.text);
  const t = await org.admin.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' });
  assert.equal(t.status, 201, t.text);
  return w.body.result.id as string;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe('the token_minted sync hook', () => {
  let server: TestServer;
  let faults: FaultReceiver;
  let events: ReturnType<typeof recordEvents>;
  const receivers: Receiver[] = [];
  before(async () => {
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
    events = recordEvents(server);
    faults = await startFaultReceiver();
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await faults.close();
    await server.stop();
  });

  /** The sample receiver: verifies each call as the seed says, then checks the whole token against the seed. */
  async function verifyingReceiver(org: Org, claims: Record<string, unknown>, path = '/hook') {
    const deliveries: Delivery[] = [];
    const problems: string[] = [];
    const receiver = await startReceiver({
      serviceUrl: server.base,
      orgId: org.id,
      path,
      claims: (payload: JWTPayload) => {
        if (!Value.Check(DeliveryToken, payload)) problems.push(...[...Value.Errors(DeliveryToken, payload)].map((e) => `${e.path}: ${e.message}`));
        deliveries.push(payload as Delivery);
        return claims;
      },
    });
    receivers.push(receiver);
    return { receiver, deliveries, problems };
  }

  test('a verified call carries exactly the seed claims, and its answer ends up in the signed token', async () => {
    const org = await newOrg(server);
    const personId = await personWithPassword(org, 'ada@example.com', PASSWORD);
    await org.admin.post('/groups', { name: 'admins' });
    await org.admin.put(`/persons/${personId}/groups`, { groups: ['admins'] });
    const answer = { plan: 'pro', limits: { seats: 5 }, tags: ['a', 'b'], sub: 'forged', aud: 'forged', groups: ['root'], roles: ['x'], person_id: 'forged' };
    const { receiver, deliveries, problems } = await verifyingReceiver(org, answer);
    const webhookId = await addHook(org, receiver.url, { custom_headers: { 'X-Tenant': ['t1'] } });

    const beforeS = Math.floor(Date.now() / 1000);
    const r = await signIn(org, 'ada@example.com', PASSWORD, HEADERS);
    const afterS = Math.floor(Date.now() / 1000);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(problems, []);
    assert.equal(deliveries.length, 1);
    const d = deliveries[0] as Delivery;
    assert.equal(d.aud, org.id);
    assert.equal(d.iss, server.service.issuer);
    assert.equal(d.sub, personId);
    assert.equal(d.exp, d.iat + 300);
    assert.ok(d.iat >= beforeS && d.iat <= afterS, `iat ${d.iat} outside the sign-in's ${beforeS}..${afterS}`);
    assert.equal(d.target_url, receiver.url);
    assert.equal(d.webhook_id, webhookId);
    assert.deepEqual(d.trigger_content, {
      aud: org.id,
      sub: personId,
      iss: server.service.issuer,
      authentications: [{ handle: emailHandle('ada@example.com'), method: 'password', timestamp: d.trigger_content.authentications[0]?.timestamp }],
      first_token: true,
      groups_claim_name: 'groups',
      region: 'europe-belgium',
      request_metadata: { client_ip_address: '127.0.0.1', origin: 'https://app.example', user_agent: 'sync-hook-test/1.0' },
    });

    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.equal(claims.plan, 'pro');
    assert.deepEqual(claims.limits, { seats: 5 });
    assert.deepEqual(claims.tags, ['a', 'b']);
    assert.equal(claims.sub, personId, 'reserved claims from the hook are dropped');
    assert.equal(claims.aud, org.id);
    assert.equal(claims.person_id, personId);
    assert.deepEqual(claims['groups'], ['admins'], "the groups claim is the person's, not the hook's");
    assert.equal(claims['roles'], undefined);

    // The second sign-in is not the first token, and the hook is told so.
    const again = await signIn(org, 'ada@example.com', PASSWORD, HEADERS);
    assert.equal(again.status, 200);
    assert.equal(deliveries[1]?.trigger_content.first_token, false);
    const second = await verifyIdentityToken(server, again.body.result.token);
    assert.equal(second.prev_token_id, claims.jti);
    const minted = events(org.id, 'TokenMinted_v1');
    assert.equal(minted.length, 2);
    assert.equal(minted[0]?.['token_id'], claims.jti);
  });

  test('two first sign-ins at once: the hooks of both are told first_token, and exactly one token says it', async () => {
    const org = await newOrg(server);
    const personId = await personWithPassword(org, 'twice@example.com', PASSWORD);
    const deliveries: Delivery[] = [];
    let bothArrived: () => void = () => {};
    const barrier = new Promise<void>((resolve) => (bothArrived = resolve));
    const receiver = await startReceiver({
      serviceUrl: server.base,
      orgId: org.id,
      // Each call waits for the other, so both sign-ins are in their hook phase together.
      claims: async (payload) => {
        deliveries.push(payload as Delivery);
        if (deliveries.length === 2) bothArrived();
        await Promise.race([barrier, new Promise((r) => setTimeout(r, 10_000))]);
        return {};
      },
    });
    receivers.push(receiver);
    await addHook(org, receiver.url);
    const answers = await Promise.all([signIn(org, 'twice@example.com', PASSWORD, HEADERS), signIn(org, 'twice@example.com', PASSWORD, HEADERS)]);
    for (const r of answers) assert.equal(r.status, 200, r.text);
    assert.deepEqual(deliveries.map((d) => d.trigger_content.first_token), [true, true]);
    const tokens = await Promise.all(answers.map((r) => verifyIdentityToken(server, r.body.result.token)));
    const first = tokens.filter((t) => t['first_token'] === true);
    assert.equal(first.length, 1, 'one token is the first');
    const [later] = tokens.filter((t) => t['first_token'] === false);
    assert.equal(later?.prev_token_id, first[0]?.jti, 'the other follows it');
    const minted = events(org.id, 'TokenMinted_v1').filter((e) => e['person_id'] === personId);
    assert.deepEqual(minted.map((e) => e['first_token']).sort(), [false, true], 'the events agree with the tokens');
  });

  test('the sample receiver verifies calls that arrive together before it has the key set, instead of refusing all but one', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'pair@example.com', PASSWORD);
    // A real delivery, caught by a plain receiver; the sample receiver then takes its URL as its own.
    const target = faults.url('/claims/caught');
    await addHook(org, target);
    assert.equal((await signIn(org, 'pair@example.com', PASSWORD, HEADERS)).status, 200);
    const delivery = faults.received.find((r) => r.path === '/claims/caught');
    assert.ok(delivery);
    const port = await freePort();
    receivers.push(await startReceiver({ serviceUrl: server.base, orgId: org.id, port, publicUrl: target, claims: () => ({ ok: true }) }));
    const send = () => fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/jwt' }, body: delivery.body });
    // All reach it while it fetches the verification keys for the first time.
    const answers = await Promise.all([send(), send(), send()]);
    assert.deepEqual(await Promise.all(answers.map((a) => a.json())), [{ ok: true }, { ok: true }, { ok: true }]);
  });

  test('registration calls the hook for the person about to be created', async () => {
    const org = await newOrg(server);
    const { receiver, deliveries, problems } = await verifyingReceiver(org, { tier: 'new' });
    await addHook(org, receiver.url);
    const r = await org.user.post('/register/password', { handle: emailHandle('new@example.com'), password: PASSWORD }, HEADERS);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(problems, []);
    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.equal(claims.tier, 'new');
    assert.equal(deliveries[0]?.sub, claims.sub);
    assert.equal(deliveries[0]?.trigger_content.first_token, true);
    const person = await org.admin.get(`/persons/${String(claims.sub)}`);
    assert.equal(person.status, 200);
  });

  test('the sample receiver rejects a call for another URL or another organization with 401', async () => {
    const org = await newOrg(server);
    const { receiver, deliveries } = await verifyingReceiver(org, { never: true }, '/mine');
    await personWithPassword(org, 'bob@example.com', PASSWORD);
    // Registered at a path of the receiver that is not its own URL: the target_url check fails.
    const id = await addHook(org, receiver.url.replace('/mine', '/not-mine'), { on_failure: 'continue' });
    const r = await signIn(org, 'bob@example.com', PASSWORD);
    assert.equal(r.status, 200);
    assert.equal((await verifyIdentityToken(server, r.body.result.token)).never, undefined);
    await org.admin.delete(`/organizations/webhooks/${id}`);

    // A receiver of another organization gets a token whose aud is not its organization.
    const stranger = await newOrg(server, 'stranger');
    await personWithPassword(stranger, 'eve@example.com', PASSWORD);
    await addHook(stranger, receiver.url);
    const blocked = await signIn(stranger, 'eve@example.com', PASSWORD);
    assert.equal(blocked.status, 502);
    assert.equal(deliveries.length, 0, 'nothing passed verification');
    const failed = events(stranger.id, 'AuthenticationFailed_v1').at(-1);
    assert.match(String(failed?.['failure_detail']), /answered 401/);
  });

  const TIMEOUT_MS = 500;
  // For receivers that do answer: far more than a busy machine needs, so their failure is never a timeout.
  const ANSWER_TIMEOUT = '10s';
  // Far beyond the timeout, so that an answer before it shows the call gave up, however busy the machine.
  const SLEEP_MS = 30_000;
  const misbehaving: Array<[string, string]> = [
    ['answers 401', '/status/401'],
    ['answers 500', '/status/500'],
    ['answers 302 (not followed)', '/redirect'],
    ['sleeps past the timeout', `/sleep/${SLEEP_MS}`],
    ['answers garbage', '/garbage'],
    ['answers a JSON array', '/array'],
    ['answers more than 64 KiB', '/big'],
  ];

  for (const onFailure of ['block', 'continue'] as const) {
    for (const [behaviour, path] of misbehaving) {
      test(`a receiver that ${behaviour}, with on_failure ${onFailure}`, async () => {
        const org = await newOrg(server);
        await personWithPassword(org, 'cy@example.com', PASSWORD);
        const sleeps = path.startsWith('/sleep/');
        const webhookId = await addHook(org, faults.url(path), { timeout: sleeps ? `${TIMEOUT_MS}ms` : ANSWER_TIMEOUT, on_failure: onFailure });
        const { value: r, ms } = await timed(() => signIn(org, 'cy@example.com', PASSWORD));
        assert.ok(ms < SLEEP_MS, `took ${Math.round(ms)} ms: the call waited for the receiver`);
        // Less a little for the timers' millisecond granularity.
        if (sleeps) assert.ok(ms >= TIMEOUT_MS - 10, `took ${Math.round(ms)} ms: gave up before the timeout`);
        if (onFailure === 'block') {
          assert.equal(r.status, 502, r.text);
          const failed = events(org.id, 'AuthenticationFailed_v1');
          assert.equal(failed.length, 1);
          assert.equal(failed[0]?.['failure_reason'], 'hook_failed');
          assert.match(String(failed[0]?.['failure_detail']), new RegExp(`webhook ${webhookId}`));
          assert.equal(events(org.id, 'TokenMinted_v1').length, 0);
        } else {
          assert.equal(r.status, 200, r.text);
          const claims = await verifyIdentityToken(server, r.body.result.token);
          assert.equal(claims['slept'], undefined);
          assert.equal(claims['redirected'], undefined);
          assert.equal(events(org.id, 'AuthenticationSucceeded_v1').length, 1);
        }
      });
    }

    test(`a receiver that answers 403 denies the sign-in, with on_failure ${onFailure}`, async () => {
      const org = await newOrg(server);
      const personId = await personWithPassword(org, 'dee@example.com', PASSWORD);
      const webhookId = await addHook(org, faults.url('/status/403'), { timeout: ANSWER_TIMEOUT, on_failure: onFailure });
      const r = await signIn(org, 'dee@example.com', PASSWORD);
      assert.equal(r.status, 401);
      assert.equal(r.body.errors[0].message, 'authentication was denied');
      const failed = events(org.id, 'AuthenticationFailed_v1');
      assert.equal(failed.length, 1);
      assert.equal(failed[0]?.['failure_reason'], 'hook_denied');
      assert.equal(failed[0]?.['person_id'], personId);
      assert.match(String(failed[0]?.['failure_detail']), new RegExp(`webhook ${webhookId}.*403`));
      assert.equal(events(org.id, 'TokenMinted_v1').length, 0);
    });
  }

  test('the delivery is a POST of application/jwt with the custom headers, its kid in the verification keys', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'hdr@example.com', PASSWORD);
    await addHook(org, faults.url('/claims/hdr'), { custom_headers: { Authorization: ['Bearer receiver-secret'], 'X-Tenant': ['a', 'b'] } });
    assert.equal((await signIn(org, 'hdr@example.com', PASSWORD)).status, 200);
    const seen = faults.received.filter((r) => r.path === '/claims/hdr').at(-1);
    assert.ok(seen);
    assert.equal(seen.headers['content-type'], 'application/jwt');
    assert.equal(seen.headers['authorization'], 'Bearer receiver-secret');
    assert.equal(seen.headers['x-tenant'], 'a, b');
    const { alg, kid } = decodeProtectedHeader(seen.body);
    assert.equal(alg, 'ES256');
    const keys = (await org.user.get('/organizations/webhooks/verification-jwks')).body.keys as Array<{ kid: string }>;
    assert.ok(keys.some((k) => k.kid === kid));
  });

  test('several hooks run concurrently within one budget, and their claims are merged', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'multi@example.com', PASSWORD);
    // Each of three hooks is answered only once all three calls are in flight together: one after another,
    // the first would wait for the others until its timeout, and the sign-in would fail.
    const group = `multi-${org.id}`;
    for (const name of ['first', 'second', 'third']) await addHook(org, faults.url(`/gather/${group}/3/${name}`));
    await addHook(org, faults.url('/claims/fourth'));
    const r = await signIn(org, 'multi@example.com', PASSWORD);
    assert.equal(r.status, 200, r.text);
    assert.equal(faults.gathered(group), 3, 'the receiver held all three calls at once');
    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.deepEqual([claims['first'], claims['second'], claims['third'], claims['fourth']], [true, true, true, true]);
  });

  test('an organization without token_minted hooks calls nothing; event triggers are not sync hooks', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'none@example.com', PASSWORD);
    const w = await org.admin.post('/organizations/webhooks', { name: 'events only', target_url: faults.url('/status/500') });
    await org.admin.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' });
    const before = faults.received.length;
    assert.equal((await signIn(org, 'none@example.com', PASSWORD)).status, 200);
    assert.equal(faults.received.length, before);
  });

  test('failures are counted in /metrics by reason', async () => {
    const text = (await server.client.get('/metrics')).text;
    const counts = Object.fromEntries([...text.matchAll(/^(webhook_call\w+_total\{[^}]*\}) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    const at = (series: string) => counts[`webhook_call${series}`] ?? 0;
    const failures = (reason: string) => at(`_failures_total{trigger="token_minted",reason="${reason}"}`);
    // Each misbehaviour ran once per on_failure value; the sample receiver's two 401s count as status.
    assert.equal(failures('timeout'), 2, JSON.stringify(counts));
    assert.equal(failures('status'), 8, JSON.stringify(counts));
    assert.equal(failures('invalid_body'), 4, JSON.stringify(counts));
    assert.equal(failures('too_large'), 2, JSON.stringify(counts));
    assert.equal(at('s_total{trigger="token_minted",outcome="denied"}'), 2, JSON.stringify(counts));
    assert.equal(at('s_total{trigger="token_minted",outcome="failed"}'), 16, JSON.stringify(counts));
  });
});

describe('the token_minted sync hook without SERVICE_WEBHOOK_ALLOW_INSECURE', () => {
  let server: TestServer;
  let faults: FaultReceiver;
  before(async () => {
    faults = await startFaultReceiver();
    // receiver.test stands for a public host name whose DNS answer is a loopback address.
    server = await startTestServer({}, { resolveHost: async () => [{ address: '127.0.0.1', family: 4 }] });
  });
  after(async () => {
    await server.stop();
    await faults.close();
  });

  test('a target resolving to loopback is refused at connect time, and the refusal is counted', async () => {
    const org = await newOrg(server);
    const events = recordEvents(server);
    await personWithPassword(org, 'ssrf@example.com', PASSWORD);
    const id = await addHook(org, `https://receiver.test:${faults.port}/claims/ssrf`);
    const connections = faults.connections;
    const r = await signIn(org, 'ssrf@example.com', PASSWORD);
    assert.equal(r.status, 502);
    assert.equal(faults.connections, connections, 'no connection reached the receiver');
    assert.match(String(events(org.id, 'AuthenticationFailed_v1')[0]?.['failure_detail']), new RegExp(`webhook ${id}.*no public address`));
    const metrics = (await server.client.get('/metrics')).text;
    assert.match(metrics, /^webhook_call_failures_total\{trigger="token_minted",reason="forbidden_address"\} 1$/m);
  });
});
