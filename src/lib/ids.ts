// Identifiers: UUIDv7 text (time-ordered, so creation order is key order) and random secrets.
import { randomBytes, randomFillSync } from 'node:crypto';

export interface IdSource {
  uuid(): string;
  secret(bytes?: number): string;
}

/** Random bytes drawn this many at a time: one call into the generator per 1024 ids, not one per id. */
const POOL_BYTES = 8 * 1024;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** UUIDv7 with a monotonic counter in rand_a, so ids made in one millisecond still sort in creation order. */
export function createIdSource(now: () => number = Date.now): IdSource {
  let lastMs = 0;
  let counter = 0;
  const buf = Buffer.alloc(16);
  const pool = Buffer.alloc(POOL_BYTES);
  let used = POOL_BYTES;
  const hex = (from: number, to: number) => {
    let out = '';
    for (let i = from; i < to; i++) out += HEX[buf[i] as number];
    return out;
  };
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
      if (used === POOL_BYTES) {
        randomFillSync(pool);
        used = 0;
      }
      pool.copy(buf, 8, used, used + 8);
      used += 8;
      buf.writeUIntBE(ms, 0, 6);
      buf[6] = 0x70 | (counter >> 8);
      buf[7] = counter & 0xff;
      buf[8] = 0x80 | ((buf[8] ?? 0) & 0x3f);
      return `${hex(0, 4)}-${hex(4, 6)}-${hex(6, 8)}-${hex(8, 10)}-${hex(10, 16)}`;
    },
    secret(bytes = 32) {
      return randomBytes(bytes).toString('base64url');
    },
  };
}
