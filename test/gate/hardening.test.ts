// What a caller of Gate must not be able to choose: the Service-PersonID upstreams trust, passing validate-jwt
// with an OPTIONS request, and (behind a trusted proxy) its own address, by writing X-Forwarded-For entries.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gateDoc, startEchoUpstream, startTestGate, type EchoUpstream } from '../support/gate.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let upstream: EchoUpstream;
let gate: Awaited<ReturnType<typeof startTestGate>>;

before(async () => {
  server = await startTestServer();
  upstream = await startEchoUpstream();
  gate = await startTestGate(
    gateDoc(server.base, {
      trust_proxy: true,
      default: { target: upstream.base },
      urls: [
        { pattern: '*/open/*', plugins: { jwt: { enabled: false } } },
        { pattern: '*/preflight/*', plugins: { jwt: { parameters: { skip_options: true } } } },
        { pattern: '*/limited/*', plugins: { jwt: { enabled: false }, 'ip-limit': { enabled: true } } },
      ],
      plugins: [
        { id: 'jwt', type: 'validate-jwt', parameters: { forward_person_id: true } },
        { id: 'ip-limit', type: 'ratelimit', enabled: false, parameters: { limits: [{ key: 'ip', interval: '1h', burst: 1 }] } },
      ],
    }),
  );
});
after(async () => {
  await gate.close();
  await upstream.close();
  await server.stop();
});

const call = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${gate.base}${path}`, init);
  await res.arrayBuffer();
  return res.status;
};

test("a caller's own Service-PersonID never reaches the upstream", async () => {
  const before = upstream.seen.length;
  assert.equal(await call('/open/x', { headers: { 'Service-PersonID': 'someone-else' } }), 200);
  const seen = upstream.seen.slice(before);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]?.headers['service-personid'], undefined);
});

test('OPTIONS is validated like any method unless the URL sets skip_options', async () => {
  const before = upstream.seen.length;
  assert.equal(await call('/api/x', { method: 'OPTIONS' }), 401);
  assert.equal(upstream.seen.length, before, 'the upstream saw the unvalidated OPTIONS request');
  assert.equal(await call('/preflight/x', { method: 'OPTIONS' }), 200);
});

test('with trust_proxy the client is the rightmost X-Forwarded-For hop: entries the client wrote change nothing', async () => {
  assert.equal(await call('/limited/x', { headers: { 'X-Forwarded-For': '198.51.100.1, 203.0.113.9' } }), 200);
  // The same client (as the trusted proxy appended it) with another address of its own choosing on the left.
  assert.equal(await call('/limited/x', { headers: { 'X-Forwarded-For': '198.51.100.2, 203.0.113.9' } }), 429);
  assert.equal(await call('/limited/x', { headers: { 'X-Forwarded-For': '203.0.113.10' } }), 200);
});
