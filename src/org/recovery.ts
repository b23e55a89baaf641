// Rebuilding an organization's state at start: its snapshot, then the WAL entries after it.
import { apply } from '../domain/apply.js';
import type { Change } from '../domain/changes.js';
import { fromSnapshot, type StateSnapshot } from '../domain/snapshot.js';
import type { OrgState } from '../domain/state.js';
import type { Wal } from '../wal/log.js';

export interface Recovered {
  state: OrgState;
  snapshotOffset: number;
  replayed: number;
  cutAt?: number;
}

export async function recoverOrg(wal: Wal, org: string): Promise<Recovered | undefined> {
  const snapshot = wal.loadSnapshot<StateSnapshot>(org);
  let state: OrgState | undefined = snapshot ? fromSnapshot(snapshot.state) : undefined;
  let replayed = 0;
  const result = await wal.replay<Change>(org, snapshot?.offset ?? 0, snapshot?.event_offset ?? 0, (offset, entry) => {
    for (const change of entry.changes) {
      if (change.t === 'OrgCreated') state = apply(undefined as unknown as OrgState, change);
      else if (state) state = apply(state, change);
    }
    if (state) {
      state.offset = offset;
      state.event_offset = entry.ev;
    }
    replayed++;
  });
  if (!state) return undefined;
  const out: Recovered = { state, snapshotOffset: snapshot?.offset ?? 0, replayed };
  if (result.cutAt !== undefined) out.cutAt = result.cutAt;
  return out;
}
