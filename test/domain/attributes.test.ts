import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from '../../src/domain/commands.js';
import { aPerson, given, refused, when } from '../support/domain.js';

const set = (attributes: Record<string, unknown>, replace: boolean, person_id?: string): Command =>
  person_id === undefined ? { kind: 'SetAttributes', bucket: 'end_user_read_write', attributes, replace } : { kind: 'SetAttributes', person_id, bucket: 'end_user_read_write', attributes, replace };

describe('SetAttributes', () => {
  test('replace: keys not in the set are deleted', () => {
    const state = given({ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { a: 1, b: 2 }, replace: true });
    const { after } = when(state, set({ b: 3, c: 4 }, true));
    assert.deepEqual(after.attributes.get('end_user_read_write'), { b: 3, c: 4 });
  });

  test('merge: keys not in the set are kept', () => {
    const state = given({ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { a: 1, b: 2 }, replace: true });
    const { after } = when(state, set({ b: 3, c: 4 }, false));
    assert.deepEqual(after.attributes.get('end_user_read_write'), { a: 1, b: 3, c: 4 });
  });

  test("a person's set is the person's alone", () => {
    const { after } = when(given(aPerson('p1'), aPerson('p2')), set({ a: 1 }, true, 'p1'));
    assert.deepEqual(after.persons.get('p1')?.attributes, { end_user_read_write: { a: 1 } });
    assert.deepEqual(after.persons.get('p2')?.attributes, {});
    assert.equal(after.attributes.size, 0);
  });

  test('names: at most 70 bytes of UTF-8, whatever the characters', () => {
    for (const name of ['a'.repeat(70), 'é'.repeat(35), '€'.repeat(23) + 'a', '😀'.repeat(17) + 'ab']) {
      assert.equal(Buffer.byteLength(name), 70);
      assert.equal(when(given(), set({ [name]: 1 }, true)).decision.changes.length, 1);
    }
    for (const name of ['a'.repeat(71), 'é'.repeat(35) + 'a', '€'.repeat(24), '😀'.repeat(18)]) {
      assert.ok(Buffer.byteLength(name) > 70);
      refused(given(), set({ ok: 1, [name]: 1 }, true), 'ERR_BAD_REQUEST', name, '70');
    }
  });

  test('values: at most 65,536 bytes of JSON, quotes included', () => {
    const allowed = 'x'.repeat(65_534);
    assert.equal(Buffer.byteLength(JSON.stringify(allowed)), 65_536);
    assert.equal(when(given(), set({ big: allowed }, true)).decision.changes.length, 1);
    refused(given(), set({ big: allowed + 'x' }, true), 'ERR_BAD_REQUEST', 'big', '65537');
    // multibyte characters count by their bytes: 21,845 × '€' is 65,535 bytes, with quotes 65,537
    refused(given(), set({ euro: '€'.repeat(21_845) }, true), 'ERR_BAD_REQUEST', 'euro');
  });

  test('an empty name is refused', () => {
    refused(given(), set({ '': 1 }, true), 'ERR_BAD_REQUEST', 'empty');
  });

  test('__proto__ cannot be a name or a key inside a value, since it does not survive the log', () => {
    refused(given(), set(JSON.parse('{"__proto__": 1}'), true), 'ERR_BAD_REQUEST', '__proto__');
    refused(given(), set(JSON.parse('{"a": {"b": [{"__proto__": 1}]}}'), true), 'ERR_BAD_REQUEST', '__proto__');
    assert.equal(when(given(), set({ a: '__proto__', b: ['__proto__'] }, true)).decision.changes.length, 1);
  });

  test('an unknown bucket is a 404; a person that does not exist is a 404', () => {
    refused(given(), { kind: 'SetAttributes', bucket: 'mine', attributes: {}, replace: true }, 'ERR_NOT_FOUND', 'mine');
    refused(given(), set({ a: 1 }, true, 'p9'), 'ERR_NOT_FOUND', 'p9');
  });
});

describe('DeleteAttributes', () => {
  const state = () => given({ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { a: 1, b: 2, c: 3 }, replace: true });

  test('the named ones', () => {
    const { after } = when(state(), { kind: 'DeleteAttributes', bucket: 'end_user_read_write', names: ['a', 'c', 'zz'] });
    assert.deepEqual(after.attributes.get('end_user_read_write'), { b: 2 });
  });

  test('all of them', () => {
    const { after } = when(state(), { kind: 'DeleteAttributes', bucket: 'end_user_read_write' });
    assert.equal(after.attributes.has('end_user_read_write'), false);
  });

  test('names that are not there, including names an object inherits, change nothing', () => {
    for (const name of ['zz', 'toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      assert.deepEqual(when(state(), { kind: 'DeleteAttributes', bucket: 'end_user_read_write', names: [name] }).decision.changes, [], name);
    }
  });
});
