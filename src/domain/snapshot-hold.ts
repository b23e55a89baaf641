// The persons of a snapshot as they were when it began, while it is packed over many turns of the event loop
// (at a million persons packing takes seconds, and the organization goes on changing meanwhile). Copy on write:
// apply() hands every person it is about to change or delete to keepBeforeChange, which keeps one copy of it
// for each snapshot still packing; the snapshot reads the kept copy, or the person itself if it never changed.
import type { OrgState, Person } from './state.js';

const holds = new WeakMap<OrgState, Set<Map<string, Person>>>();

/** A copy as deep as apply() reaches: it replaces a person's fields and attribute buckets, and pushes to its handles. */
const copy = (p: Person): Person => ({ ...p, handles: [...p.handles], attributes: { ...p.attributes } });

/** Called by apply() before it changes or deletes a person in place; one map lookup when no snapshot is packing. */
export function keepBeforeChange(state: OrgState, p: Person): void {
  const held = holds.get(state);
  if (held === undefined) return;
  for (const kept of held) if (!kept.has(p.person_id)) kept.set(p.person_id, copy(p));
}

export interface HeldPersons {
  /** persons in the state when the hold began */
  readonly length: number;
  /** persons from..to - 1 of person_order as they were when the hold began */
  slice(from: number, to: number): Person[];
  /** ends the hold: later changes are no longer copied */
  release(): void;
}

export function holdPersons(state: OrgState): HeldPersons {
  const order = state.person_order.slice();
  const kept = new Map<string, Person>();
  let held = holds.get(state);
  if (held === undefined) holds.set(state, (held = new Set()));
  held.add(kept);
  const all = held;
  return {
    length: order.length,
    slice(from, to) {
      const out: Person[] = [];
      for (let i = from; i < to; i++) {
        const id = order[i] as string;
        out.push(kept.get(id) ?? (state.persons.get(id) as Person));
      }
      return out;
    },
    release() {
      all.delete(kept);
      if (all.size === 0 && holds.get(state) === all) holds.delete(state);
    },
  };
}
