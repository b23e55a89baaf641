// Rebuilding an organization's state at start: its snapshot, then the WAL entries after it.
import { applyEntry } from '../domain/apply.js';
import type { Change } from '../domain/changes.js';
import { fromSnapshot } from '../domain/snapshot.js';
import type { OrgState } from '../domain/state.js';
import type { StoredRecord } from '../lib/versions.js';
import type { Wal } from '../wal/log.js';

export interface Recovered {
  state: OrgState;
  snapshotOffset: number;
  replayed: number;
  cutAt?: number;
}

export async function recoverOrg(wal: Wal, org: string): Promise<Recovered | undefined> {
  // Of whichever format version wrote it: fromSnapshot upgrades it, and takes the decoded objects as they are.
  const snapshot = wal.loadSnapshot<StoredRecord>(org);
  let state: OrgState | undefined = snapshot ? fromSnapshot(snapshot.state, true) : undefined;
  let replayed = 0;
  const result = await wal.replay<Change>(org, snapshot?.offset ?? 0, snapshot?.event_offset ?? 0, (offset, entry) => {
    state = applyEntry(state, { offset, changes: entry.changes, ev: entry.ev });
    replayed++;
  });
  if (!state) return undefined;
  const out: Recovered = { state, snapshotOffset: snapshot?.offset ?? 0, replayed };
  if (result.cutAt !== undefined) out.cutAt = result.cutAt;
  return out;
}
