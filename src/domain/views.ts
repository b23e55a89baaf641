// Read models: the shapes the API returns, computed from state.
import type { OrgState, Person, Webhook, WebhookSettings } from './state.js';

export interface PersonRet {
  person_id: string;
  active: boolean;
  person_type: Person['person_type'];
  region: string;
  handles: Person['handles'];
  groups: string[];
}

export function personView(p: Person): PersonRet {
  return {
    person_id: p.person_id,
    active: p.active,
    person_type: p.person_type,
    region: p.region,
    handles: p.handles.map((h) => ({ type: h.type, value: h.value })),
    groups: [...p.groups],
  };
}

/** `tenant_name`: the name of the organization at the top of the hierarchy. Each organization is its own
 * persons and groups pool (the original's shared pools are not offered), so the pools name only itself. */
export function organizationView(s: OrgState, tenantName: string) {
  return { id: s.id, org_name: s.org_name, parent_id: s.parent_id, tenant_name: tenantName, persons_pool_org_ids: [s.id], group_pool_org_ids: [s.id] };
}

export interface WebhookRet extends WebhookSettings {
  id: string;
}

export function webhookView(w: Webhook): WebhookRet {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    target_url: w.target_url,
    custom_headers: Object.fromEntries(Object.entries(w.custom_headers).map(([k, v]) => [k, [...v]])),
    timeout: w.timeout,
    on_failure: w.on_failure,
  };
}
