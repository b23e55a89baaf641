// The sign-in throttle holds under concurrency: each attempt is counted before its password hash is computed,
// so guesses sent all at once are not all evaluated while the first hashes run; a success takes its count back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, recordEvents, signIn } from '../support/auth.js';

const PASSWORD = 'the right password 1';

let server: TestServer;
let events: ReturnType<typeof recordEvents>;

before(async () => {
  server = await startTestServer({ SERVICE_AUTH_THROTTLE_PER_HANDLE: '10', SERVICE_AUTH_THROTTLE_PER_IP: '10' });
  events = recordEvents(server);
});
after(() => server.stop());

const statuses = (replies: Array<{ status: number }>) => replies.map((r) => r.status);
const evaluated = (all: number[]) => all.filter((s) => s !== 429).length;

test('60 concurrent guesses at one handle against a limit of 10: at most 10 are evaluated, the rest answered 429', async () => {
  const org = await newOrg(server, 'throttle-handle');
  await personWithPassword(org, 'target@example.com', PASSWORD);
  // The right password among them, as an attacker's list would hold it; past the limit it is not even tried.
  const guesses = Array.from({ length: 60 }, (_, i) => (i === 59 ? PASSWORD : `wrong guess ${i}`));
  const all = statuses(await Promise.all(guesses.map((g) => signIn(org, 'target@example.com', g))));
  assert.ok(evaluated(all) <= 10, `${evaluated(all)} of 60 were evaluated: ${all.join(' ')}`);
  assert.equal(all.filter((s) => s === 429).length, 60 - evaluated(all), 'nothing but 429 for the others');
  assert.ok(events(org.id, 'AuthenticationFailed_v1').length <= 10);
});

test('60 concurrent guesses at 60 handles from one address against a limit of 10: at most 10 are evaluated', async () => {
  const org = await newOrg(server, 'throttle-ip');
  const all = statuses(await Promise.all(Array.from({ length: 60 }, (_, i) => signIn(org, `person${i}@example.com`, `wrong guess ${i}`))));
  assert.ok(evaluated(all) <= 10, `${evaluated(all)} of 60 were evaluated: ${all.join(' ')}`);
});

test('successful sign-ins take their reservation back: more than the limit in a row all succeed', async () => {
  const org = await newOrg(server, 'throttle-success');
  await personWithPassword(org, 'often@example.com', PASSWORD);
  for (let i = 0; i < 15; i += 1) assert.equal((await signIn(org, 'often@example.com', PASSWORD)).status, 200, `sign-in ${i}`);
  assert.equal((await signIn(org, 'often@example.com', 'wrong')).status, 401, 'the failures still count from zero');
});
