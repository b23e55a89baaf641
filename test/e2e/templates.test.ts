// Message templates: the original's names, a default until the organization writes its own, Mustache checked at
// PUT (a reset template must offer the link), kept across a restart, and used for the reset mail.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectNoContent, expectResult, unchanged } from '../support/expect.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { resetLink, startSmtpReceiver, type SmtpReceiver } from '../support/smtp.js';
import { newOrg, personWithPassword, sameOrgOn, type Org } from '../support/auth.js';

const PATH = '/organizations/config/templates/email_password_reset';
const dir = tempDir();
let smtp: SmtpReceiver;
let server: TestServer;
let org: Org;
let other: Org;

const start = () => startTestServer({ SERVICE_SMTP_URL: smtp.url, SERVICE_ISSUER: 'https://id.example' }, {}, dir);

before(async () => {
  smtp = await startSmtpReceiver();
  server = await start();
  org = await newOrg(server, 'Templating Inc');
  other = await newOrg(server, 'other');
});
after(async () => {
  await server.stop();
  await smtp.close();
  removeDir(dir);
});

describe('message templates', () => {
  test('GET lists the names; GET one answers the default, which offers the reset link', async () => {
    const list = await org.admin.get('/organizations/config/templates');
    assert.deepEqual(expectResult(list, 200), ['email_password_reset', 'email_otp_message', 'email_authn_challenge', 'text_otp_message', 'text_authn_challenge']);
    assertOriginalShape('GET /organizations/config/templates', 200, list.body);
    const one = await org.admin.get(PATH);
    const template = expectResult(one, 200);
    assertOriginalShape('GET /organizations/config/templates/{template_name}', 200, one.body);
    assert.deepEqual(Object.keys(template).sort(), ['body', 'sender_name', 'subject']);
    assert.ok(template.body.includes('{{password_reset_url}}'));
  });

  test('PUT writes Mustache subject and body (fields left out keep theirs); the reset mail renders it, values unescaped; other organizations keep the default', async () => {
    const body = { subject: 'Password help for {{handle}}', body: 'Go to {{password_reset_url}} before {{expires_in_minutes}} minutes pass.\n{{#organization_name}}From {{organization_name}}{{/organization_name}}\n' };
    assertOriginalRequest('PUT /organizations/config/templates/{template_name}', body);
    const before = expectResult(await org.admin.get(PATH), 200);
    expectNoContent(await org.admin.put(PATH, body));
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), { ...before, ...body });
    expectNoContent(await org.admin.put(PATH, { sender_name: 'The {{organization_name}} team' }));
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), { ...body, sender_name: 'The {{organization_name}} team' });
    assert.deepEqual(expectResult(await other.admin.get(PATH), 200), before);

    const id = await personWithPassword(org, 'o\'neil&co@example.com', 'password 12345');
    assert.equal((await org.admin.post(`/persons/${id}/credentials/password-reset`, {})).status, 202);
    const mail = smtp.received.at(-1)!;
    assert.equal(mail.subject, "Password help for o'neil&co@example.com", 'plain text: no HTML escaping');
    assert.match(mail.headers, /^From: The Templating Inc team </m);
    assert.match(mail.text, /^Go to https:\/\/id\.example\/password-reset\?token=[\w.-]+ before 60 minutes pass\.\nFrom Templating Inc\n/);
    assert.ok(resetLink(mail).searchParams.get('token'));
  });

  test('refusals: a reset body without {{password_reset_url}}, invalid Mustache, a line break in the subject, unknown names and fields; nothing changed', async () => {
    await unchanged(org.admin, async () => {
      expectError(await org.admin.put(PATH, { body: 'No link here, {{handle}}.' }), 400, '{{password_reset_url}}');
      expectError(await org.admin.put(PATH, { body: '{{#password_reset_url}}{{password_reset_url}}' }), 400, 'body', 'Mustache');
      expectError(await org.admin.put(PATH, { subject: 'Reset {{handle' }), 400, 'subject', 'Mustache');
      expectError(await org.admin.put(PATH, { subject: 'two\r\nlines' }), 400, 'one line');
      expectError(await org.admin.put(PATH, { body: 'x'.repeat(70_000) }), 400, 'body');
      expectError(await org.admin.put(PATH, { subject: 1 }), 400, 'subject');
      expectError(await org.admin.put(PATH, { colour: 'red' }), 400, 'colour');
      expectError(await org.admin.put('/organizations/config/templates/text_password_reset', { body: '{{password_reset_url}}' }), 404, 'text_password_reset');
      expectError(await org.admin.get('/organizations/config/templates/nope'), 404, 'nope');
      assert.equal((await org.user.put(PATH, { subject: 'x' })).status, 401);
      assert.equal((await org.user.get(PATH)).status, 401);
    }, server);
  });

  test('a written template survives a restart', async () => {
    const before = expectResult(await org.admin.get(PATH), 200);
    await server.stop();
    server = await start();
    org = sameOrgOn(server, org);
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), before);
  });
});
