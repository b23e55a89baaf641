// The event settings: SERVICE_EVENT_RETENTION as a count or an age, SERVICE_WS_MAX_BUFFER, and their defaults.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, DEFAULT_EVENT_RETENTION, loadConfig, parseRetention } from '../../src/config.js';

test('retention defaults to 1,000,000 events per organization', () => {
  assert.deepEqual(DEFAULT_EVENT_RETENTION, { kind: 'count', count: 1_000_000 });
  assert.deepEqual(loadConfig({}).eventRetention, DEFAULT_EVENT_RETENTION);
  assert.deepEqual(parseRetention(''), DEFAULT_EVENT_RETENTION);
});

test('retention is a count of events or an age in s, m, h or d', () => {
  assert.deepEqual(parseRetention('100000'), { kind: 'count', count: 100_000 });
  assert.deepEqual(parseRetention('7d'), { kind: 'age', ms: 7 * 86_400_000 });
  assert.deepEqual(parseRetention('24h'), { kind: 'age', ms: 86_400_000 });
  assert.deepEqual(parseRetention('30m'), { kind: 'age', ms: 1_800_000 });
  assert.deepEqual(parseRetention('90s'), { kind: 'age', ms: 90_000 });
});

test('a retention that is neither, or keeps nothing, is refused at start', () => {
  for (const bad of ['0', '0s', '7 days', '1w', '-5', '1.5d', 'forever', '99999999999999999999']) {
    assert.throws(() => parseRetention(bad), ConfigError, bad);
  }
  assert.throws(() => loadConfig({ SERVICE_EVENT_RETENTION: 'x' }), /SERVICE_EVENT_RETENTION/);
});

test('the WebSocket send buffer limit defaults to 4 MiB and is at least 64 KiB', () => {
  assert.equal(loadConfig({}).wsMaxBuffer, 4 * 1024 * 1024);
  assert.equal(loadConfig({ SERVICE_WS_MAX_BUFFER: '65536' }).wsMaxBuffer, 65_536);
  assert.throws(() => loadConfig({ SERVICE_WS_MAX_BUFFER: '1000' }), /SERVICE_WS_MAX_BUFFER/);
  assert.equal(loadConfig({}).eventPruneIntervalMs, 60_000);
});
