// Decisions about bulk imports: one batch of rows, each person created whole (PersonCreated with its event)
// or refused whole with the reason, the accepted ones recorded by one entry.
import { badRequest, conflict, ServiceError } from '../errors.js';
import type { Change } from './changes.js';
import type { ImportRow } from './commands.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { createPerson } from './persons.js';
import { handleKey, type OrgState } from './state.js';

/** rows one batch takes at most: the entry that records them stays a few hundred kilobytes */
export const MAX_IMPORT_BATCH = 1000;

export interface ImportRefusal {
  line: number;
  reason: string;
}

export interface ImportReply {
  created: number;
  refused: ImportRefusal[];
}

/**
 * Each row is decided against the state plus the rows accepted before it: a handle that an earlier row of the
 * batch took is a conflict, as it would be in the organization. A refused row leaves nothing behind.
 */
export function importPersons(state: OrgState, rows: readonly ImportRow[], ctx: DecideContext): Decision<ImportReply> {
  if (rows.length > MAX_IMPORT_BATCH) throw badRequest(`an import batch holds at most ${MAX_IMPORT_BATCH} rows`);
  const taken = new Map<string, number>();
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  const refused: ImportRefusal[] = [];
  for (const row of rows) {
    try {
      for (const h of row.input.handles) {
        const line = taken.get(handleKey(h));
        if (line !== undefined) throw conflict(`handle ${h.type} "${h.value}" is taken by line ${line} of this import`);
      }
      const d = createPerson(state, row.input, ctx, { verified_by: 'organization' });
      for (const h of row.input.handles) taken.set(handleKey(h), row.line);
      changes.push(...d.changes);
      events.push(...d.events);
    } catch (error) {
      // Only a refusal of the row's content; anything else is a defect and fails the batch.
      if (!(error instanceof ServiceError) || error.status >= 500) throw error;
      refused.push({ line: row.line, reason: error.message });
    }
  }
  return decision({ created: changes.filter((c) => c.t === 'PersonCreated').length, refused }, changes, events);
}
