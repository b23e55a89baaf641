// Decisions about the organization itself: suborganizations and API key rotation.
import { badRequest } from '../errors.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import type { OrgState } from './state.js';

export interface SuborganizationRet {
  id: string;
  org_name: string;
  parent_id: string;
  api_key: string;
}

export function createSuborganization(state: OrgState, name: string, ctx: DecideContext): Decision<SuborganizationRet> {
  const orgName = name.trim();
  if (orgName === '' || orgName.length > 200) throw badRequest('sub_org_name: must be 1-200 characters');
  const id = ctx.uuid();
  const apiKey = ctx.secret();
  const event = { name: 'SuborganizationCreated_v1', body: { suborganization_id: id, org_name: orgName, parent_organization_id: state.id }, regional: true as const };
  return {
    ...decision({ id, org_name: orgName, parent_id: state.id, api_key: apiKey }, [{ t: 'SuborganizationCreated', id }], [event]),
    spawn: { id, org_name: orgName, parent_id: state.id, root_id: state.root_id, api_key_hash: ctx.hashKey(apiKey), created: new Date(ctx.nowMs).toISOString() },
  };
}

export function rotateApiKey(_state: OrgState, ctx: DecideContext): Decision<{ api_key: string }> {
  const apiKey = ctx.secret();
  return decision({ api_key: apiKey }, [{ t: 'ApiKeyRotated', api_key_hash: ctx.hashKey(apiKey) }]);
}

/**
 * Forgets a deleted suborganization (DELETE /organizations called by it): it leaves the list the parent answers
 * and counts. Idempotent, as a deletion resumed after a crash asks again. No event: the original's catalog has
 * none for a deleted organization.
 */
export function deleteSuborganization(state: OrgState, id: string, orgs: string[]): Decision<null> {
  return decision(null, state.suborganizations.includes(id) ? [{ t: 'SuborganizationDeleted', id, orgs }] : []);
}
