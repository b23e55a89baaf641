// GateRequestHandled written lazily at send time is the same JSON as the event built at once, plugins or not;
// timestamps keep nine fraction digits across second boundaries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainHref, RequestHandledLater, requestHandled, timestampText, type RequestRecord } from '../../src/gate/events.js';
import { rfc3339Nanos } from '../../src/lib/time-text.js';

const origin = { orgId: 'org-"quoted"' };
const id = () => '0f0e0d0c-0b0a-4908-8706-050403020100' as const;

test('RequestHandledLater.encode writes what JSON.stringify(requestHandled(...)) writes', () => {
  const base: RequestRecord = { correlationId: 'c0c0c0c0-0000-4000-8000-000000000001', ip: '::1', start: 1_764_000_000_123.456, end: 1_764_000_001_000.5, method: 'POST', url: 'http://h:8/x?q="1"&tok=REDACTED', status: 201, requestLength: 12, responseLength: 3456, plugins: [] };
  const withPlugin: RequestRecord = {
    ...base,
    plugins: [{ index: 2, id: 'jwt', type: 'validate-jwt', start: base.start + 0.1, end: base.start + 0.9, metadata: { decision: 'allow', person_id: 'p' }, trips: [{ start: base.start + 0.2, end: base.start + 0.8, method: 'GET', url: 'http://s/jwks', status: 200, requestLength: 0, responseLength: 99 }] }],
  };
  for (const r of [base, withPlugin]) {
    const { url, ...rest } = r;
    const later = new RequestHandledLater(origin, rest, () => url, id);
    assert.equal(later.encode(), JSON.stringify(requestHandled(origin, r, id)));
    assert.deepEqual(JSON.parse(later.encode()), JSON.parse(JSON.stringify(requestHandled(origin, r, id))));
  }
});

test('timestampText: nine digits, exact at whole seconds and just before the next one', () => {
  for (const ms of [1_764_000_000_000, 1_764_000_000_999.9999, 1_764_000_001_000.25, 0.5]) {
    const text = timestampText(ms);
    assert.match(text, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    assert.ok(Math.abs(Date.parse(text) - ms) <= 1, `${ms} -> ${text}`);
  }
  assert.equal(timestampText(1_764_000_000_000), rfc3339Nanos(1_764_000_000_000_000_000n));
  assert.equal(timestampText(1_764_000_000_123.5), rfc3339Nanos(1_764_000_000_123_500_000n));
});

test('plainHref is URL.href where it answers, and leaves to URL whatever the parser would rewrite', () => {
  const cases: Array<[string, string, string]> = [
    ['http', '127.0.0.1:8080', '/api/items?a=1&b=%20x'],
    ['http', 'localhost:3000', '/'],
    ['https', 'api.example.test', '/v1/x;y=1/@z?q=a:b,c'],
    ['http', 'api.test:80', '/x'],
    ['https', 'api.test:443', '/x'],
    ['http', 'API.test', '/x'],
    ['http', '127.1', '/x'],
    ['http', '010.0.0.1', '/x'],
    ['http', 'a.123', '/x'],
    ['http', '[::1]:8080', '/x'],
    ['http', 'h:08080', '/x'],
    ['http', 'h:70000', '/x'],
    ['http', 'h', '/a/../b'],
    ['http', 'h', '/a/%2E%2e/b'],
    ['http', 'h', '/a/./b?x=/../'],
    ['http', 'h', "/a?x='1'"],
    ['http', 'h', '/a b'],
    ['http', 'h', '/a\\b'],
    ['http', 'h', '/a?'],
    ['ftp', 'h', '/x'],
  ];
  let fast = 0;
  for (const [proto, host, raw] of cases) {
    const got = plainHref(proto, host, raw);
    if (got === undefined) continue;
    fast += 1;
    assert.equal(got, new URL(`${proto}://${host}${raw}`).href, `${proto}://${host}${raw}`);
  }
  assert.ok(fast >= 4, 'the ordinary cases take the fast path');
  assert.equal(plainHref('http', 'API.test', '/x'), undefined);
  assert.equal(plainHref('http', '127.1', '/x'), undefined);
  assert.equal(plainHref('http', 'h', '/a/%2E%2e/b'), undefined);
});
