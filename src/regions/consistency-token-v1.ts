// Consistency tokens of the first format (`base64url(offset:org).MAC`, the MAC 128 bits of HMAC-SHA256), opened
// only: the service mints the second format now (consistency-token.ts), but a client may hold one of these across
// the upgrade, and it must keep naming its write.
import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import type { ConsistencyMark } from './consistency-token.js';

/** 128 bits of HMAC-SHA256: forging one is out of reach, and the token stays short. */
const MAC_BYTES = 16;

/** SHA-256's block size: HMAC pads its key to it. */
const BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) under a fixed key of at most one block, as two one-shot hashes over a reused buffer:
 * H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)). Exactly createHmac's value, without the Hmac object, the key's native
 * import and the digest's copies that createHmac makes on every call, which cost more than the hashing of
 * a short body. `m` is hashed as UTF-8, as createHmac's update does with a string: a token presented to open()
 * may hold any characters, and two different ones must never hash alike.
 */
export function createFixedKeyHmac(key: Uint8Array): (text: string) => Buffer {
  if (key.byteLength > BLOCK) throw new Error('createFixedKeyHmac: the key is longer than one block');
  // Room for any token open() looks at (256 characters, at most 3 bytes each in UTF-8) without allocating.
  const inner = Buffer.alloc(BLOCK + 1024);
  const outer = Buffer.alloc(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const k = key[i] ?? 0;
    inner[i] = k ^ 0x36;
    outer[i] = k ^ 0x5c;
  }
  return (text) => {
    let scratch = inner;
    if (text.length * 3 > inner.byteLength - BLOCK) {
      scratch = Buffer.allocUnsafe(BLOCK + Buffer.byteLength(text));
      inner.copy(scratch, 0, 0, BLOCK);
    }
    const n = scratch.write(text, BLOCK, 'utf8');
    outer.set(hash('sha256', scratch.subarray(0, BLOCK + n), 'buffer'), BLOCK);
    return hash('sha256', outer, 'buffer');
  };
}

/** The opener of first-format tokens under the service's stored secret (the key derivation is the first format's). */
export function createV1Opener(secret: Uint8Array): (token: string) => ConsistencyMark | string {
  const key = createHmac('sha256', secret).update('consistency-token').digest();
  const hmac = createFixedKeyHmac(key);
  const mac = (body: string) => hmac(body).subarray(0, MAC_BYTES);
  return (token) => {
    const dot = token.indexOf('.');
    if (token.length > 256 || dot <= 0) return 'malformed';
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(body))) return 'not issued by this service';
    const text = Buffer.from(body, 'base64url').toString('utf8');
    const m = /^(\d{1,16}):(.+)$/s.exec(text);
    const offset = Number(m?.[1]);
    if (!m || !Number.isSafeInteger(offset)) return 'malformed';
    return { org: m[2] as string, offset };
  };
}
