// Regional events and their twins. A regional change is announced twice: as X_InRegion_v1 (with the local
// region) when it commits here, and as X_v1 once every configured region has applied it. The plain forms
// not yet due are kept in the organization's state, so that a restart still owes them.
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import type { OrgState } from './state.js';

/** SuborganizationCreated_v1 → SuborganizationCreated_InRegion_v1 */
export function inRegionName(name: string): string {
  return name.replace(/_v(\d+)$/, '_InRegion_v$1');
}

/**
 * Expands a decision's regional drafts. Each becomes its _InRegion form in place; its plain form is owed by
 * the entry the decision becomes (state.offset + 1), or, with no other region to wait for, emitted by the
 * same entry after all of its other events, as it would be once that entry were everywhere.
 */
export function withTwins<R>(state: OrgState, d: Decision<R>, ctx: DecideContext): Decision<R> {
  if (!d.events.some((e) => e.regional)) return d;
  const local = ctx.regions[0] as string;
  const alone = ctx.regions.length <= 1;
  const entry = state.offset + 1;
  const now: EventDraft[] = [];
  const due: EventDraft[] = [];
  const owed: Change[] = [];
  for (const e of d.events) {
    if (!e.regional) {
      now.push(e);
      continue;
    }
    now.push({ name: inRegionName(e.name), body: { ...e.body, region: local } });
    if (alone) due.push({ name: e.name, body: e.body });
    else owed.push({ t: 'TwinOwed', twin: { offset: entry, name: e.name, body: e.body } });
  }
  return { ...d, changes: [...d.changes, ...owed], events: [...now, ...due] };
}

/**
 * Every region holds the entries up to `through`: emits the twins they owe, in entry order, and stops owing
 * them in the same entry. Nothing owed up to there (already emitted, or never owed) decides nothing.
 */
export function emitOwedTwins(state: OrgState, through: number): Decision<{ emitted: number }> {
  const due = state.owed_twins.filter((t) => t.offset <= through);
  if (due.length === 0) return decision({ emitted: 0 });
  return decision({ emitted: due.length }, [{ t: 'TwinsEmitted', through }], due.map((t) => ({ name: t.name, body: t.body })));
}
