// Used one-time values (client assertions' and DPoP proofs' jti) kept beside the WAL until they expire, so an
// assertion or proof used before a restart is refused after it, and a fresh one issued before it is accepted.
// The memory map (lib/replay-guard.ts) stays the check: it is loaded from the stored values at start, each first
// use is stored before its request is answered (one small LMDB put, batched with the others of the same
// moment), and each value is removed from both when the map sweeps it out as expired.
import { createHash } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import type { Format } from '../lib/versions.js';
import { createReplayGuard, type OnceCheck } from '../lib/replay-guard.js';
import type { KeyedRecords } from './keyed-records.js';

export const USED_ONCE_FORMAT: Format = { name: 'used one-time value', steps: [] };

export interface UsedOnceRecord {
  /** seconds: past it, the value is dropped */
  exp: number;
}

/**
 * `kind` keeps each use's values apart in the shared database (e.g. client_assertion, dpop). Keys are stored
 * as SHA-256 digests: fixed length whatever the value, and no client's jti is written out.
 */
export function createUsedOnce(clock: Pick<Clock, 'nowMs'>, records: KeyedRecords<UsedOnceRecord>, kind: string): OnceCheck & { readonly size: number } {
  const prefix = `${kind}\u001f`;
  // The map holds the same digests as the database, so the values loaded at start meet the ones offered later.
  const memory = createReplayGuard(clock, undefined, (digest) => void records.remove(prefix + digest));
  const nowS = Math.floor(clock.nowMs() / 1000);
  for (const { key, value } of records.prefixed(prefix)) {
    if (value.exp < nowS) void records.remove(key);
    else memory.firstUse(key.slice(prefix.length), value.exp);
  }
  return {
    async firstUse(key, expS) {
      const digest = createHash('sha256').update(key).digest('base64url');
      if (!memory.firstUse(digest, expS)) return false;
      await records.put(prefix + digest, { exp: expS });
      return true;
    },
    get size() {
      return memory.size;
    },
  };
}
