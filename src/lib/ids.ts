// Identifiers: UUIDv7 text (time-ordered, so creation order is key order), random UUIDv4 text, and random secrets.
import { randomBytes, randomFillSync } from 'node:crypto';

export interface IdSource {
  uuid(): string;
  secret(bytes?: number): string;
}

/** Random bytes drawn this many at a time: one call into the generator per 1024 ids, not one per id. */
const POOL_BYTES = 8 * 1024;
const DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * The 16 bytes at `at` as UUID text, its 36 characters written into `text` and read out as one string: joining
 * two-digit pieces instead built some twenty intermediate strings per id (about 500 bytes of heap).
 */
function uuidText(bytes: Uint8Array, at: number, text: Buffer): string {
  let j = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text[j++] = 0x2d; // '-'
    const b = bytes[at + i] as number;
    text[j++] = DIGITS[b >> 4] as number;
    text[j++] = DIGITS[b & 15] as number;
  }
  return text.toString('latin1', 0, 36);
}

interface RandomPool {
  readonly bytes: Buffer;
  /** Where the next n unused random bytes start in `bytes` (n divides POOL_BYTES), refilling it once all are used. */
  take(n: number): number;
}

function createRandomPool(): RandomPool {
  const bytes = Buffer.alloc(POOL_BYTES);
  let used = POOL_BYTES;
  return {
    bytes,
    take(n) {
      if (used === POOL_BYTES) {
        randomFillSync(bytes);
        used = 0;
      }
      const at = used;
      used += n;
      return at;
    },
  };
}

/**
 * Random UUIDv4 text (RFC 9562), drawn from a pool like createIdSource's: what node:crypto's randomUUID gives,
 * without the intermediate strings it joins per id.
 */
export function createRandomUuid(): () => string {
  const pool = createRandomPool();
  const text = Buffer.alloc(36);
  return () => {
    const at = pool.take(16);
    const bytes = pool.bytes;
    bytes[at + 6] = 0x40 | ((bytes[at + 6] as number) & 0x0f);
    bytes[at + 8] = 0x80 | ((bytes[at + 8] as number) & 0x3f);
    return uuidText(bytes, at, text);
  };
}

/** UUIDv7 with a monotonic counter in rand_a, so ids made in one millisecond still sort in creation order. */
export function createIdSource(now: () => number = Date.now): IdSource {
  let lastMs = 0;
  let counter = 0;
  const buf = Buffer.alloc(16);
  const text = Buffer.alloc(36);
  const pool = createRandomPool();
  return {
    uuid() {
      let ms = now();
      if (ms <= lastMs) {
        ms = lastMs;
        counter++;
        if (counter > 0xfff) {
          ms = ++lastMs;
          counter = 0;
        }
      } else {
        counter = 0;
      }
      lastMs = ms;
      const at = pool.take(8);
      pool.bytes.copy(buf, 8, at, at + 8);
      buf.writeUIntBE(ms, 0, 6);
      buf[6] = 0x70 | (counter >> 8);
      buf[7] = counter & 0xff;
      buf[8] = 0x80 | ((buf[8] ?? 0) & 0x3f);
      return uuidText(buf, 0, text);
    },
    secret(bytes = 32) {
      return randomBytes(bytes).toString('base64url');
    },
  };
}
