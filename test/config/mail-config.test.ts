// The mail settings: SERVICE_SMTP_URL, SERVICE_SMTP_FROM and SERVICE_PASSWORD_RESET_TTL, with their defaults.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';

test('no mail server by default; reset links live an hour; the sender is no-reply at the host', () => {
  const c = loadConfig({});
  assert.equal(c.smtpUrl, undefined);
  assert.equal(c.passwordResetTtl, 3600);
  assert.equal(c.smtpFrom, 'no-reply@localhost');
  assert.equal(loadConfig({ SERVICE_HOST: 'id.example.com' }).smtpFrom, 'no-reply@id.example.com');
});

test('smtp:// and smtps:// URLs, credentials included, and a sender address are taken', () => {
  const c = loadConfig({ SERVICE_SMTP_URL: 'smtps://user:pass@mail.example.com:465', SERVICE_SMTP_FROM: 'accounts@example.com', SERVICE_PASSWORD_RESET_TTL: '600' });
  assert.equal(c.smtpUrl, 'smtps://user:pass@mail.example.com:465');
  assert.equal(c.smtpFrom, 'accounts@example.com');
  assert.equal(c.passwordResetTtl, 600);
  assert.equal(loadConfig({ SERVICE_SMTP_URL: 'smtp://127.0.0.1:2525' }).smtpUrl, 'smtp://127.0.0.1:2525');
});

test('other URLs, senders that are no address and lifetimes out of range are refused at start, naming the variable', () => {
  for (const url of ['http://mail.example.com', 'mail.example.com:25', 'smtp://']) assert.throws(() => loadConfig({ SERVICE_SMTP_URL: url }), /SERVICE_SMTP_URL/, url);
  for (const from of ['accounts', 'a b@example.com', '<a@example.com>']) assert.throws(() => loadConfig({ SERVICE_SMTP_FROM: from }), /SERVICE_SMTP_FROM/, from);
  for (const ttl of ['0', '59', '1h', String(31 * 86_400)]) assert.throws(() => loadConfig({ SERVICE_PASSWORD_RESET_TTL: ttl }), /SERVICE_PASSWORD_RESET_TTL/, ttl);
});
