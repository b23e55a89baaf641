// Given/when/then for the pure core: a state built by apply() from past changes, a command decided with a
// fixed context, and the state after applying what was decided.
import assert from 'node:assert/strict';
import { apply } from '../../src/domain/apply.js';
import type { Change } from '../../src/domain/changes.js';
import type { Command } from '../../src/domain/commands.js';
import { decide } from '../../src/domain/decide.js';
import type { DecideContext, Decision } from '../../src/domain/decision.js';
import { toSnapshot } from '../../src/domain/snapshot.js';
import { emptyState, type OrgGenesis, type OrgState, type Person } from '../../src/domain/state.js';
import { ServiceError, type ErrorCode } from '../../src/errors.js';
import { isEventMessageName } from '../../src/events/catalog.js';

export const GENESIS: OrgGenesis = { id: 'org-1', org_name: 'root', parent_id: null, root_id: 'org-1', api_key_hash: 'hash:key-0', created: '2024-01-01T00:00:00.000Z' };
export const NOW_MS = Date.UTC(2024, 5, 1, 12, 0, 0);

/** Fixed effects: ids id-1, id-2, ...; secrets secret-1, ...; hashKey is readable. */
export function fixedContext(): DecideContext {
  let ids = 0;
  let secrets = 0;
  return {
    nowMs: NOW_MS,
    uuid: () => `id-${++ids}`,
    secret: () => `secret-${++secrets}`,
    hashKey: (key) => `hash:${key}`,
    regions: ['europe-belgium', 'us-iowa'],
    isEventMessageName,
  };
}

export function given(...changes: Change[]): OrgState {
  let state = emptyState(GENESIS);
  for (const c of changes) state = apply(state, c);
  return state;
}

export function aPerson(person_id: string, fields: Partial<Person> = {}): Change {
  return {
    t: 'PersonCreated',
    person: { person_id, active: true, person_type: 'regular', region: 'europe-belgium', handles: [{ type: 'username', value: person_id }], groups: [], attributes: {}, gdpr_consents: [], created: GENESIS.created, ...fields },
  };
}

export const aGroup = (name: string): Change => ({ t: 'GroupCreated', name, description: '', created: GENESIS.created });

export interface Outcome<R> {
  decision: Decision<R>;
  /** the state once the decided changes are applied */
  after: OrgState;
}

/** Decides the command, checks that deciding left the state untouched, then applies the changes. */
export function when<R = unknown>(state: OrgState, command: Command, ctx: DecideContext = fixedContext()): Outcome<R> {
  const before = toSnapshot(state);
  const decision = decide(state, command, ctx) as Decision<R>;
  assert.deepEqual(toSnapshot(state), before, 'decide() mutated the state');
  let after = state;
  for (const c of decision.changes) after = apply(after, c);
  return { decision, after };
}

/** The command is refused with this code and a message naming each mention; the state is untouched. */
export function refused(state: OrgState, command: Command, code: ErrorCode, ...mentions: Array<string | RegExp>): ServiceError {
  const before = toSnapshot(state);
  let caught: unknown;
  try {
    decide(state, command, fixedContext());
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ServiceError, `expected a ServiceError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  for (const m of mentions) {
    if (typeof m === 'string') assert.ok(caught.message.includes(m), `"${caught.message}" does not mention "${m}"`);
    else assert.match(caught.message, m);
  }
  assert.deepEqual(toSnapshot(state), before, 'a refused command changed the state');
  return caught;
}
