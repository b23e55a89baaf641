// The envelope is exactly JSON.stringify of {result?, meta?}, whichever shortcut writes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { envelope } from '../../src/http/respond.js';

const strings = ['', 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.sig-_', 'a"b', 'back\\slash', 'tab\there', 'nl\n', '\u0000\u001f\u007f', 'lone \ud800 high', 'lone \udfff low', 'pair 😀', 'line\u2028sep', 'zoë', '</script>'];

test('given any result, with or without meta, then the envelope is what JSON.stringify writes', () => {
  const results: unknown[] = [undefined, null, 0, -1.5, true, [], {}, { a: [1, 'two'] }, ...strings];
  for (const result of results) {
    for (const meta of [undefined, { total: 3 }]) {
      const expected = JSON.stringify({ ...(result === undefined ? {} : { result }), ...(meta === undefined ? {} : { meta }) });
      assert.equal(envelope({ status: 200, result, meta }), expected, JSON.stringify(result));
      assert.deepEqual(JSON.parse(envelope({ status: 200, result, meta })), JSON.parse(expected));
    }
  }
});
