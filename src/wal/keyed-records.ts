// A named LMDB database of records by string key, each framed and versioned like every stored record, for
// state that is no organization's log but must outlive a restart (the SSO sign-ins in flight).
import type { Database } from 'lmdb';
import { upgrade, currentVersion, type Format, type StoredRecord } from '../lib/versions.js';
import { decodeRecord, encodeRecord } from './codec.js';

export interface KeyedRecords<T> {
  /** Every stored record, in key order; one that cannot be decoded is skipped and removed (it was never acknowledged). */
  all(): Array<{ key: string; value: T }>;
  /** The records whose key starts with `prefix`, in key order. */
  prefixed(prefix: string): Array<{ key: string; value: T }>;
  get(key: string): T | undefined;
  /** Resolves once committed (durably, when the store syncs). */
  put(key: string, value: T): Promise<void>;
  remove(key: string): Promise<void>;
}

export function createKeyedRecords<T extends object>(db: Database<Buffer, string>, format: Format): KeyedRecords<T> {
  const version = currentVersion(format);
  const read = (range: Iterable<{ key: string; value: Buffer }>) => {
    const out: Array<{ key: string; value: T }> = [];
    for (const { key, value } of range) {
      try {
        out.push({ key, value: upgrade<T>(format, decodeRecord<StoredRecord>(value)) });
      } catch {
        void db.remove(key);
      }
    }
    return out;
  };
  return {
    // The greatest code unit ends the prefix's range: keys are plain strings of smaller ones.
    prefixed: (prefix) => read(db.getRange({ start: prefix, end: `${prefix}\uffff` })),
    get(key) {
      const value = db.get(key);
      return value === undefined ? undefined : upgrade<T>(format, decodeRecord<StoredRecord>(value));
    },
    all: () => read(db.getRange()),
    put: async (key, value) => void (await db.put(key, encodeRecord({ ...value, v: version }))),
    remove: async (key) => void (await db.remove(key)),
  };
}
