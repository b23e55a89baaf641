// One-time codes and links as sign-in methods: by email through a real SMTP receiver on loopback, by SMS
// through a loopback HTTP receiver that verifies each message's signature against the webhook key set. Each
// value signs in once, with the ticket of the browser that asked (a link opened elsewhere asks for
// confirmation), expires with the service's clock, and asking or guessing is throttled per handle and address.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { movableClock } from '../support/clock.js';
import { expectError, expectResult } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp.js';
import { emailHandle, newOrg, recordEvents, sameOrgOn, verifyIdentityToken, type Org } from '../support/auth.js';
import { ONE_TIME_PER_HANDLE } from '../../src/auth/one-time-codes.js';

const TTL_S = 600;
const clock = movableClock();
const dir = tempDir();
let smtp: SmtpReceiver;
let server: TestServer;
let events: ReturnType<typeof recordEvents>;

/** The SMS receiver: keeps each message whose signature checks out against the published key set. */
const sms: { server?: Server; url: string; received: JWTPayload[]; rejected: string[] } = { url: '', received: [], rejected: [] };

function startSmsReceiver(): Promise<void> {
  sms.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          assert.equal(req.headers['content-type'], 'application/jwt');
          const body = Buffer.concat(chunks).toString('utf8');
          const { payload } = await jwtVerify(body, await verificationKeys(String(JSON.parse(Buffer.from(body.split('.')[1] as string, 'base64url').toString()).aud)), {
            algorithms: ['ES256'],
            issuer: server.service.issuer,
          });
          sms.received.push(payload);
          res.writeHead(202).end();
        } catch (error) {
          sms.rejected.push((error as Error).message);
          res.writeHead(401).end();
        }
      })();
    });
  });
  return new Promise((resolve) =>
    sms.server!.listen(0, '127.0.0.1', () => {
      sms.url = `http://127.0.0.1:${(sms.server!.address() as AddressInfo).port}/sms`;
      resolve();
    }),
  );
}

async function verificationKeys(org: string) {
  const r = await fetch(`${server.base}/organizations/webhooks/verification-jwks`, { headers: { 'Service-OrgID': org } });
  return createLocalJWKSet((await r.json()) as { keys: [] });
}

const start = () =>
  startTestServer(
    { SERVICE_ISSUER: 'https://id.example', SERVICE_SMTP_URL: smtp.url, SERVICE_SMS_URL: sms.url, SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_ONE_TIME_CODE_TTL: String(TTL_S) },
    { clock },
    dir,
  );

before(async () => {
  smtp = await startSmtpReceiver();
  await startSmsReceiver();
  server = await start();
  events = recordEvents(server);
});
after(async () => {
  await server.stop();
  await smtp.close();
  await new Promise((resolve) => sms.server!.close(resolve));
  removeDir(dir);
});

const phoneHandle = (value: string) => ({ type: 'phone_number', value });

async function person(org: Org, handles: unknown[]): Promise<string> {
  return expectResult<{ person_id: string }>(await org.admin.post('/persons', { handles }), 201).person_id;
}

/** Asks for a value to be sent; answers the ticket. */
async function ask(org: Org, method: string, handle: unknown): Promise<string> {
  const r = expectResult<{ ticket: string; expires_in: number }>(await org.user.post(`/authenticate/${method}/start`, { handle }), 202);
  assert.equal(r.expires_in, TTL_S);
  return r.ticket;
}

const lastMail = () => smtp.received.at(-1)!;
const codeIn = (text: string) => /\b([0-9]{6})\b/.exec(text)?.[1] as string;
const linkTokenIn = (text: string, method: string) => {
  const m = new RegExp(`(https://id\\.example/authenticate/${method}\\?token=[\\w-]+)`).exec(text);
  assert.ok(m, `no link in: ${text}`);
  return new URL(m[1] as string).searchParams.get('token') as string;
};

describe('one-time codes and links', () => {
  test('an email code signs in once, with the ticket of the browser that asked; no event carries the code', async () => {
    const org = await newOrg(server, 'Codes Co');
    const id = await person(org, [emailHandle('ada@example.com')]);
    const before = smtp.received.length;
    const ticket = await ask(org, 'otp_via_email', emailHandle('ada@example.com'));
    assert.equal(smtp.received.length, before + 1);
    assert.deepEqual(lastMail().to, ['ada@example.com']);
    assert.equal(lastMail().subject, 'Your sign-in code');
    const code = codeIn(lastMail().text);
    assert.match(code, /^[0-9]{6}$/);

    // Without the ticket that asked, or another ticket, the code is nothing.
    const other = await ask(org, 'otp_via_email', emailHandle('ada@example.com'));
    expectError(await org.user.post('/authenticate/otp_via_email', { ticket: other, code }), 401, 'not valid');

    const { token } = expectResult<{ token: string }>(await org.user.post('/authenticate/otp_via_email', { ticket, code }), 200);
    const claims = await verifyIdentityToken(server, token);
    assert.equal(claims.sub, id);
    assert.deepEqual(claims['authenticated_methods'], ['otp_via_email']);
    assert.match(JSON.stringify(events(org.id)), /"otp_via_email"/, 'the sign-in is recorded with its method');

    // Reuse refused, and recorded with the browser SDK's failure reason.
    expectError(await org.user.post('/authenticate/otp_via_email', { ticket, code }), 401, 'already used');
    assert.match(JSON.stringify(events(org.id)), /incorrect_otp_code_via_email/);
    assert.doesNotMatch(JSON.stringify(events(org.id)), new RegExp(`"${code}"`), 'no event carries the code');
  });

  test('a code expires with the clock; a forged ticket is a 400; a handle nobody holds gets the same answer and no mail', async () => {
    const org = await newOrg(server, 'Expiry Co');
    await person(org, [emailHandle('bo@example.com')]);
    const ticket = await ask(org, 'otp_via_email', emailHandle('bo@example.com'));
    const code = codeIn(lastMail().text);
    clock.advance((TTL_S + 1) * 1000);
    expectError(await org.user.post('/authenticate/otp_via_email', { ticket, code }), 400, 'ticket');
    // A ticket still live but a value past its time: the state's own expiry.
    expectError(await org.user.post('/authenticate/otp_via_email', { ticket: 'x.y', code }), 400, 'ticket');

    const before = smtp.received.length;
    await ask(org, 'otp_via_email', emailHandle('nobody@example.com'));
    assert.equal(smtp.received.length, before, 'nothing sent');
    expectError(await org.user.post('/authenticate/otp_via_email/start', { handle: phoneHandle('+15550001') }), 400, 'email_address');
  });

  test('an email link signs in the browser that asked; opened elsewhere it asks for confirmation; once', async () => {
    const org = await newOrg(server, 'Links Co');
    const id = await person(org, [emailHandle('cy@example.com')]);
    const ticket = await ask(org, 'email_link', emailHandle('cy@example.com'));
    const token = linkTokenIn(lastMail().text, 'email_link');
    assert.equal(lastMail().subject, 'Your sign-in link');

    expectError(await org.user.post('/authenticate/email_link', { token }), 409, 'confirm');
    const signed = expectResult<{ token: string }>(await org.user.post('/authenticate/email_link', { token, ticket }), 200);
    assert.equal((await verifyIdentityToken(server, signed.token)).sub, id);
    expectError(await org.user.post('/authenticate/email_link', { token, ticket }), 401, 'already used');

    // Another browser, confirming.
    await ask(org, 'email_link', emailHandle('cy@example.com'));
    const second = linkTokenIn(lastMail().text, 'email_link');
    const confirmed = expectResult<{ token: string }>(await org.user.post('/authenticate/email_link', { token: second, confirm: true }), 200);
    assert.deepEqual((await verifyIdentityToken(server, confirmed.token))['authenticated_methods'], ['email_link']);
  });

  test('SMS codes and links go to SERVICE_SMS_URL, signed like webhook deliveries', async () => {
    const org = await newOrg(server, 'Texts Co');
    const id = await person(org, [phoneHandle('+15550100')]);
    const ticket = await ask(org, 'otp_via_sms', phoneHandle('+15550100'));
    assert.deepEqual(sms.rejected, []);
    const message = sms.received.at(-1)!;
    assert.equal(message.aud, org.id);
    assert.equal(message['to'], '+15550100');
    const code = codeIn(String(message['text']));
    const { token } = expectResult<{ token: string }>(await org.user.post('/authenticate/otp_via_sms', { ticket, code }), 200);
    assert.equal((await verifyIdentityToken(server, token)).sub, id);
    expectError(await org.user.post('/authenticate/otp_via_sms', { ticket, code }), 401);

    const linkTicket = await ask(org, 'sms_link', phoneHandle('+15550100'));
    const linkToken = linkTokenIn(String(sms.received.at(-1)!['text']), 'sms_link');
    // An SMS link's token is not an email link's, nor a direct-id.
    expectError(await org.user.post('/authenticate/email_link', { token: linkToken, ticket: linkTicket }), 401, 'not valid');
    expectError(await org.user.post('/authenticate/direct-id', { direct_id: linkToken }), 401);
    expectResult(await org.user.post('/authenticate/sms_link', { token: linkToken, ticket: linkTicket }), 200);
  });

  test('asking and wrong codes are throttled per handle (429 with Retry-After), then free again after the window', async () => {
    const org = await newOrg(server, 'Throttle Co');
    await person(org, [emailHandle('di@example.com')]);
    const ticket = await ask(org, 'otp_via_email', emailHandle('di@example.com'));
    const code = codeIn(lastMail().text);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 1; i < ONE_TIME_PER_HANDLE; i++) expectError(await org.user.post('/authenticate/otp_via_email', { ticket, code: wrong }), 401);
    const throttled = await org.user.post('/authenticate/otp_via_email', { ticket, code });
    expectError(throttled, 429, 'retry later');
    assert.ok(Number(throttled.headers.get('retry-after')) >= 1);
    expectError(await org.user.post('/authenticate/otp_via_email/start', { handle: emailHandle('di@example.com') }), 429);
    // Another handle from the same address is not held up by this one.
    await person(org, [emailHandle('ed@example.com')]);
    await ask(org, 'otp_via_email', emailHandle('ed@example.com'));
    clock.advance(301_000);
    expectResult(await org.user.post('/authenticate/otp_via_email', { ticket: await ask(org, 'otp_via_email', emailHandle('di@example.com')), code: codeIn(lastMail().text) }), 200);
  });

  test('two requests with one code at once get one token; a configuration without the method refuses it (403)', async () => {
    const org = await newOrg(server, 'Race Co');
    await person(org, [emailHandle('gu@example.com')]);
    const ticket = await ask(org, 'otp_via_email', emailHandle('gu@example.com'));
    const code = codeIn(lastMail().text);
    const answers = await Promise.all([0, 1, 2].map(() => org.user.post('/authenticate/otp_via_email', { ticket, code })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 401, 401]);

    const r = await org.admin.patch('/organizations/config', { allowed_factor_methods: ['password'] });
    assert.equal(r.status, 200, r.text);
    const before = smtp.received.length;
    expectError(await org.user.post('/authenticate/otp_via_email/start', { handle: emailHandle('gu@example.com') }), 403, 'otp_via_email');
    assert.equal(smtp.received.length, before, 'nothing sent');
  });

  test('a person holding TOTP answers a challenge after the email code; the token names both factors; the code is used up then', async () => {
    const org = await newOrg(server, 'Two Factor Co');
    await person(org, [emailHandle('ha@example.com')]);
    const first = await ask(org, 'otp_via_email', emailHandle('ha@example.com'));
    const { token } = expectResult<{ token: string }>(await org.user.post('/authenticate/otp_via_email', { ticket: first, code: codeIn(lastMail().text) }), 200);
    const bearer = { authorization: `Bearer ${token}` };
    const enrollment = expectResult<{ credential_id: string; key_uri: string }>(await org.user.post('/register/totp', {}, bearer), 201);
    const secret = new URL(enrollment.key_uri).searchParams.get('secret') as string;
    const totp = () => execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(clock.nowMs() / 1000)}`], { encoding: 'utf8' }).trim();
    clock.advance(35_000 - (clock.nowMs() % 30_000));
    expectResult(await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: totp() }, bearer), 200);

    const ticket = await ask(org, 'otp_via_email', emailHandle('ha@example.com'));
    const code = codeIn(lastMail().text);
    const { second_factor } = expectResult<{ second_factor: { challenge: string; methods: string[] } }>(await org.user.post('/authenticate/otp_via_email', { ticket, code }), 200);
    assert.deepEqual(second_factor.methods, ['totp']);
    clock.advance(30_000);
    const both = expectResult<{ token: string }>(await org.user.post('/authenticate/totp', { challenge: second_factor.challenge, code: totp() }), 200);
    assert.deepEqual((await verifyIdentityToken(server, both.token))['authenticated_methods'], ['otp_via_email', 'totp']);
    expectError(await org.user.post('/authenticate/otp_via_email', { ticket, code }), 401);
  });

  test('an unused code survives a restart, and a used one stays used', async () => {
    const org = await newOrg(server, 'Restart Co');
    await person(org, [emailHandle('fa@example.com')]);
    const ticket = await ask(org, 'otp_via_email', emailHandle('fa@example.com'));
    const code = codeIn(lastMail().text);
    const used = await ask(org, 'otp_via_email', emailHandle('fa@example.com'));
    const usedCode = codeIn(lastMail().text);
    expectResult(await org.user.post('/authenticate/otp_via_email', { ticket: used, code: usedCode }), 200);
    await server.stop();
    server = await start();
    const again = sameOrgOn(server, org);
    expectError(await again.user.post('/authenticate/otp_via_email', { ticket: used, code: usedCode }), 401);
    expectResult(await again.user.post('/authenticate/otp_via_email', { ticket, code }), 200);
  });
});
