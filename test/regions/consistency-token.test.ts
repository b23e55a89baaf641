// Consistency tokens' MAC against node:crypto's createHmac, and tokens that must not open: forged, altered,
// truncated, or issued under another secret.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createConsistencyTokens, createFixedKeyHmac } from '../../src/regions/consistency-token.js';

describe('consistency tokens', () => {
  it('given keys and texts of every length, when MACed, then the value is createHmac\'s', () => {
    for (const keyLength of [0, 1, 32, 64]) {
      const key = randomBytes(keyLength);
      const hmac = createFixedKeyHmac(key);
      for (const text of ['', 'MTI6b3JnLTE', 'x'.repeat(1000), 'é€😀'.repeat(200), 'a\ud800b']) {
        assert.deepEqual(hmac(text), createHmac('sha256', key).update(text).digest(), `key ${keyLength} bytes, text of ${text.length}`);
      }
    }
    assert.throws(() => createFixedKeyHmac(randomBytes(65)), /longer than one block/);
  });

  it('given a minted token, when opened, then it names its organization and offset', () => {
    const tokens = createConsistencyTokens(randomBytes(32));
    for (const [org, offset] of [['org-1', 12], ['an organization: with colons', 1], ['é', Number.MAX_SAFE_INTEGER]] as const) {
      assert.deepEqual(tokens.open(tokens.mint(org, offset)), { org, offset });
    }
  });

  it('given a token altered, truncated, or minted under another secret, when opened, then it is refused', () => {
    const tokens = createConsistencyTokens(randomBytes(32));
    const token = tokens.mint('org-1', 42);
    const [body, mac] = token.split('.') as [string, string];
    const otherBody = Buffer.from('43:org-1').toString('base64url');
    assert.equal(tokens.open(`${otherBody}.${mac}`), 'not issued by this service');
    assert.equal(tokens.open(`${body}.${mac.slice(0, -2)}`), 'not issued by this service');
    assert.equal(tokens.open(createConsistencyTokens(randomBytes(32)).mint('org-1', 42)), 'not issued by this service');
    assert.equal(tokens.open(`${body}é.${mac}`), 'not issued by this service');
    assert.equal(tokens.open(body), 'malformed');
  });
});
