// jsonErrorOffset agrees with JSON.parse on what is JSON, and points at the first character that is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonErrorOffset } from '../../src/tokens/json-error.js';

const valid = ['{}', ' {"a": [1, -2.5e3, true, false, null, "x\\u00e9\\n"], "b": {}} ', '[]', '"s"', '0'];
const invalid: Array<[string, number]> = [
  ['{"a": 1,}', 8],
  ['{\n"a": \n}', 8],
  ['{"a": 01}', 7],
  ['{"a": "x\ny"}', 8],
  ['{"a": "\\q"}', 8],
  ['{"a" 1}', 5],
  ['{"a": tru}', 6],
  ['{"a": 1', 7],
  ['{} x', 3],
  ['', 0],
];

test('valid JSON has no error offset', () => {
  for (const text of valid) assert.equal(jsonErrorOffset(text), -1, text);
});

test('invalid JSON: the offset of the first character that is wrong, and JSON.parse agrees it is invalid', () => {
  for (const [text, offset] of invalid) {
    assert.throws(() => JSON.parse(text), text);
    assert.equal(jsonErrorOffset(text), offset, text);
  }
});
