// TOTP as a second factor, against an independent implementation: the codes are made by Debian's oathtool
// (RFC 6238) for the service's clock, which the test moves. Enrollment with the person's own token, a first
// code confirming it, then password sign-in answering a challenge and /authenticate/totp the token; reused,
// two-steps-old and wrong codes refused, throttled per person; recovery codes single-use; the secret sealed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectError, expectResult } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { movableClock } from '../support/clock.js';
import { newOrg, personWithPassword, recordEvents, sameOrgOn, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { TOTP_FAILURES_PER_WINDOW } from '../../src/auth/totp.js';

const clock = movableClock();
const dir = tempDir();
const KEY = randomBytes(32).toString('hex');
let server: TestServer;
let events: ReturnType<typeof recordEvents>;

/** The code oathtool makes for the secret at `epochMs`. */
function oathtool(secret: string, epochMs: number): string {
  return execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(epochMs / 1000)}`], { encoding: 'utf8' }).trim();
}

/** Moves the clock to 5 s into a time step, so a code made now stays in its step while the test runs. */
function startOfStep(): void {
  clock.advance(35_000 - (clock.nowMs() % 30_000));
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Second {
  challenge: string;
  methods: string[];
  expires_in: number;
}

/** A person with a password and a confirmed TOTP credential: its secret, and the recovery codes. */
async function enrolled(org: Org, email: string): Promise<{ person: string; secret: string; recovery: string[]; credential_id: string }> {
  const person = await personWithPassword(org, email, 'correct horse battery');
  const { token } = expectResult<{ token: string }>(await signIn(org, email, 'correct horse battery'), 200);
  const enrollment = expectResult<{ credential_id: string; key_uri: string; qr_code_svg: string }>(await org.user.post('/register/totp', {}, bearer(token)), 201);
  const uri = new URL(enrollment.key_uri);
  assert.equal(uri.protocol, 'otpauth:');
  assert.equal(uri.host, 'totp');
  const secret = uri.searchParams.get('secret') as string;
  assert.match(secret, /^[A-Z2-7]{32}$/);
  assert.match(enrollment.qr_code_svg, /^<svg[\s\S]*<\/svg>\s*$/);
  // Until confirmed, the password alone still signs in.
  expectResult<{ token: string }>(await signIn(org, email, 'correct horse battery'), 200);
  startOfStep();
  const wrong = await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: oathtool(secret, clock.nowMs() - 120_000) }, bearer(token));
  expectError(wrong, 400, 'code');
  const { recovery_codes } = expectResult<{ recovery_codes: string[] }>(
    await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: oathtool(secret, clock.nowMs()) }, bearer(token)),
    200,
  );
  assert.equal(recovery_codes.length, 10);
  assert.equal(new Set(recovery_codes).size, 10);
  return { person, secret, recovery: recovery_codes, credential_id: enrollment.credential_id };
}

async function challenge(org: Org, email: string): Promise<Second> {
  const r = expectResult<{ second_factor: Second }>(await signIn(org, email, 'correct horse battery'), 200);
  assert.deepEqual(r.second_factor.methods, ['totp']);
  assert.equal('token' in r, false);
  return r.second_factor;
}

before(async () => {
  server = await startTestServer({ SERVICE_SECRETS_KEY: KEY }, { clock }, dir);
  events = recordEvents(server);
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

describe('TOTP second factor', () => {
  test("oathtool's code is accepted once; the same code again and a code two steps old are refused; the token lists both factors", async () => {
    const org = await newOrg(server, 'totp');
    const { person, secret } = await enrolled(org, 'ada@example.com');
    // The confirming code's step is used: the next sign-in needs a later one.
    clock.advance(30_000);
    const first = await challenge(org, 'ada@example.com');
    const code = oathtool(secret, clock.nowMs());
    const r = await org.user.post('/authenticate/totp', { challenge: first.challenge, code });
    const { token } = expectResult<{ token: string }>(r, 200);
    const claims = await verifyIdentityToken(server, token);
    assert.equal(claims.sub, person);
    assert.deepEqual(claims['authenticated_methods'], ['password', 'totp']);
    const succeeded = events(org.id, 'AuthenticationSucceeded_v1').at(-1) as Record<string, any>;
    assert.equal(succeeded['success_authn_method'], 'totp');
    assert.deepEqual(succeeded['authenticated_methods'], ['password', 'totp']);

    // Reused: the same code, a fresh challenge.
    const again = await challenge(org, 'ada@example.com');
    expectError(await org.user.post('/authenticate/totp', { challenge: again.challenge, code }), 401, 'not valid');
    // Two steps old: refused even though never used.
    clock.advance(30_000);
    const old = oathtool(secret, clock.nowMs() - 60_000);
    expectError(await org.user.post('/authenticate/totp', { challenge: again.challenge, code: old }), 401, 'not valid');
    const failed = events(org.id, 'AuthenticationFailed_v1').at(-1) as Record<string, any>;
    assert.equal(failed['failed_authn_method'], 'totp');
    // One step old, not used yet: within the window.
    clock.advance(30_000);
    expectResult(await org.user.post('/authenticate/totp', { challenge: again.challenge, code: oathtool(secret, clock.nowMs() - 30_000) }), 200);
  });

  test('two requests with one code: one token', async () => {
    const org = await newOrg(server, 'totp-race');
    const { secret } = await enrolled(org, 'bo@example.com');
    clock.advance(30_000);
    const c = await challenge(org, 'bo@example.com');
    const code = oathtool(secret, clock.nowMs());
    const answers = await Promise.all([1, 2, 3].map(() => org.user.post('/authenticate/totp', { challenge: c.challenge, code })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401]);
  });

  test(`per person: after ${TOTP_FAILURES_PER_WINDOW} wrong codes a 429, even with the right code, until the window passes`, async () => {
    const org = await newOrg(server, 'totp-throttle');
    const { secret } = await enrolled(org, 'cy@example.com');
    clock.advance(30_000);
    const c = await challenge(org, 'cy@example.com');
    const right = oathtool(secret, clock.nowMs());
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < TOTP_FAILURES_PER_WINDOW; i++) expectError(await org.user.post('/authenticate/totp', { challenge: c.challenge, code: wrong }), 401);
    const throttled = await org.user.post('/authenticate/totp', { challenge: c.challenge, code: right });
    expectError(throttled, 429, 'too many');
    assert.ok(Number(throttled.headers.get('retry-after')) > 0);
    clock.advance(301_000);
    startOfStep();
    const later = await challenge(org, 'cy@example.com');
    expectResult(await org.user.post('/authenticate/totp', { challenge: later.challenge, code: oathtool(secret, clock.nowMs()) }), 200);
  });

  test('recovery codes: each signs in once, instead of a code; regenerated on request, the old ones void; listed as the totp credential', async () => {
    const org = await newOrg(server, 'totp-recovery');
    const { person, recovery, credential_id } = await enrolled(org, 'di@example.com');
    const c = await challenge(org, 'di@example.com');
    const { token } = expectResult<{ token: string }>(await org.user.post('/authenticate/totp', { challenge: c.challenge, recovery_code: recovery[0] }), 200);
    assert.deepEqual((await verifyIdentityToken(server, token))['authenticated_methods'], ['password', 'totp']);
    expectError(await org.user.post('/authenticate/totp', { challenge: c.challenge, recovery_code: recovery[0] }), 401);
    const listed = expectResult<Array<Record<string, unknown>>>(await org.admin.get(`/persons/${person}/credentials`), 200);
    const totp = listed.find((x) => x['type'] === 'totp') as Record<string, any>;
    assert.equal(totp['id'], credential_id);
    assert.deepEqual(totp['params'], { recovery_codes_total: 10, recovery_codes_unused: 9 });
    const { recovery_codes } = expectResult<{ recovery_codes: string[] }>(await org.user.post('/register/totp/recovery-codes', {}, bearer(token)), 200);
    assert.equal(recovery_codes.length, 10);
    expectError(await org.user.post('/authenticate/totp', { challenge: c.challenge, recovery_code: recovery[1] }), 401);
    expectResult(await org.user.post('/authenticate/totp', { challenge: c.challenge, recovery_code: recovery_codes[0] }), 200);
    // Deleted, the password alone signs in again.
    assert.equal((await org.admin.delete(`/persons/${person}/credentials/${credential_id}`)).status, 204);
    expectResult<{ token: string }>(await signIn(org, 'di@example.com', 'correct horse battery'), 200);
  });

  test('a forged or expired challenge is a 400; a challenge of another organization too', async () => {
    const org = await newOrg(server, 'totp-challenge');
    const other = await newOrg(server, 'totp-other');
    const { secret } = await enrolled(org, 'ed@example.com');
    clock.advance(30_000);
    const c = await challenge(org, 'ed@example.com');
    const code = oathtool(secret, clock.nowMs());
    expectError(await org.user.post('/authenticate/totp', { challenge: `${c.challenge}x`, code }), 400, 'challenge');
    expectError(await other.user.post('/authenticate/totp', { challenge: c.challenge, code }), 400, 'challenge');
    expectError(await org.user.post('/authenticate/totp', { challenge: c.challenge }), 400, 'code');
    clock.advance((c.expires_in + 1) * 1000);
    expectError(await org.user.post('/authenticate/totp', { challenge: c.challenge, code: oathtool(secret, clock.nowMs()) }), 400, 'expired');
  });

  test('the secret is sealed at rest: the data files never hold it', async () => {
    const org = await newOrg(server, 'totp-sealed');
    const { secret } = await enrolled(org, 'fa@example.com');
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      try {
        assert.equal(readFileSync(path).includes(secret), false, `${name} holds the TOTP secret`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EISDIR') throw error;
      }
    }
  });

  test('after a restart the secret opens with the same key, a used step stays used and a used recovery code stays used', async () => {
    let org = await newOrg(server, 'totp-restart');
    const { secret, recovery } = await enrolled(org, 'gu@example.com');
    clock.advance(30_000);
    const code = oathtool(secret, clock.nowMs());
    expectResult(await org.user.post('/authenticate/totp', { challenge: (await challenge(org, 'gu@example.com')).challenge, code }), 200);
    expectResult(await org.user.post('/authenticate/totp', { challenge: (await challenge(org, 'gu@example.com')).challenge, recovery_code: recovery[0] }), 200);
    await server.stop();
    server = await startTestServer({ SERVICE_SECRETS_KEY: KEY }, { clock }, dir);
    org = sameOrgOn(server, org);
    expectError(await org.user.post('/authenticate/totp', { challenge: (await challenge(org, 'gu@example.com')).challenge, code }), 401);
    expectError(await org.user.post('/authenticate/totp', { challenge: (await challenge(org, 'gu@example.com')).challenge, recovery_code: recovery[0] }), 401);
    clock.advance(30_000);
    expectResult(await org.user.post('/authenticate/totp', { challenge: (await challenge(org, 'gu@example.com')).challenge, code: oathtool(secret, clock.nowMs()) }), 200);
  });
});
