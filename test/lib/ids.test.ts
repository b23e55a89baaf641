// Identifiers: UUIDv7 text, in creation order within one millisecond, unique across refills of the random pool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createIdSource, createRandomUuid } from '../../src/lib/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('given a clock standing still, when many ids are made, then each is a UUIDv7 carrying the time, all distinct and in creation order', () => {
  const ms = Date.UTC(2026, 0, 1);
  const ids = createIdSource(() => ms);
  const made = Array.from({ length: 3000 }, () => ids.uuid());
  for (const id of made) assert.match(id, V7);
  assert.equal(new Set(made).size, made.length);
  assert.deepEqual([...made].sort(), made);
  assert.equal(parseInt((made[0] as string).replace(/-/g, '').slice(0, 12), 16), ms);
});

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('given the random UUID source, when more ids are made than one pool holds, then each is a UUIDv4 and all are distinct', () => {
  const uuid = createRandomUuid();
  const made = Array.from({ length: 3000 }, () => uuid());
  for (const id of made) assert.match(id, V4);
  assert.equal(new Set(made).size, made.length);
});
