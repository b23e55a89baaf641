// Every regular expression the service applies to a caller's input, timed on adversarial strings at the
// longest length its field allows: a pattern that backtracks more than linearly blocks the one thread that
// serves every organization. The checks that hold a pattern also refuse a longer value before running it.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { EMAIL, EMAIL_MAX, GROUP_NAME_MAX, GROUP_NAME_PATTERN, PHONE, PHONE_MAX, USERNAME, USERNAME_MAX_UNITS, checkGroupName, checkHandle } from '../../src/domain/rules.js';
import { PLAIN_HOST, PLAIN_TARGET } from '../../src/gate/events.js';
import { compilePattern } from '../../src/gate/match.js';
import { CREDENTIALS, KEY, ORG_ID } from '../../src/http/auth.js';
import { EMAIL as GCP_EMAIL, PRINCIPAL as GCP_PRINCIPAL } from '../../src/cloud/gcp-changes.js';
import { PATTERN as DOMAIN_PATTERN } from '../../src/domain/domains.js';
import { HOST as MITM_HOST } from '../../src/domain/mitm.js';
import { DURATION, HEADER_NAME } from '../../src/domain/webhook-rules.js';

/** A budget in milliseconds, generous for a busy machine: the quadratic email pattern took 3.5 s on 80 KB. */
const BUDGET_MS = 50;
const HEADER_MAX = 16 * 1024;

/** Strings that make backtracking patterns try every split: a pump repeated to `length`, then a character no class expects. */
function* adversarial(length: number): Generator<string> {
  const pumps = ['a', '.', 'a.', '.a', '@', 'a@', '1', '-', 'a-', ':1', '+1', '=', 'a ', '/', '%2', '\u00e9', '1s', '1.', '*.', 'aa.'];
  const prefixes = ['', 'a', 'a@', 'a@a', '+', 'a.', '/', 'Basic ', 'a@a.', 'user:a@', 'domain:', '*.'];
  for (const prefix of prefixes) {
    for (const pump of pumps) {
      const body = prefix + pump.repeat(Math.ceil(length / pump.length));
      for (const tail of ['\u0000', ' ', '@', '!', '..']) yield (body.slice(0, length - tail.length) + tail).slice(0, length);
    }
  }
}

/** The first n of a sequence, without making the rest. */
function take<T>(items: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  for (const item of items) {
    if (out.length === n) break;
    out.push(item);
  }
  return out;
}

/** The fastest of three runs, so that a busy machine's pause is not taken for a slow pattern. */
function timed(what: string, run: () => void): void {
  let ms = Infinity;
  for (let i = 0; i < 3 && ms >= BUDGET_MS; i++) {
    const start = performance.now();
    run();
    ms = Math.min(ms, performance.now() - start);
  }
  assert.ok(ms < BUDGET_MS, `${what} took ${ms.toFixed(1)} ms on adversarial input (budget ${BUDGET_MS} ms)`);
}

const PATTERNS: Array<[string, RegExp, number]> = [
  ['email handle', EMAIL, EMAIL_MAX],
  ['phone handle', PHONE, PHONE_MAX],
  ['username handle', USERNAME, USERNAME_MAX_UNITS],
  ['group name', GROUP_NAME_PATTERN, GROUP_NAME_MAX],
  ['Service-OrgID', ORG_ID, HEADER_MAX],
  ['Service-API-Key', KEY, HEADER_MAX],
  ['Authorization credentials', CREDENTIALS, HEADER_MAX],
  ["Gate's plain Host", PLAIN_HOST, HEADER_MAX],
  ["Gate's plain request target", PLAIN_TARGET, HEADER_MAX],
  ['CORS domain pattern', DOMAIN_PATTERN, 253],
  ['phishing allowed domain', MITM_HOST, HEADER_MAX],
  ['webhook timeout duration', DURATION, 64],
  ['webhook custom header name', HEADER_NAME, HEADER_MAX],
  // Request bodies bound these only by SERVICE_BODY_LIMIT: timed far past any real address.
  ['GCP service account email', GCP_EMAIL, HEADER_MAX],
  ['GCP principal', GCP_PRINCIPAL, HEADER_MAX],
];

for (const [name, pattern, max] of PATTERNS) {
  test(`the ${name} pattern takes linear time on adversarial strings of ${max} characters`, () => {
    // One budget per string: linear work on 16 KB is far below a millisecond, quadratic work is seconds.
    for (const s of adversarial(max)) timed(`${name} on ${JSON.stringify(s.slice(0, 12))}...`, () => pattern.test(s));
  });
}

test('a handle or group name far over its length is refused before any pattern runs', () => {
  for (const length of [80 * 1024, 1024 * 1024]) {
    for (const s of take(adversarial(length), 40)) {
      timed(`checkHandle of ${length} characters`, () => {
        for (const type of ['email_address', 'phone_number', 'username'] as const) assert.throws(() => checkHandle({ type, value: s }, 'h'), { code: 'ERR_BAD_REQUEST' });
      });
      timed(`checkGroupName of ${length} characters`, () => assert.throws(() => checkGroupName(s), { code: 'ERR_BAD_REQUEST' }));
    }
  }
  // The longest valid forms still pass.
  checkHandle({ type: 'email_address', value: `${'a'.repeat(64)}@${'b'.repeat(EMAIL_MAX - 69)}.com` }, 'h');
  assert.throws(() => checkHandle({ type: 'email_address', value: `${'a'.repeat(64)}@${'b'.repeat(EMAIL_MAX - 68)}.com` }, 'h'), /at most 320/);
});

test("Gate's URL patterns with several wildcards match a request path in linear time", () => {
  const matches = compilePattern('*.example.com/a*a*a*a*a*a*b');
  const path = `/${'a'.repeat(HEADER_MAX)}`;
  timed('a 7-wildcard Gate pattern', () => assert.equal(matches('api.example.com', path), false));
  assert.equal(matches('api.example.com:8080', '/aaaaaaab'), true);
  assert.equal(matches('API.Example.com', '/axaxaxaxaxaxb'), true);
  assert.equal(matches('evil.com/.example.com', '/aaaaaaab'), false);
});
