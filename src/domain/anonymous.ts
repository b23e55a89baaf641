// Decisions about anonymous persons: created with their first token, upgraded by a registration, discarded by
// a sign-in to another person, deleted once their fixed lifetime is over.
import { conflict } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type Decision, type EventDraft } from './decision.js';
import { handlesOf } from './persons.js';
import { handleKey, type Handle, type HandleVerification, type OrgState, type Person } from './state.js';

export const ANONYMOUS = 'anonymous';

/** Whether the person is anonymous and its lifetime is over at `nowMs`. */
export const expired = (p: Person, nowMs: number) => p.person_type === 'anonymous' && p.anonymous_expires_ms !== undefined && p.anonymous_expires_ms <= nowMs;

/** The anonymous person a token's entry creates, and AnonymousPersonCreated; its token's event follows it. */
export function anonymousCreated(person: Person, analytics_metadata: object): { changes: Change[]; events: EventDraft[] } {
  return {
    changes: [{ t: 'PersonCreated', person }],
    events: [{ name: 'AnonymousPersonCreated_v1', body: { analytics_metadata, person_id: person.person_id, region: person.region } }],
  };
}

/**
 * A registration while holding an anonymous person's token: that same person gets the handle and becomes
 * regular, announced as created with prev_person_type. Upgraded or deleted meanwhile: a conflict, nothing changes.
 */
export function upgradeAnonymous(state: OrgState, personId: string, handle: Handle, analytics_metadata: object, verified: HandleVerification | null): { changes: Change[]; events: EventDraft[] } {
  const person = state.persons.get(personId);
  if (!person || person.person_type !== 'anonymous') throw conflict(`the anonymous person ${personId} was upgraded or deleted meanwhile`);
  if (state.handles.has(handleKey(handle))) throw conflict(`a person with handle ${handle.type} "${handle.value}" already exists`);
  const handles = [...person.handles, { type: handle.type, value: handle.value }];
  return {
    changes: [{ t: 'AnonymousPersonUpgraded', person_id: personId, handles: [{ type: handle.type, value: handle.value }], verified }],
    events: [
      {
        name: 'PersonCreated_v1',
        body: {
          analytics_metadata,
          person_id: personId,
          region: person.region,
          handles: handlesOf({ handles }),
          gdpr_consents: person.gdpr_consents.map((c) => c.consent_level),
          prev_person_type: ANONYMOUS,
        },
      },
    ],
  };
}

const deleted = (p: Person): { changes: Change[]; events: EventDraft[] } => ({
  changes: [{ t: 'PersonDeleted', person_id: p.person_id }],
  events: [{ name: 'PersonDeleted_v1', body: { person_id: p.person_id, region: p.region, handles: handlesOf(p), groups: [...p.groups] } }],
});

/** A sign-in to another person while holding an anonymous token: the anonymous person is deleted (if it still is one). */
export function discardAnonymous(state: OrgState, anonymousId: string, signedInId: string): { changes: Change[]; events: EventDraft[] } {
  const p = state.persons.get(anonymousId);
  if (!p || p.person_type !== 'anonymous' || anonymousId === signedInId) return { changes: [], events: [] };
  return deleted(p);
}

/** Every anonymous person whose lifetime is over at `nowMs`, deleted with PersonDeleted. */
export function expireAnonymousPersons(state: OrgState, nowMs: number): Decision<number> {
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  for (const p of state.persons.values()) {
    if (!expired(p, nowMs)) continue;
    const d = deleted(p);
    changes.push(...d.changes);
    events.push(...d.events);
  }
  return decision(events.length, changes, events);
}
