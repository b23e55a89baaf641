// The chain's links against SHA-256 computed independently (node:crypto's createHash over the two parts), for
// the one-shot link and the linker that reuses its buffer, including events larger than that buffer.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createLinker, firstDifference, nextChain, ZERO_CHAIN } from '../../src/events/chain.js';

const reference = (previous: Uint8Array, bytes: Uint8Array) => createHash('sha256').update(previous).update(bytes).digest();

describe('event chain links', () => {
  it('given events of every size, when linked by nextChain and by one linker in turn, then each link is SHA-256(previous ‖ bytes)', () => {
    const link = createLinker();
    const sizes = [0, 1, 31, 300, 4064, 4065, 10_000, 5];
    let previous: Buffer = ZERO_CHAIN;
    const links: Buffer[] = [];
    const expectedLinks: Buffer[] = [];
    for (const size of sizes) {
      const bytes = randomBytes(size);
      const expected = reference(previous, bytes);
      assert.deepEqual(nextChain(previous, bytes), expected);
      const linked = link(previous, bytes);
      assert.deepEqual(linked, expected);
      links.push(linked);
      expectedLinks.push(Buffer.from(expected));
      previous = linked;
    }
    // A link handed out is the caller's: the linker's reused buffer does not change it afterwards.
    assert.deepEqual(links, expectedLinks);
  });

  it('given a chain with one event altered, when verified, then the first difference is that event', () => {
    const events = [1, 2, 3, 4].map((i) => Buffer.from(`event ${i}`));
    let previous: Buffer = ZERO_CHAIN;
    const items = events.map((bytes, i) => ({ offset: i + 1, bytes: bytes as Uint8Array, chain: (previous = reference(previous, bytes)) as Uint8Array }));
    assert.equal(firstDifference(ZERO_CHAIN, items), undefined);
    const altered = items.map((item) => (item.offset === 3 ? { ...item, bytes: Buffer.from('event x') } : item));
    assert.equal(firstDifference(ZERO_CHAIN, altered), 3);
  });
});
