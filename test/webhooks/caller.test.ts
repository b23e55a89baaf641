import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAddressGuard, type Resolver } from '../../src/lib/address-guard.js';
import { WebhookCallError, createWebhookCaller, type WebhookCaller } from '../../src/webhooks/caller.js';
import { startFaultReceiver, type FaultReceiver } from '../support/receivers.js';

// receiver.test stands for a public name whose DNS answer points at loopback.
const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

let receiver: FaultReceiver;
let strict: WebhookCaller;
let insecure: WebhookCaller;
before(async () => {
  receiver = await startFaultReceiver();
  strict = createWebhookCaller({ guard: createAddressGuard({ allowInsecure: false, resolver: toLoopback }) });
  insecure = createWebhookCaller({ guard: createAddressGuard({ allowInsecure: true, resolver: toLoopback }) });
});
after(async () => {
  await strict.close();
  await insecure.close();
  await receiver.close();
});

const post = (caller: WebhookCaller, path: string, timeoutMs = 2000) =>
  caller.post({ url: `http://receiver.test:${receiver.port}${path}`, headers: { 'X-Tenant': ['a', 'b'], Authorization: ['Bearer s3cret'] }, body: 'h.p.s', timeoutMs });

async function failure(promise: Promise<unknown>): Promise<WebhookCallError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof WebhookCallError, String(error));
    return error;
  }
  assert.fail('the call succeeded');
}

test('a name resolving to loopback is refused when connecting: nothing reaches the receiver', async () => {
  const before = receiver.connections;
  const e = await failure(post(strict, '/claims/x'));
  assert.equal(e.reason, 'forbidden_address');
  assert.equal(receiver.connections, before);
});

test('the call is a POST of the JWT with Content-Type application/jwt and the custom headers, to the original host', async () => {
  const r = await post(insecure, '/claims/ok');
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.body.toString()), { ok: true });
  const seen = receiver.received.at(-1);
  assert.ok(seen);
  assert.equal(seen.body, 'h.p.s');
  assert.equal(seen.headers['content-type'], 'application/jwt');
  assert.equal(seen.headers['host'], `receiver.test:${receiver.port}`);
  assert.equal(seen.headers['x-tenant'], 'a, b');
  assert.equal(seen.headers['authorization'], 'Bearer s3cret');
});

test('redirects are answered, not followed', async () => {
  const count = receiver.received.length;
  const r = await post(insecure, '/redirect');
  assert.equal(r.status, 302);
  assert.equal(receiver.received.length, count + 1);
});

test('at most 64 KiB of a response is read', async () => {
  assert.equal((await failure(post(insecure, '/big'))).reason, 'too_large');
});

test('a call past its timeout fails as a timeout, promptly', async () => {
  const started = performance.now();
  // The receiver would answer after 30 s: failing well before shows the call gave up at its timeout.
  const e = await failure(post(insecure, '/sleep/30000', 300));
  const elapsed = performance.now() - started;
  assert.equal(e.reason, 'timeout');
  assert.ok(elapsed < 10_000, `took ${Math.round(elapsed)} ms`);
});

test('connections are kept alive and reused', async () => {
  await post(insecure, '/claims/a');
  const before = receiver.connections;
  for (let i = 0; i < 5; i++) assert.equal((await post(insecure, '/claims/b')).status, 200);
  assert.equal(receiver.connections, before);
});

test('a refused connection is a connection failure', async () => {
  const closed = await startFaultReceiver();
  const port = closed.port;
  await closed.close();
  const e = await failure(insecure.post({ url: `http://127.0.0.1:${port}/`, headers: {}, body: 'x', timeoutMs: 1000 }));
  assert.equal(e.reason, 'connection');
});
