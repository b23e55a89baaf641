import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readCookie } from '../../src/lib/signed.js';
import { createSessionSealer as createSealer, readSession, sessionCookie } from '../../src/oauth/session.js';
import { escapeHtml } from '../../src/oauth/sign-in-page.js';

const sealer = createSealer(Buffer.alloc(32, 7));
const facts = { org: 'org-1', person_id: 'p-1', auth_time: 1000, amr: ['password'], password: null };

describe('the hosted sign-in session', () => {
  test('a sealed value opens for its purpose until it expires, and not for another purpose or key', () => {
    const sealed = sealer.seal('a', { x: 1 }, 2000);
    assert.deepEqual(sealer.open('a', sealed, 1999), { x: 1 });
    assert.equal(sealer.open('a', sealed, 2000), undefined);
    assert.equal(sealer.open('b', sealed, 1999), undefined);
    assert.equal(createSealer(Buffer.alloc(32, 8)).open('a', sealed, 1999), undefined);
  });

  test('an altered value is refused', () => {
    const [body, mac] = sealer.seal('a', { person_id: 'p-1' }, 2000).split('.') as [string, string];
    const forged = Buffer.from(Buffer.from(body, 'base64url').toString().replace('p-1', 'p-2')).toString('base64url');
    assert.equal(sealer.open('a', `${forged}.${mac}`, 1000), undefined);
    assert.equal(sealer.open('a', 'garbage', 1000), undefined);
  });

  test('the cookie is HttpOnly and SameSite=Lax, Secure over https, and reads back', () => {
    const header = sessionCookie(sealer, facts, 1000, true);
    assert.match(header, /; HttpOnly; SameSite=Lax; Secure$/);
    assert.doesNotMatch(sessionCookie(sealer, facts, 1000, false), /Secure/);
    const value = header.slice(0, header.indexOf(';'));
    assert.deepEqual(readSession(sealer, `other=1; ${value}`, 1001), { ...facts, expires: 1000 + 12 * 3600 });
    assert.equal(readCookie('a=1; b=2', 'b'), '2');
  });

  test('claims too large for a cookie are left out of the session, not the session itself', () => {
    const header = sessionCookie(sealer, { ...facts, custom_claims: { big: 'x'.repeat(5000) } }, 1000, false);
    const session = readSession(sealer, header.slice(0, header.indexOf(';')), 1001);
    assert.equal(session?.person_id, 'p-1');
    assert.equal(session?.custom_claims, undefined);
  });

  test('page text is escaped', () => {
    assert.equal(escapeHtml(`<a href="x" onclick='y'>&</a>`), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});
