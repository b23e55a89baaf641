import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createStateCookies, createStateSealer, STATE_TTL_MS } from '../../src/sso/state-cookie.js';

const now = Date.UTC(2026, 0, 1);
const binding = { state: 'st', org: 'org-1', client_id: 'client', expires: now + STATE_TTL_MS };
const valueOf = (setCookie: string) => setCookie.split(';')[0] as string;

test('the cookie is HttpOnly, SameSite=Lax, scoped to the callback, 10 minutes; Secure only over https', () => {
  const cookie = createStateCookies(createStateSealer(randomBytes(32)), false).issue(binding, now);
  assert.match(cookie, /^sso_state=[^;]+; Max-Age=600; Path=\/authenticate\/oidc\/callback; HttpOnly; SameSite=Lax$/);
  assert.match(createStateCookies(createStateSealer(randomBytes(32)), true).issue(binding, now), /; Secure$/);
});

test('a cookie reads back as its binding among other cookies; a tampered or foreign one does not', () => {
  const key = createStateSealer(randomBytes(32));
  const cookies = createStateCookies(key, false);
  const value = valueOf(cookies.issue(binding, now));
  assert.deepEqual(cookies.read(`a=b; ${value}; c=d`), binding);
  const [name, payload, tag] = value.split(/[=.]/) as [string, string, string];
  const forged = Buffer.from(JSON.stringify(['st', 'other-org', 'client', binding.expires])).toString('base64url');
  assert.equal(cookies.read(`${name}=${forged}.${tag}`), undefined);
  assert.equal(cookies.read(`${name}=${payload}.${tag.slice(1)}x`), undefined);
  assert.equal(createStateCookies(createStateSealer(randomBytes(32)), false).read(value), undefined);
  assert.equal(cookies.read(undefined), undefined);
  assert.match(cookies.clear(), /^sso_state=; Max-Age=0;/);
});
