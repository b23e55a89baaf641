// Organization state to and from a plain, serializable form (Maps and Sets become arrays).
import { withDefaults, type OrgConfig } from './org-config.js';
import { handleKey, type Group, type OrgState, type OwedTwin, type Person, type AttributeSet, type Webhook } from './state.js';

export interface StateSnapshot {
  /** owed_twins is absent from snapshots written before twins were owed */
  org: Omit<OrgState, 'persons' | 'person_order' | 'handles' | 'groups' | 'attributes' | 'webhooks' | 'owed_twins' | 'config'> & { owed_twins?: OwedTwin[] } & {
    /** absent from snapshots written before the organization had a configuration: they read as the defaults */
    config?: Partial<OrgConfig>;
  };
  persons: Person[];
  groups: Array<Omit<Group, 'members'> & { members: string[] }>;
  attributes: Array<[string, AttributeSet]>;
  webhooks: Webhook[];
}

export function toSnapshot(s: OrgState): StateSnapshot {
  const { persons, person_order, handles, groups, attributes, webhooks, ...org } = s;
  return {
    org: { ...org, suborganizations: [...org.suborganizations], owed_twins: [...org.owed_twins] },
    persons: person_order.map((id) => persons.get(id) as Person),
    groups: [...groups.values()].map((g) => ({ ...g, members: [...g.members] })),
    attributes: [...attributes.entries()],
    webhooks: [...webhooks.values()],
  };
}

export function fromSnapshot(snap: StateSnapshot): OrgState {
  const state: OrgState = {
    ...snap.org,
    owed_twins: snap.org.owed_twins ?? [],
    config: withDefaults(snap.org.config),
    persons: new Map(),
    person_order: [],
    handles: new Map(),
    groups: new Map(snap.groups.map((g) => [g.name, { ...g, members: new Set(g.members) }])),
    attributes: new Map(snap.attributes),
    webhooks: new Map(snap.webhooks.map((w) => [w.id, w])),
  };
  for (const p of snap.persons) {
    state.persons.set(p.person_id, p);
    state.person_order.push(p.person_id);
    for (const h of p.handles) state.handles.set(handleKey(h), p.person_id);
  }
  return state;
}
