// Consistency tokens: what a write answers in Service-Consistency-Token, naming its organization and WAL offset,
// authenticated with keys derived from the service's stored secret, so that a token is only ever one this service
// issued. Opaque to clients: they hand it back to GET /consistency/{token} or with a read.
//
// Every write answers one, so minting is on the write path and must cost about a microsecond. The token is
// `2~base64url(org)~offset.MAC`, and MAC = AES-128_k(tag(org) ‖ offset as 8 bytes big-endian), tag(org) = the
// first 8 bytes of HMAC-SHA256_k'(org). AES under a secret key is a pseudorandom permutation of 16-byte blocks,
// hence a pseudorandom function on them, and a PRF on a fixed-length input is a MAC: a token for a block never
// minted is a 2^-128 guess. The block encodes (tag, offset) one-to-one, so two marks share a MAC only if two
// organizations share a tag (chance about N²/2^65 for N organizations, 3·10^-8 at a million), and then a token
// of one could name the same offset in the other, which only tells whether that offset was applied. AES runs as
// a long-lived ECB cipher (no padding, no state carried between blocks), whose cost per call is mostly the
// call: an organization's writes take consecutive offsets, so mint encrypts the blocks of the next WINDOW
// offsets in one call and keeps them, and the writes after it are answered from those (a MAC computed ahead
// is never handed out for a write that did not happen: only mint, after the write, reads it). The tag and the
// token's text up to its offset are kept per organization. The first format (HMAC over the whole text) still
// opens: consistency-token-v1.ts.
import { createCipheriv, createHmac, timingSafeEqual, type Cipher } from 'node:crypto';
import { createV1Opener } from './consistency-token-v1.js';

export const CONSISTENCY_TOKEN_HEADER = 'Service-Consistency-Token';

export interface ConsistencyMark {
  org: string;
  /** the WAL offset of the write */
  offset: number;
}

export interface ConsistencyTokens {
  mint(org: string, offset: number): string;
  /** The mark, or a message saying what is wrong with the token (malformed, or not issued by this service). */
  open(token: string): ConsistencyMark | string;
}

/** What the second format starts with: no first-format token can (their text is base64url and one dot). */
const V2 = '2~';

/** The MAC in the token: 16 bytes in base64url, 22 characters of its alphabet (\w without the u flag is ASCII). */
const MAC_TEXT = /^[\w-]{22}$/;

/** Organizations whose tag and prefix are kept; past it the oldest is dropped and recomputed when next seen. */
const CACHED_ORGANIZATIONS = 4096;

/** The same bound as the first format's: room for any organization id. */
const MAX_TOKEN = 256;

/** Offsets whose MACs one mint computes ahead: one AES call for 16 blocks costs about what one block's call does. */
const WINDOW = 16;

interface OrgKey {
  /** `2~base64url(org)~`: the token's text before its offset */
  prefix: string;
  /** tag(org) in bytes 0–7; bytes 8–15 take the offset of each block */
  block: Buffer;
  /** the MACs of offsets first … first + WINDOW - 1, 16 bytes each, once mint has needed one */
  macs: Buffer | undefined;
  first: number;
}

/** The two keys of the second format, each derived from the stored secret under a label of its own. */
export function deriveTokenKeys(secret: Uint8Array): { aes: Buffer; tag: Buffer } {
  return {
    aes: createHmac('sha256', secret).update('consistency-token/2/aes').digest().subarray(0, 16),
    tag: createHmac('sha256', secret).update('consistency-token/2/organization-tag').digest(),
  };
}

export function createConsistencyTokens(secret: Uint8Array): ConsistencyTokens {
  const keys = deriveTokenKeys(secret);
  // ECB without padding: each 16-byte update is one independent AES block, returned at once; final() is never called.
  const aes: Cipher = createCipheriv('aes-128-ecb', keys.aes, null).setAutoPadding(false);
  const openV1 = createV1Opener(secret);
  const cache = new Map<string, OrgKey>();

  const orgKey = (org: string): OrgKey => {
    const block = Buffer.alloc(16);
    createHmac('sha256', keys.tag).update(org).digest().copy(block, 0, 0, 8);
    return { prefix: `${V2}${Buffer.from(org, 'utf8').toString('base64url')}~`, block, macs: undefined, first: 0 };
  };

  const writeOffset = (block: Buffer, at: number, offset: number) => {
    block.writeUInt32BE(Math.floor(offset / 0x1_0000_0000), at + 8);
    block.writeUInt32BE(offset >>> 0, at + 12);
  };

  const mac = (k: OrgKey, offset: number): string => {
    writeOffset(k.block, 0, offset);
    return aes.update(k.block).toString('base64url');
  };

  const blocks = Buffer.alloc(16 * WINDOW);
  /** The MAC of offset from the organization's window, encrypting the window from offset on when it is not in it. */
  const macAhead = (k: OrgKey, offset: number): string => {
    let i = offset - k.first;
    if (k.macs === undefined || i < 0 || i >= WINDOW) {
      for (let j = 0; j < WINDOW; j++) {
        k.block.copy(blocks, 16 * j, 0, 8);
        writeOffset(blocks, 16 * j, offset + j);
      }
      k.macs = aes.update(blocks);
      k.first = offset;
      i = 0;
    }
    return k.macs.toString('base64url', 16 * i, 16 * i + 16);
  };

  return {
    mint(org, offset) {
      let k = cache.get(org);
      if (k === undefined) {
        if (cache.size >= CACHED_ORGANIZATIONS) cache.delete(cache.keys().next().value as string);
        cache.set(org, (k = orgKey(org)));
      }
      return `${k.prefix}${offset}.${macAhead(k, offset)}`;
    },
    open(token) {
      if (!token.startsWith(V2)) return openV1(token);
      if (token.length > MAX_TOKEN) return 'malformed';
      const tilde = token.indexOf('~', V2.length);
      const dot = token.indexOf('.', tilde + 1);
      if (tilde < 0 || dot < 0) return 'malformed';
      const encoded = token.slice(V2.length, tilde);
      const org = Buffer.from(encoded, 'base64url').toString('utf8');
      // Only the text mint writes: one spelling per mark, so an altered token never opens to the same one.
      if (org === '' || Buffer.from(org, 'utf8').toString('base64url') !== encoded) return 'malformed';
      const digits = token.slice(tilde + 1, dot);
      const offset = Number(digits);
      if (!/^\d{1,16}$/.test(digits) || !Number.isSafeInteger(offset) || String(offset) !== digits) return 'malformed';
      const given = token.slice(dot + 1);
      if (!MAC_TEXT.test(given)) return 'not issued by this service';
      const expected = mac(cache.get(org) ?? orgKey(org), offset);
      // Both texts are base64url, one byte a character in latin1.
      if (!timingSafeEqual(Buffer.from(given, 'latin1'), Buffer.from(expected, 'latin1'))) return 'not issued by this service';
      return { org, offset };
    },
  };
}
