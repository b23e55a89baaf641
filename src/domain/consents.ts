// Decisions about a person's GDPR consents: the set is replaced whole; a level kept keeps its created_at.
import { rfc3339Nanos } from '../lib/time-text.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { requirePerson } from './lookup.js';
import type { ConsentLevel, GdprConsent, OrgState } from './state.js';

export function setGdprConsents(state: OrgState, personId: string, levels: readonly ConsentLevel[], ctx: DecideContext): Decision<GdprConsent[]> {
  const person = requirePerson(state, personId);
  const old = person.gdpr_consents;
  const createdAt = rfc3339Nanos(BigInt(ctx.nowMs) * 1_000_000n);
  const next = [...new Set(levels)].map((level) => old.find((c) => c.consent_level === level) ?? { consent_level: level, created_at: createdAt });
  const same = next.length === old.length && next.every((c) => old.includes(c));
  if (same) return decision(old);
  return decision(next, [{ t: 'GdprConsentsSet', person_id: personId, consents: next }], [
    { name: 'GdprConsentsChanged_v1', body: { person_id: personId, new_gdpr_consents: next, old_gdpr_consents: old } },
  ]);
}

/** POST: the levels join the set; the set before keeps its order and its created_at. */
export function addGdprConsents(state: OrgState, personId: string, levels: readonly ConsentLevel[], ctx: DecideContext): Decision<GdprConsent[]> {
  const held = requirePerson(state, personId).gdpr_consents.map((c) => c.consent_level);
  return setGdprConsents(state, personId, [...held, ...levels], ctx);
}
