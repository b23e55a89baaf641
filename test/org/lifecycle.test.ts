import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLifecycle } from '../../src/org/lifecycle.js';

test('an organization is ready once loaded, and stopped only after it drained', () => {
  const l = createLifecycle();
  assert.equal(l.getSnapshot().value, 'loading');
  l.send({ type: 'drained' });
  assert.equal(l.getSnapshot().value, 'loading', 'an event the state does not list changes nothing');
  l.send({ type: 'loaded' });
  assert.equal(l.getSnapshot().value, 'ready');
  l.send({ type: 'loaded' });
  assert.equal(l.getSnapshot().value, 'ready');
  l.send({ type: 'stop' });
  assert.equal(l.getSnapshot().value, 'stopping');
  l.send({ type: 'stop' });
  assert.equal(l.getSnapshot().value, 'stopping');
  l.send({ type: 'drained' });
  assert.equal(l.getSnapshot().value, 'stopped');
});

test('an organization stopped while loading is stopped at once', () => {
  const l = createLifecycle();
  l.send({ type: 'stop' });
  assert.equal(l.getSnapshot().value, 'stopped');
  l.send({ type: 'loaded' });
  assert.equal(l.getSnapshot().value, 'stopped');
});
