// Decisions about persons: create, create-or-update by handle, activate, delete.
import { isDeepStrictEqual } from 'node:util';
import { badRequest, conflict, notFound, quote } from '../errors.js';
import type { Change } from './changes.js';
import type { PersonInput } from './commands.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { checkAttributes, checkHandle, checkRegion, handleTypeEnum, isBucket } from './rules.js';
import { handleKey, type Handle, type HandleVerification, type OrgState, type Person, type VerificationMethod } from './state.js';
import { verificationsOf } from './handle-verification.js';
import { personView, type PersonRet } from './views.js';
import { normalizeGroups, requirePerson } from './lookup.js';
import { normalizeRoles, rolesSetEvent } from './rbac.js';

export function handlesOf(p: Pick<Person, 'handles'>) {
  return p.handles.map((h) => ({ type: handleTypeEnum(h.type), value: h.value }));
}

/** Distinct handles, each valid; two handles that differ only by email case count once. */
function checkHandles(handles: Handle[]): Handle[] {
  const seen = new Set<string>();
  const out: Handle[] = [];
  handles.forEach((h, i) => {
    checkHandle(h, `handles[${i}]`);
    const key = handleKey(h);
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ type: h.type, value: h.value });
    }
  });
  return out;
}

function checkPersonAttributes(attributes: PersonInput['attributes']): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [bucket, set] of Object.entries(attributes ?? {})) {
    if (!isBucket(bucket)) throw badRequest(`attributes: unknown attribute bucket "${bucket}"`);
    checkAttributes(set, `attributes.${bucket}`);
    out[bucket] = { ...set };
  }
  return out;
}

/** person_id: chosen before the decision (registration signs a token for it first); analytics_metadata: of the request. */
export interface CreatePersonOptions {
  person_id?: string;
  analytics_metadata?: Record<string, unknown>;
  /** who vouched for the handles (the organization's API key, a provider); null for a self-registration. Always said: a wrong default would let a registrant's address pass as verified. */
  verified_by: VerificationMethod | null;
}

export function createPerson(state: OrgState, input: PersonInput, ctx: DecideContext, options: CreatePersonOptions): Decision<PersonRet> {
  const handles = checkHandles(input.handles);
  if (handles.length === 0) throw badRequest('handles: at least one handle is required');
  for (const h of handles) {
    if (state.handles.has(handleKey(h))) throw conflict(`a person with handle ${h.type} "${h.value}" already exists`);
  }
  const region = input.region ?? (ctx.regions[0] as string);
  checkRegion(region, ctx.regions);
  const roles = normalizeRoles(state, input.roles ?? [], 'roles');
  const person: Person = {
    person_id: options.person_id ?? ctx.uuid(),
    active: input.active ?? true,
    person_type: 'regular',
    region,
    handles,
    verified_handles: verificationsOf(handles, options.verified_by ?? undefined, ctx.nowMs),
    groups: normalizeGroups(state, input.groups ?? [], 'groups'),
    // an empty set is no set: a person never holds an empty bucket
    attributes: Object.fromEntries(Object.entries(checkPersonAttributes(input.attributes)).filter(([, set]) => Object.keys(set).length > 0)),
    gdpr_consents: [],
    created: new Date(ctx.nowMs).toISOString(),
    ...(roles.length > 0 && { roles }),
  };
  const event: EventDraft = {
    name: 'PersonCreated_v1',
    body: {
      ...(options.analytics_metadata && { analytics_metadata: options.analytics_metadata }),
      person_id: person.person_id,
      region,
      handles: handlesOf(person),
      gdpr_consents: [],
    },
  };
  // PersonCreated has no roles field: roles given at creation are announced as set to the new person
  const events = roles.length > 0 ? [event, rolesSetEvent(person.person_id, roles, [])] : [event];
  return decision(personView(person), [{ t: 'PersonCreated', person }], events);
}

/** Handles the organization adds with its API key are its word that they are the person's. */
const byOrganization = (ctx: DecideContext): HandleVerification => ({ method: 'organization', at: new Date(ctx.nowMs).toISOString() });

export interface PutPersonReply {
  created: boolean;
  person: PersonRet;
}

/** Create-or-update by handle: idempotent, so sending the same body twice changes nothing the second time. */
export function putPerson(state: OrgState, input: PersonInput, ctx: DecideContext): Decision<PutPersonReply> {
  const handles = checkHandles(input.handles);
  if (handles.length === 0) throw badRequest('handles: at least one handle is required');
  const owners = new Set(handles.map((h) => state.handles.get(handleKey(h))).filter((id): id is string => id !== undefined));
  if (owners.size === 0) {
    const d = createPerson(state, input, ctx, { verified_by: 'organization' });
    return { ...d, reply: { created: true, person: d.reply } };
  }
  if (owners.size > 1) throw conflict('handles: the handles belong to different persons');
  const person = state.persons.get([...owners][0] as string) as Person;
  if (input.region !== undefined && input.region !== person.region) {
    checkRegion(input.region, ctx.regions);
    throw badRequest(`region: person ${person.person_id} lives in ${person.region}; its region cannot be changed`);
  }
  const changes: Change[] = [];
  const added = handles.filter((h) => !state.handles.has(handleKey(h)));
  if (added.length > 0) changes.push({ t: 'PersonHandlesAdded', person_id: person.person_id, handles: added, verified: byOrganization(ctx) });
  if (input.active !== undefined && input.active !== person.active) {
    changes.push({ t: 'PersonActiveSet', person_id: person.person_id, active: input.active });
  }
  if (input.groups !== undefined) {
    const groups = normalizeGroups(state, input.groups, 'groups');
    if (groups.join('\n') !== person.groups.join('\n')) changes.push({ t: 'PersonGroupsSet', person_id: person.person_id, groups });
  }
  const events: EventDraft[] = [];
  if (input.roles !== undefined) {
    const roles = normalizeRoles(state, input.roles, 'roles');
    const old = person.roles ?? [];
    if (roles.join('\n') !== old.join('\n')) {
      changes.push({ t: 'PersonRolesSet', person_id: person.person_id, roles });
      events.push(rolesSetEvent(person.person_id, roles, old));
    }
  }
  for (const [bucket, set] of Object.entries(checkPersonAttributes(input.attributes))) {
    // each bucket named is replaced, so an empty set empties it
    if (isDeepStrictEqual(person.attributes[bucket] ?? {}, set)) continue;
    changes.push({ t: 'AttributesSet', person_id: person.person_id, bucket, attributes: set, replace: true });
  }
  const after: Person = {
    ...person,
    handles: [...person.handles, ...added],
    active: input.active ?? person.active,
    groups: input.groups !== undefined ? normalizeGroups(state, input.groups, 'groups') : person.groups,
  };
  return decision({ created: false, person: personView(after) }, changes, events);
}

export function setPersonActive(state: OrgState, personId: string, active: boolean): Decision<PersonRet> {
  const person = requirePerson(state, personId);
  const changes: Change[] = person.active === active ? [] : [{ t: 'PersonActiveSet', person_id: personId, active }];
  return decision(personView({ ...person, active }), changes);
}

export function deletePerson(state: OrgState, personId: string): Decision<null> {
  const person = requirePerson(state, personId);
  const event: EventDraft = {
    name: 'PersonDeleted_v1',
    body: { person_id: person.person_id, region: person.region, handles: handlesOf(person), groups: [...person.groups] },
  };
  return decision(null, [{ t: 'PersonDeleted', person_id: personId }], [event]);
}

/** handles a person holds at most, however they were added */
export const MAX_PERSON_HANDLES = 50;

/** POST /persons/{id}/handles: idempotent for handles the person holds already; no event (the catalog has none). */
export function addPersonHandles(state: OrgState, personId: string, input: Handle[], ctx: DecideContext): Decision<null> {
  const person = requirePerson(state, personId);
  const added: Handle[] = [];
  for (const h of checkHandles(input)) {
    const owner = state.handles.get(handleKey(h));
    if (owner === undefined) added.push(h);
    else if (owner !== personId) throw conflict(`a person with handle ${h.type} "${h.value}" already exists`);
  }
  if (person.handles.length + added.length > MAX_PERSON_HANDLES) {
    throw badRequest(`handles: a person holds at most ${MAX_PERSON_HANDLES} handles (${person.handles.length} held, ${added.length} new)`);
  }
  return decision(null, added.length > 0 ? [{ t: 'PersonHandlesAdded', person_id: personId, handles: added, verified: byOrganization(ctx) }] : []);
}

/** DELETE /persons/{id}/handles/{handle}: a person with a password keeps at least one handle to sign in with. */
export function removePersonHandle(state: OrgState, personId: string, handle: Handle): Decision<null> {
  const person = requirePerson(state, personId);
  const key = handleKey(handle);
  const held = person.handles.find((h) => handleKey(h) === key);
  if (!held) throw notFound(`person ${quote(personId)} has no handle ${handle.type} "${handle.value}"`);
  if (person.handles.length === 1 && person.password_hash !== undefined) {
    throw conflict(`handle ${handle.type} "${handle.value}" is the last handle of a person with a password; add another first`);
  }
  return decision(null, [{ t: 'PersonHandleRemoved', person_id: personId, handle: held }]);
}
