import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.js';

test('replication latency and jitter default to 0 and are read as milliseconds', () => {
  const plain = loadConfig({});
  assert.deepEqual([plain.replicationLatencyMs, plain.replicationJitterMs], [0, 0]);
  const slow = loadConfig({ SERVICE_REPLICATION_LATENCY_MS: '25', SERVICE_REPLICATION_JITTER_MS: '5' });
  assert.deepEqual([slow.replicationLatencyMs, slow.replicationJitterMs], [25, 5]);
});

test('a replication delay that is not a whole number of ms up to a minute refuses to start', () => {
  for (const [name, value] of [
    ['SERVICE_REPLICATION_LATENCY_MS', '-1'],
    ['SERVICE_REPLICATION_LATENCY_MS', '2.5'],
    ['SERVICE_REPLICATION_JITTER_MS', '60001'],
    ['SERVICE_REPLICATION_JITTER_MS', 'fast'],
  ] as const) {
    assert.throws(() => loadConfig({ [name]: value }), (e: unknown) => e instanceof ConfigError && e.message.startsWith(name), `${name}=${value}`);
  }
});
