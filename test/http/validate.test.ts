// The JSON depth check refuses exactly the texts nested deeper than the limit, whether the quick count of
// opening brackets settles it or the scan by character has to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDepth } from '../../src/http/validate.js';

const refuses = (text: string, max: number) => assert.throws(() => checkDepth(text, max), (e: Error) => e.message === `body: JSON nested deeper than ${max} levels`, text.slice(0, 40));

test('given nesting up to the limit, then it passes; one level more, then a 400 naming the limit', () => {
  for (const [open, close] of [['[', ']'], ['{"a":', '}']] as const) {
    checkDepth(open.repeat(64) + close.repeat(64), 64);
    refuses(open.repeat(65) + close.repeat(65), 64);
    // Unclosed: still the depth, not the JSON, is what is refused first.
    refuses(open.repeat(65), 64);
  }
  checkDepth('[{"a":[{}]}]', 4);
  refuses('[{"a":[{"b":[]}]}]', 4);
});

test('given many brackets that do not nest, or nest only inside strings, then it passes', () => {
  checkDepth(`[${'[],'.repeat(200)}[]]`, 64);
  checkDepth(`{"a":"${'['.repeat(200)}","b":"${'{'.repeat(200)}"}`, 64);
  checkDepth(`["\\"${'['.repeat(100)}"]`, 64);
  refuses(`["${'['.repeat(100)}",${'['.repeat(64)}`, 64);
});

test('given a short text, then it passes whatever it holds', () => {
  for (const text of ['', '{}', '[[[[', '"[[[["', '{"person_id":"p","permission_name":"documents:read"}']) checkDepth(text, 64);
  refuses('[[[[[', 4);
});
