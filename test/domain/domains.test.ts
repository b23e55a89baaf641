// Allowed origin domains: the matcher's rules (the original's: `*` any run, case-insensitive, else exact),
// the decisions on the list, and snapshots that carry it (older ones read as none).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { domainAllows } from '../../src/domain/domains.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { given, refused, when } from '../support/domain.js';

describe('domainAllows', () => {
  test("the original's example: xyz.com and *.xyz.com allow xyz.com and every subdomain, not xyz.net", () => {
    const p = ['xyz.com', '*.xyz.com'];
    for (const host of ['xyz.com', 'a.xyz.com', 'b.c.xyz.com', 'A.XYZ.com']) assert.equal(domainAllows(p, host), true, host);
    for (const host of ['xyz.net', 'axyz.com', 'xyz.com.evil.net', 'evil.net', '']) assert.equal(domainAllows(p, host), false, host);
  });

  test('exact entries match exactly; * matches zero or more characters anywhere; regex characters are literal', () => {
    assert.equal(domainAllows(['app.example.com'], 'app.example.com'), true);
    assert.equal(domainAllows(['app.example.com'], 'appxexample.com'), false);
    assert.equal(domainAllows(['app-*.example.com'], 'app-.example.com'), true);
    assert.equal(domainAllows(['app-*.example.com'], 'app-blue.example.com'), true);
    assert.equal(domainAllows(['app-*.example.com'], 'app.example.com'), false);
    assert.equal(domainAllows(['*.Example.COM'], 'x.example.com'), true);
    assert.equal(domainAllows([], 'x.example.com'), false);
  });
});

describe('allowed domains state', () => {
  test('add (normalized, duplicates ignored), overwrite, remove one (absent: no change), remove all', () => {
    // apply() changes the state in place: each step starts from a fresh one.
    const added = () => when(given(), { kind: 'AddAllowedDomains', domains: ['XYZ.com', '*.xyz.com', 'xyz.com'], overwrite: false });
    assert.deepEqual(added().after.allowed_domains, ['xyz.com', '*.xyz.com']);
    assert.deepEqual(when(added().after, { kind: 'AddAllowedDomains', domains: ['xyz.com'], overwrite: false }).decision.changes, []);
    assert.deepEqual(when(added().after, { kind: 'AddAllowedDomains', domains: ['b.example'], overwrite: true }).after.allowed_domains, ['b.example']);
    assert.deepEqual(when(added().after, { kind: 'RemoveAllowedDomains', domain: 'absent.example' }).decision.changes, []);
    assert.deepEqual(when(added().after, { kind: 'RemoveAllowedDomains', domain: 'XYZ.com' }).after.allowed_domains, ['*.xyz.com']);
    assert.deepEqual(when(added().after, { kind: 'RemoveAllowedDomains' }).after.allowed_domains, []);
  });

  test('a malformed domain refuses the whole command, naming it', () => {
    refused(given(), { kind: 'AddAllowedDomains', domains: ['ok.example', 'http://x'], overwrite: false }, 'ERR_BAD_REQUEST', 'domains[1]');
  });

  test('a snapshot carries the list; one of the version before domains reads as none', () => {
    const state = when(given(), { kind: 'AddAllowedDomains', domains: ['*.example.com'], overwrite: false }).after;
    assert.deepEqual(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state)))).allowed_domains, ['*.example.com']);
    const older = JSON.parse(JSON.stringify({ ...toSnapshot(given()), v: 9 })) as Record<string, any>;
    delete older['org']['allowed_domains'];
    assert.deepEqual(fromSnapshot(older as never).allowed_domains, []);
  });
});

describe('domainAllows with several wildcards', () => {
  test('each * matches independently, backtracking as needed', () => {
    assert.equal(domainAllows(['*-app.*.example.com'], 'blue-app.eu.example.com'), true);
    assert.equal(domainAllows(['*-app.*.example.com'], 'blue-app.example.com'), false);
    assert.equal(domainAllows(['a*a*a'], 'aaaa'), true);
    assert.equal(domainAllows(['a*a*a'], 'aab'), false);
    assert.equal(domainAllows(['*'], 'anything.example'), true);
  });
});
