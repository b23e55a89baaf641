import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCorsPolicy } from '../../src/browser/cors.js';

const suffix = (patterns: readonly string[], host: string) => patterns.some((p) => (p.startsWith('*.') ? host.endsWith(p.slice(1)) : host === p));

test('listed origins only, when organizations list none of their own', () => {
  const cors = createCorsPolicy({ origins: ['http://localhost:3000'] });
  assert.equal(cors.preflight('http://localhost:3000'), true);
  assert.equal(cors.preflight('http://localhost:3001'), false);
  assert.equal(cors.preflight(''), false);
  assert.equal(cors.allows('http://localhost:3000', 'org'), true);
  assert.equal(cors.allows('http://localhost:3001', 'org'), false);
  assert.equal(cors.refuses('http://localhost:3001', 'org'), false, 'without the hook the browser alone enforces it');
});

test("an organization's own origin patterns admit its requests and refuse the others' before anything changes", () => {
  const patterns = (org: string) => (org === 'a' ? ['*.shop.example'] : []);
  const cors = createCorsPolicy({ origins: ['http://listed.test'], orgOrigins: patterns, hostAllows: suffix, anyOrgAllows: (host) => suffix(patterns('a'), host) });
  assert.equal(cors.preflight('https://www.shop.example'), true, 'an origin some organization admits passes the preflight');
  assert.equal(cors.preflight('https://evil.example'), false, 'one no organization admits does not');
  assert.equal(cors.refuses('https://evil.example', 'b'), false, 'a request the browser could only send without a preflight is left to the browser');
  assert.equal(cors.allows('https://www.shop.example', 'a'), true);
  assert.equal(cors.allows('https://www.shop.example', 'b'), false);
  assert.equal(cors.allows('https://www.shop.example', undefined), false);
  assert.equal(cors.refuses('https://www.shop.example', 'a'), false);
  assert.equal(cors.refuses('https://www.shop.example', 'b'), true);
  assert.equal(cors.refuses('http://listed.test', 'b'), false);
  assert.equal(cors.allows('not a url', 'a'), false);
});
