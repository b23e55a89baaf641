// Used one-time values (client assertions' and DPoP proofs' jti) kept in the data dir until they expire, so an
// assertion or proof used before a restart is refused after it, and a fresh one issued before it is accepted.
// The memory map (lib/replay-guard.ts) stays the check: it is loaded from the stored values at start, each first
// use is stored before its request is answered (one small LMDB put, batched with the others of the same
// moment), and each value is removed from both when the map sweeps it out as expired.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { open, type Database } from 'lmdb';
import type { Clock } from '../lib/clock.js';
import { createReplayGuard, type OnceCheck } from '../lib/replay-guard.js';

/**
 * A stored value is five bytes: its format version (1), then its expiry in seconds (uint32, big-endian). This is
 * on the token endpoint's path, so it is not a msgpack record; a later format takes the next version byte.
 */
const VERSION = 1;
function encodeUsedOnce(expS: number): Buffer {
  const out = Buffer.allocUnsafe(5);
  out[0] = VERSION;
  out.writeUInt32BE(expS, 1);
  return out;
}
/** the expiry, or undefined for a value this version does not know */
function decodeUsedOnce(value: Uint8Array): number | undefined {
  return value.length === 5 && value[0] === VERSION ? Buffer.from(value.buffer, value.byteOffset, 5).readUInt32BE(1) : undefined;
}

export interface UsedOnceStore {
  /** kind US SHA-256 of a one-time value (US: \u001f) → its expiry (encodeUsedOnce) */
  readonly db: Database<Buffer, string>;
  close(): Promise<void>;
}

/**
 * `${dataDir}/used-once.mdb`, an environment of its own that is never synced: a put is written to the operating
 * system when its promise resolves, so a restart or a crash of the process keeps every value, without an fsync
 * on the token endpoint's path (a synced commit per batch cut the DPoP rate by 40% in bench/oauth2.ts). An
 * operating system crash may lose the values of the last seconds; they are only a replay defence for proofs
 * and assertions that live one to ten minutes.
 */
export function openUsedOnceStore(dataDir: string): UsedOnceStore {
  const root = open<Buffer, string>({ path: join(dataDir, 'used-once.mdb'), noSync: true, encoding: 'binary' });
  return { db: root, close: () => root.close() };
}

/**
 * `kind` keeps each use's values apart in the shared database (e.g. client_assertion, dpop). Keys are stored
 * as SHA-256 digests: fixed length whatever the value, and no client's jti is written out.
 */
export function createUsedOnce(clock: Pick<Clock, 'nowMs'>, db: Database<Buffer, string>, kind: string): OnceCheck & { readonly size: number } {
  const prefix = `${kind}\u001f`;
  // The map holds the same digests as the database, so the values loaded at start meet the ones offered later.
  const memory = createReplayGuard(clock, undefined, (digest) => void db.remove(prefix + digest));
  const nowS = Math.floor(clock.nowMs() / 1000);
  for (const { key, value } of db.getRange({ start: prefix, end: `${prefix}\uffff` })) {
    const exp = decodeUsedOnce(value);
    // one this version cannot read was written by a later one: it is kept for that one, and this one forgets it
    if (exp === undefined) continue;
    if (exp < nowS) void db.remove(key);
    else memory.firstUse(key.slice(prefix.length), exp);
  }
  return {
    async firstUse(key, expS) {
      const digest = createHash('sha256').update(key).digest('base64url');
      if (!memory.firstUse(digest, expS)) return false;
      await db.put(prefix + digest, encodeUsedOnce(expS));
      return true;
    },
    get size() {
      return memory.size;
    },
  };
}
