// Identifiers: UUIDv7 text (time-ordered, so creation order is key order) and random secrets.
import { randomBytes, randomFillSync } from 'node:crypto';

export interface IdSource {
  uuid(): string;
  secret(bytes?: number): string;
}

/** UUIDv7 with a monotonic counter in rand_a, so ids made in one millisecond still sort in creation order. */
export function createIdSource(now: () => number = Date.now): IdSource {
  let lastMs = 0;
  let counter = 0;
  const buf = Buffer.alloc(16);
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
      randomFillSync(buf, 8, 8);
      buf.writeUIntBE(ms, 0, 6);
      buf[6] = 0x70 | (counter >> 8);
      buf[7] = counter & 0xff;
      buf[8] = 0x80 | ((buf[8] ?? 0) & 0x3f);
      const h = buf.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    },
    secret(bytes = 32) {
      return randomBytes(bytes).toString('base64url');
    },
  };
}
