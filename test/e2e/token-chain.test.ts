// prev_token_id links each of a person's tokens to the one before, also when sign-ins and mint-token calls
// for the same person run concurrently: every token follows exactly one other, and none is followed twice;
// and a sign-in's token says first_token exactly when it starts the chain (mint-token's always say false).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, signIn } from '../support/auth.js';

let server: TestServer;
before(async () => {
  server = await startTestServer({ SERVICE_AUTH_THROTTLE_PER_IP: '1000' });
});
after(() => server.stop());

test('concurrent sign-ins and mints of one person form one chain of prev_token_id', async () => {
  const org = await newOrg(server);
  const password = 'correct horse battery';
  const id = await personWithPassword(org, 'chain@example.com', password);
  const calls = Array.from({ length: 12 }, (_, i) =>
    i % 2 === 0 ? signIn(org, 'chain@example.com', password) : org.admin.post(`/persons/${id}/mint-token`, {}),
  );
  const tokens = (await Promise.all(calls)).map((r) => {
    assert.ok(r.status === 200 || r.status === 201, r.text);
    return decodeJwt((r.body.result.token ?? r.body.result) as string);
  });
  const jtis = new Set(tokens.map((t) => t.jti));
  const prevs = tokens.map((t) => t['prev_token_id'] as string | undefined);
  assert.equal(prevs.filter((p) => p === undefined).length, 1, 'exactly one token starts the chain');
  for (const [i, t] of tokens.entries()) {
    const starts = t['prev_token_id'] === undefined;
    assert.equal(t['first_token'], i % 2 === 0 && starts, `${i % 2 === 0 ? 'sign-in' : 'mint-token'} token ${i}: first_token`);
  }
  const linked = prevs.filter((p): p is string => p !== undefined);
  assert.equal(new Set(linked).size, linked.length, 'no token is followed by two');
  for (const p of linked) assert.ok(jtis.has(p), 'each prev_token_id names a token of this run');
});
