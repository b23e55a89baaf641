import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTimeoutMs, checkTargetUrl, parseDuration } from '../../src/domain/webhook-rules.js';

test('durations read like Go durations', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('2s'), 2000);
  assert.equal(parseDuration('1m'), 60_000);
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('250000us'), 250);
  assert.equal(parseDuration('0s'), 0);
  assert.equal(parseDuration('0'), 0);
  for (const bad of ['', '5', 's', '1x', '1s ', '-1s', '1 s']) assert.throws(() => parseDuration(bad), /timeout: /, bad);
});

test('an unset timeout means 2 s for sync hooks and 10 s for events', () => {
  assert.equal(callTimeoutMs({ timeout: '0s' }, 'sync_hook'), 2000);
  assert.equal(callTimeoutMs({ timeout: '0s' }, 'event'), 10_000);
  assert.equal(callTimeoutMs({ timeout: '750ms' }, 'sync_hook'), 750);
});

test('target URLs compare in canonical form', () => {
  assert.equal(checkTargetUrl('https://HOOKS.example.com:443/a', false), 'https://hooks.example.com/a');
  assert.equal(checkTargetUrl('http://127.0.0.1:80/a', true), 'http://127.0.0.1/a');
});
