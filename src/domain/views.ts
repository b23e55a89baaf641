// Read models: the shapes the API returns, computed from state.
import type { OrgState, Person } from './state.js';

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

export function organizationView(s: OrgState) {
  return { id: s.id, org_name: s.org_name, parent_id: s.parent_id };
}
