// Password reset by mail: a single-use, expiring link delivered to a real SMTP receiver, completed at the
// end-user page; used, expired and forged links refused, also after a restart; the used link on the replica.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { movableClock } from '../support/clock.js';
import { expectError, expectNoContent, unchanged } from '../support/expect.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';
import { ALL_REGIONS, OPERATOR_KEY } from '../support/regions.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { resetLink, startSmtpReceiver, type SmtpReceiver } from '../support/smtp.js';
import { emailHandle, newOrg, personWithPassword, recordEvents, sameOrgOn, signIn, type Org } from '../support/auth.js';

const OLD = 'old password 1234';
const NEW = 'new password 5678';
const TTL_S = 3600;
const clock = movableClock();
const dir = tempDir();
let smtp: SmtpReceiver;
let server: TestServer;
let events: ReturnType<typeof recordEvents>;
let org: Org;

// A fixed issuer: the links name it, and a restart listens on another port.
const start = () =>
  startTestServer({ SERVICE_REGIONS: 'europe-belgium,us-iowa', SERVICE_ISSUER: 'https://id.example', SERVICE_SMTP_URL: smtp.url, SERVICE_SMTP_FROM: 'accounts@id.example' }, { operatorKey: OPERATOR_KEY, clock }, dir);

before(async () => {
  smtp = await startSmtpReceiver();
  server = await start();
  events = recordEvents(server);
  org = await newOrg(server, 'Resetting Co');
});
after(async () => {
  await server.stop();
  await smtp.close();
  removeDir(dir);
});

/** Asks for a reset link for the person and returns the link the receiver got (its path, on this server). */
async function mailedLink(o: Org, personId: string, body: unknown = {}): Promise<string> {
  const before = smtp.received.length;
  const r = await o.admin.post(`/persons/${personId}/credentials/password-reset`, body);
  assert.equal(r.status, 202, r.text);
  assertOriginalShape('POST /persons/{person_id}/credentials/password-reset', 202, r.body);
  assert.equal(smtp.received.length, before + 1, 'one message, delivered before the 202');
  const link = resetLink(smtp.received[before]!);
  assert.equal(link.origin, 'https://id.example');
  return link.pathname + link.search;
}

const tokenOf = (path: string) => new URL(path, 'http://x').searchParams.get('token') as string;
const page = (path: string) => server.client.as('', '').get(path);
const complete = (token: string, password: string) => server.client.as('', '').post('/password-reset', { token, password });

describe('password reset', () => {
  test('the link reaches the handle with the default template; its page is a form; it sets the password once (PasswordChanged, EndUser)', async () => {
    const id = await personWithPassword(org, 'ada@example.com', OLD);
    assertOriginalRequest('POST /persons/{person_id}/credentials/password-reset', { reset_handle: emailHandle('ada@example.com') });
    const path = await mailedLink(org, id, { reset_handle: emailHandle('ada@example.com') });
    const mail = smtp.received.at(-1)!;
    assert.deepEqual(mail.to, ['ada@example.com']);
    assert.equal(mail.from, 'accounts@id.example');
    assert.match(mail.headers, /^From: Resetting Co <accounts@id\.example>/m);
    assert.equal(mail.subject, 'Reset your password');
    assert.match(mail.text, /ada@example\.com at Resetting Co/);
    assert.match(mail.text, /within 60 minutes/);

    const form = await page(path);
    assert.equal(form.status, 200);
    assert.match(form.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(form.text, /<form method="post" action="\/password-reset">/);
    assert.ok(form.text.includes(`name="token" value="${tokenOf(path)}"`));
    assert.equal(form.headers.get('cache-control'), 'no-store');

    assert.equal(events(org.id, 'PasswordChanged_v1').length, 1, 'asking for a link changes no password');
    expectNoContent(await complete(tokenOf(path), NEW));
    const changed = events(org.id, 'PasswordChanged_v1');
    assert.equal(changed.length, 2);
    const { event_metadata: _, ...body } = changed[1]!;
    assert.deepEqual(body, { person_id: id, region: 'europe-belgium', handle: { type: 'EmailAddress', value: 'ada@example.com' }, initiated_by: 'EndUser' });
    assert.equal((await signIn(org, 'ada@example.com', NEW)).status, 200);
    assert.equal((await signIn(org, 'ada@example.com', OLD)).status, 401);

    // Used: refused at both doors, and nothing changes.
    await unchanged(org.admin, async () => {
      expectError(await complete(tokenOf(path), 'another password 9'), 400, 'not valid');
      expectError(await page(path), 400, 'not valid');
    }, server);
    assert.equal((await signIn(org, 'ada@example.com', NEW)).status, 200);
  });

  test('the form posts form-encoded: 204; a password against the policy is a 400 that leaves the link usable', async () => {
    const id = await personWithPassword(org, 'bea@example.com', OLD);
    const token = tokenOf(await mailedLink(org, id));
    const post = (password: string) =>
      server.client.as('', '').post('/password-reset', new URLSearchParams({ token, password }).toString(), { 'Content-Type': 'application/x-www-form-urlencoded' });
    await unchanged(org.admin, async () => expectError(await post('short'), 400, 'password: must be 8 to 256 characters'), server);
    expectNoContent(await post(NEW));
    assert.equal((await signIn(org, 'bea@example.com', NEW)).status, 200);
  });

  test('an expired link is refused (the injected clock), and a forged or malformed one, with nothing changed', async () => {
    const id = await personWithPassword(org, 'cy@example.com', OLD);
    const path = await mailedLink(org, id);
    const token = tokenOf(path);
    clock.advance((TTL_S - 60) * 1000);
    assert.equal((await page(path)).status, 200, 'still valid a minute before it expires');
    clock.advance(61 * 1000);
    const [body, mac] = token.split('.') as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), e: 4_000_000_000 })).toString('base64url')}.${mac}`;
    await unchanged(org.admin, async () => {
      expectError(await page(path), 400, 'not valid');
      expectError(await complete(token, NEW), 400, 'not valid');
      expectError(await complete(forged, NEW), 400, 'not valid');
      expectError(await complete('not-a-token', NEW), 400, 'not valid');
      expectError(await page('/password-reset'), 400, 'token');
      expectError(await complete(token, undefined as unknown as string), 400, 'password');
    }, server);
    assert.equal((await signIn(org, 'cy@example.com', OLD)).status, 200);
  });

  test('force_change removes the current password at once; the link sets a new one', async () => {
    const id = await personWithPassword(org, 'dee@example.com', OLD);
    const token = tokenOf(await mailedLink(org, id, { force_change: true }));
    assert.equal((await signIn(org, 'dee@example.com', OLD)).status, 401);
    assert.equal((await org.admin.get(`/persons/${id}/credentials`)).body.result.length, 0);
    expectNoContent(await complete(token, NEW));
    assert.equal((await signIn(org, 'dee@example.com', NEW)).status, 200);
  });

  test('refusals: unknown person 404, a handle the person lacks or one that is no email address 400, bad bodies 400; no mail, nothing changed', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('eve@example.com'), { type: 'phone_number', value: '+15555550100' }] });
    const id = created.body.result.person_id as string;
    const phoneOnly = (await org.admin.post('/persons', { handles: [{ type: 'username', value: 'nomail' }] })).body.result.person_id as string;
    const mails = smtp.received.length;
    const reset = (personId: string, body: unknown) => org.admin.post(`/persons/${personId}/credentials/password-reset`, body);
    await unchanged(org.admin, async () => {
      expectError(await reset('no-such-person', {}), 404, 'no-such-person');
      expectError(await reset(id, { reset_handle: emailHandle('other@example.com') }), 400, 'reset_handle');
      expectError(await reset(id, { reset_handle: { type: 'phone_number', value: '+15555550100' } }), 400, 'phone_number');
      expectError(await reset(phoneOnly, {}), 400, 'email_address');
      expectError(await reset(id, { force_change: 'yes' }), 400, 'force_change');
      expectError(await reset(id, { unknown: 1 }), 400, 'unknown');
      assert.equal((await org.user.post(`/persons/${id}/credentials/password-reset`, {})).status, 401);
    }, server);
    assert.equal(smtp.received.length, mails);
  });

  test('a mail server that refuses the message is a 502, and no link was sent', async () => {
    const id = await personWithPassword(org, 'fay@example.com', OLD);
    smtp.refuseWith = 550;
    try {
      expectError(await org.admin.post(`/persons/${id}/credentials/password-reset`, {}), 502, 'SERVICE_SMTP_URL');
    } finally {
      smtp.refuseWith = undefined;
    }
  });

  test('the used link is recorded through the WAL: on the replica, and refused after a restart; an unused one still works', async () => {
    const id = await personWithPassword(org, 'gus@example.com', OLD);
    const used = tokenOf(await mailedLink(org, id));
    const unused = tokenOf(await mailedLink(org, id));
    const r = await server.client.as('', '').post('/password-reset', { token: used, password: NEW }, ALL_REGIONS);
    expectNoContent(r);
    const replica = server.service.regions.replica('us-iowa')?.state(org.id);
    assert.equal(replica?.used_password_resets.size, server.service.registry.get(org.id)?.state.used_password_resets.size);
    assert.ok((replica?.used_password_resets.size ?? 0) > 0);

    await server.stop();
    server = await start();
    org = sameOrgOn(server, org);
    expectError(await complete(used, 'third password 123'), 400, 'not valid');
    assert.equal((await signIn(org, 'gus@example.com', NEW)).status, 200);
    expectNoContent(await complete(unused, 'fourth password 1'));
    assert.equal((await signIn(org, 'gus@example.com', 'fourth password 1')).status, 200);
    expectError(await complete(unused, 'fifth password 12'), 400, 'not valid');
  });
});

describe('password reset without a mail server', () => {
  test('400 naming SERVICE_SMTP_URL; nothing changed', async () => {
    const bare = await startTestServer();
    try {
      const o = await newOrg(bare, 'no mail');
      const id = await personWithPassword(o, 'hal@example.com', OLD);
      await unchanged(o.admin, async () => expectError(await o.admin.post(`/persons/${id}/credentials/password-reset`, { force_change: true }), 400, 'SERVICE_SMTP_URL'), bare);
      assert.equal((await signIn(o, 'hal@example.com', OLD)).status, 200);
    } finally {
      await bare.stop();
    }
  });
});
