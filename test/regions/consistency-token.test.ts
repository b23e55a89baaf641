// Consistency tokens against reference computations with node:crypto (createCipheriv and createHmac per call),
// tokens that must not open (forged, altered, truncated, issued under another secret or for another
// organization), and tokens of the first format, which must still open after the upgrade.
import assert from 'node:assert/strict';
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createConsistencyTokens, deriveTokenKeys } from '../../src/regions/consistency-token.js';
import { createFixedKeyHmac } from '../../src/regions/consistency-token-v1.js';

const NOT_ISSUED = 'not issued by this service';

/** The second format computed the plain way: a fresh HMAC and a fresh cipher for each token. */
function referenceToken(secret: Uint8Array, org: string, offset: number): string {
  const aesKey = createHmac('sha256', secret).update('consistency-token/2/aes').digest().subarray(0, 16);
  const tagKey = createHmac('sha256', secret).update('consistency-token/2/organization-tag').digest();
  const block = Buffer.alloc(16);
  createHmac('sha256', tagKey).update(org, 'utf8').digest().copy(block, 0, 0, 8);
  block.writeBigUInt64BE(BigInt(offset), 8);
  const cipher = createCipheriv('aes-128-ecb', aesKey, null).setAutoPadding(false);
  const mac = Buffer.concat([cipher.update(block), cipher.final()]);
  assert.equal(mac.length, 16);
  return `2~${Buffer.from(org, 'utf8').toString('base64url')}~${offset}.${mac.toString('base64url')}`;
}

/** The first format as the service minted it before the second: base64url(offset:org).HMAC-SHA256[0..16]. */
function v1Token(secret: Uint8Array, org: string, offset: number): string {
  const key = createHmac('sha256', secret).update('consistency-token').digest();
  const body = Buffer.from(`${offset}:${org}`, 'utf8').toString('base64url');
  return `${body}.${createHmac('sha256', key).update(body).digest().subarray(0, 16).toString('base64url')}`;
}

const ORGS = ['0190a0b1-aaaa-7000-8000-000000000000', 'org-1', 'an organization: with colons', 'é€😀', 'x'.repeat(150)];
const OFFSETS = [0, 1, 42, 0xffff_ffff, 0x1_0000_0000, 123_456_789_012, Number.MAX_SAFE_INTEGER];

describe('consistency tokens', () => {
  it("given keys and texts of every length, when MACed by the first format's HMAC, then the value is createHmac's", () => {
    for (const keyLength of [0, 1, 32, 64]) {
      const key = randomBytes(keyLength);
      const hmac = createFixedKeyHmac(key);
      for (const text of ['', 'MTI6b3JnLTE', 'x'.repeat(1000), 'é€😀'.repeat(200), 'a\ud800b']) {
        assert.deepEqual(hmac(text), createHmac('sha256', key).update(text).digest(), `key ${keyLength} bytes, text of ${text.length}`);
      }
    }
    assert.throws(() => createFixedKeyHmac(randomBytes(65)), /longer than one block/);
  });

  it('given organizations and offsets, when minted, then the token is the reference computation and opens to its mark', () => {
    const secret = randomBytes(32);
    const tokens = createConsistencyTokens(secret);
    for (const org of ORGS) {
      for (const offset of OFFSETS) {
        // Twice: the second mint comes from the organization's cached tag and prefix.
        for (let i = 0; i < 2; i++) {
          const token = tokens.mint(org, offset);
          assert.equal(token, referenceToken(secret, org, offset), `${org} at ${offset}`);
          assert.deepEqual(tokens.open(token), { org, offset });
        }
      }
    }
  });

  it('given offsets in order, backwards, across window edges and interleaved between organizations, when minted, then each token is the reference computation', () => {
    const secret = randomBytes(32);
    const tokens = createConsistencyTokens(secret);
    const order = [1, 2, 3, 16, 17, 18, 40, 35, 36, 34, 0, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 20, Number.MAX_SAFE_INTEGER - 3, Number.MAX_SAFE_INTEGER];
    for (let i = 1; i <= 100; i++) order.push(i);
    for (const offset of order) {
      for (const org of ['org-a', 'org-b']) assert.equal(tokens.mint(org, offset), referenceToken(secret, org, offset), `${org} at ${offset}`);
    }
  });

  it('given more organizations than are cached, when minted and opened again, then nothing changes', () => {
    const secret = randomBytes(32);
    const tokens = createConsistencyTokens(secret);
    const first = tokens.mint('org-0', 7);
    for (let i = 1; i <= 5000; i++) tokens.mint(`org-${i}`, i);
    assert.deepEqual(tokens.open(first), { org: 'org-0', offset: 7 });
    assert.equal(tokens.mint('org-0', 7), first);
    assert.equal(tokens.mint('org-1', 8), referenceToken(secret, 'org-1', 8));
    // A service restarted on the same secret opens what the one before it minted.
    assert.deepEqual(createConsistencyTokens(secret).open(first), { org: 'org-0', offset: 7 });
  });

  it('given a token forged, altered, truncated, or minted under another secret or for another organization, when opened, then it is refused', () => {
    const secret = randomBytes(32);
    const tokens = createConsistencyTokens(secret);
    const token = tokens.mint('org-1', 42);
    const [body, mac] = token.split('.') as [string, string];
    const orgText = Buffer.from('org-1').toString('base64url');
    const otherMac = tokens.mint('org-2', 42).split('.')[1] as string;
    const flipped = `${mac.slice(0, 5)}${mac[5] === 'A' ? 'B' : 'A'}${mac.slice(6)}`;
    const refused: Array<[string, string]> = [
      [`${body}.${flipped}`, NOT_ISSUED],
      [`${body}.${otherMac}`, NOT_ISSUED],
      [`2~${orgText}~43.${mac}`, NOT_ISSUED],
      [`2~${Buffer.from('org-2').toString('base64url')}~42.${mac}`, NOT_ISSUED],
      [createConsistencyTokens(randomBytes(32)).mint('org-1', 42), NOT_ISSUED],
      [`${body}.${randomBytes(16).toString('base64url')}`, NOT_ISSUED],
      [`${body}.${mac.slice(0, -2)}`, NOT_ISSUED],
      [token.slice(0, -1), NOT_ISSUED],
      [`${token}A`, NOT_ISSUED],
      // The same bytes spelt otherwise: characters outside base64url that latin1 would fold onto it.
      [`${body}.${mac.replace(/[A-Za-z]/, (c) => String.fromCharCode(c.charCodeAt(0) + 0x100))}`, NOT_ISSUED],
      [`${body}.${mac.slice(0, -1)}=`, NOT_ISSUED],
      [`2~${orgText}~042.${mac}`, 'malformed'],
      [`2~${orgText}~42é.${mac}`, 'malformed'],
      [`2~${orgText}~-1.${mac}`, 'malformed'],
      [`2~${orgText}~99999999999999999.${mac}`, 'malformed'],
      [`2~${orgText}=~42.${mac}`, 'malformed'],
      [`2~${orgText}!~42.${mac}`, 'malformed'],
      [`2~~42.${mac}`, 'malformed'],
      [`2~${Buffer.from([0xff, 0xfe]).toString('base64url')}~42.${mac}`, 'malformed'],
      [`2~${orgText}~42`, 'malformed'],
      [`2~${orgText}.${mac}`, 'malformed'],
      [body, 'malformed'],
      ['2~', 'malformed'],
      ['', 'malformed'],
      [`2~${'A'.repeat(300)}~42.${mac}`, 'malformed'],
    ];
    for (const [value, why] of refused) assert.equal(tokens.open(value), why, value);
    assert.deepEqual(tokens.open(token), { org: 'org-1', offset: 42 });
  });

  it('given tokens of the first format, when opened after the upgrade, then they name their mark; altered, they are refused', () => {
    // Minted by the service before the second format, under this secret.
    const tokens = createConsistencyTokens(Buffer.alloc(32, 1));
    const minted: Array<[string, number, string]> = [
      ['0190a0b1-aaaa-7000-8000-000000000000', 1, 'MTowMTkwYTBiMS1hYWFhLTcwMDAtODAwMC0wMDAwMDAwMDAwMDA.xNvxgqwBCxWraXgNSN8DhA'],
      ['0190a0b1-aaaa-7000-8000-000000000000', 123456789, 'MTIzNDU2Nzg5OjAxOTBhMGIxLWFhYWEtNzAwMC04MDAwLTAwMDAwMDAwMDAwMA.8WEA1cL1B9ouJhzXxlzDwg'],
      ['org-é', Number.MAX_SAFE_INTEGER, 'OTAwNzE5OTI1NDc0MDk5MTpvcmctw6k.MqIppdG5UYH04Qct4lLz5A'],
    ];
    for (const [org, offset, token] of minted) assert.deepEqual(tokens.open(token), { org, offset }, token);

    const secret = randomBytes(32);
    const current = createConsistencyTokens(secret);
    for (const org of ORGS) for (const offset of OFFSETS) assert.deepEqual(current.open(v1Token(secret, org, offset)), { org, offset });
    const token = v1Token(secret, 'org-1', 42);
    const [body, mac] = token.split('.') as [string, string];
    assert.equal(current.open(`${Buffer.from('43:org-1').toString('base64url')}.${mac}`), NOT_ISSUED);
    assert.equal(current.open(`${body}.${mac.slice(0, -2)}`), NOT_ISSUED);
    assert.equal(current.open(`${body}é.${mac}`), NOT_ISSUED);
    assert.equal(current.open(v1Token(randomBytes(32), 'org-1', 42)), NOT_ISSUED);
    assert.equal(current.open(body), 'malformed');
  });

  it('given the stored secret, when the keys are derived, then they are the second format\'s own, apart from the first\'s', () => {
    const secret = randomBytes(32);
    const keys = deriveTokenKeys(secret);
    const v1 = createHmac('sha256', secret).update('consistency-token').digest();
    assert.equal(keys.aes.length, 16);
    assert.notDeepEqual(keys.aes, v1.subarray(0, 16));
    assert.notDeepEqual(keys.tag, v1);
    assert.notDeepEqual(keys.tag.subarray(0, 16), keys.aes);
  });
});
