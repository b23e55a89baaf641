// A WAL entry as stored: its format version, commit time, changes and event offset, and the upgrade steps
// that read entries written by earlier versions. A change of an entry's shape (a change renamed, a field of
// a change made required) appends a step here; a new kind of change needs none, old entries simply lack it.
import { currentVersion, upgrade, type Format, type StoredRecord } from '../lib/versions.js';
import { CorruptRecordError, decodeRecord, encodeRecord } from './codec.js';

export interface WalEntry<C = unknown> {
  /** commit time, ms since the epoch */
  at: number;
  changes: C[];
  /** the organization's last event offset once this entry is applied */
  ev: number;
}

export const WAL_ENTRY_FORMAT: Format = {
  name: 'WAL entry',
  steps: [
    // 0 → 1: entries gained `v`; their fields are unchanged.
    (entry) => entry,
  ],
};

const VERSION = currentVersion(WAL_ENTRY_FORMAT);

/** The version costs one small integer per record: the key `v` and a one-byte value. */
export function encodeEntry(entry: WalEntry): Buffer {
  return encodeRecord({ v: VERSION, at: entry.at, changes: entry.changes, ev: entry.ev });
}

/** Verifies and decodes an entry of any known version into the current shape. */
export function decodeEntry<C>(bytes: Uint8Array): WalEntry<C> {
  const stored = decodeRecord<StoredRecord | null>(bytes);
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) throw new CorruptRecordError('WAL entry is not a map');
  return stored.v === VERSION ? (stored as unknown as WalEntry<C>) : upgrade<WalEntry<C>>(WAL_ENTRY_FORMAT, stored);
}
