// Organization state to and from a plain, serializable form (Maps and Sets become arrays), with the format
// version the form is stored in and the steps that upgrade snapshots written by earlier versions.
import { adoptPerson, personOf } from './apply.js';
import { billingKey } from './cloud.js';
import { holdPersons, type HeldPersons } from './snapshot-hold.js';
import { withDefaults, type OrgConfig } from './org-config.js';
import { currentVersion, upgrade, type Format, type StoredRecord } from '../lib/versions.js';
import { handleKey, type Group, type OrgState, type Person, type AttributeSet, type Webhook, type Permission, type Role, type SsoCredential, type OAuthClient, type DirectId, type MitmToken } from './state.js';

import type { OAuthCode, OAuthGrant } from './oauth-grants.js';
import type { OAuthDeviceCode } from './device-codes.js';
import type { OAuthPushedRequest } from './pushed-requests.js';
import type { LogoutNotice, PersonSession } from './sessions.js';
import type { MessageTemplate } from './message-templates.js';
import type { BillingRow, CloudConnection, CloudSnapshot } from './cloud.js';

export interface StateSnapshot {
  v: number;
  org: Omit<OrgState, 'persons' | 'person_order' | 'handles' | 'groups' | 'attributes' | 'webhooks' | 'permissions' | 'roles' | 'sso_credentials' | 'oauth_clients' | 'oauth_revoked' | 'revoked_tokens' | 'mitm_tokens' | 'oauth_codes' | 'oauth_grants' | 'oauth_device_codes' | 'oauth_pushed' | 'sessions' | 'backchannel_logouts' | 'config' | 'direct_ids' | 'used_password_resets' | 'message_templates' | 'cloud_connections' | 'cloud_snapshots' | 'billing_rows'> & {
    /** fields added to the configuration later read as their defaults */
    config: Partial<OrgConfig>;
  };
  persons: Person[];
  groups: Array<Omit<Group, 'members'> & { members: string[] }>;
  attributes: Array<[string, AttributeSet]>;
  webhooks: Webhook[];
  permissions: Permission[];
  roles: Role[];
  /** secrets in their stored (sealed) form */
  sso_credentials: SsoCredential[];
  /** secret hashes only */
  oauth_clients: OAuthClient[];
  /** [jti, exp] of access tokens revoked before they expire */
  oauth_revoked: Array<[string, number]>;
  /** [jti, exp] of identity tokens revoked before they expire */
  revoked_tokens: Array<[string, number]>;
  mitm_tokens: MitmToken[];
  /** hashes only, never a usable code or refresh token */
  oauth_codes: OAuthCode[];
  oauth_grants: OAuthGrant[];
  oauth_device_codes: OAuthDeviceCode[];
  /** hashes of references only, never a usable request_uri */
  oauth_pushed: OAuthPushedRequest[];
  sessions: PersonSession[];
  backchannel_logouts: LogoutNotice[];
  /** [hash, direct-id] of unredeemed direct-id values; hashes only, never a usable value */
  direct_ids: Array<[string, DirectId]>;
  /** [reset_id, exp] of password-reset links used before they expire */
  used_password_resets: Array<[string, number]>;
  message_templates: Array<[string, MessageTemplate]>;
  /** credentials in their stored (sealed) form */
  cloud_connections: CloudConnection[];
  cloud_snapshots: CloudSnapshot[];
  billing_rows: BillingRow[];
}

/**
 * A field added to OrgState is written by toSnapshot and read by fromSnapshot, and a step appended here
 * gives the snapshots already stored its value for "none yet", e.g.
 * `(s) => ({ ...s, org: { ...s.org, oauth_clients: [] } })`. Steps are never edited or removed.
 */
export const SNAPSHOT_FORMAT: Format = {
  name: 'organization snapshot',
  steps: [
    // 0 → 1: snapshots gained `v`; those written before twins were owed have no owed_twins.
    (s) => ({ ...s, org: { ...s['org'], owed_twins: s['org'].owed_twins ?? [] } }),
    // 1 → 2: access control; snapshots written before roles and permissions existed have none.
    (s) => ({ ...s, permissions: [], roles: [] }),
    // 2 → 3: OIDC provider credentials for SSO; older snapshots have none.
    (s) => ({ ...s, sso_credentials: [] }),
    // 3 → 4: the organization's configuration; older snapshots have the defaults.
    (s) => ({ ...s, org: { ...s['org'], config: {} } }),
    // 4 → 5: the OAuth 2.0 authorization server's clients and revoked access tokens; older snapshots have none.
    (s) => ({ ...s, oauth_clients: [], oauth_revoked: [] }),
    // 5 → 6: OAuth authorization codes and grants; older snapshots have none.
    (s) => ({ ...s, oauth_codes: [], oauth_grants: [] }),
    // 6 → 7: the token template; older snapshots have none.
    (s) => ({ ...s, org: { ...s['org'], token_template: '' } }),
    // 7 → 8: revoked identity tokens; older snapshots have none.
    (s) => ({ ...s, revoked_tokens: [] }),
    // 8 → 9: direct-id sign-in values; older snapshots have none.
    (s) => ({ ...s, direct_ids: [] }),
    // 9 → 10: allowed origin domains; older snapshots have none.
    (s) => ({ ...s, org: { ...s['org'], allowed_domains: [] } }),
    // 10 → 11: used password-reset links and message templates; older snapshots have none.
    (s) => ({ ...s, used_password_resets: [], message_templates: [] }),
    // 11 → 12: MITM detection tokens; older snapshots have none.
    (s) => ({ ...s, mitm_tokens: [] }),
    // 12 → 13: cloud connections, snapshot summaries and billing rows; older snapshots have none.
    (s) => ({ ...s, cloud_connections: [], cloud_snapshots: [], billing_rows: [] }),
    // 13 → 14: RFC 8628 device codes; older snapshots have none.
    (s) => ({ ...s, oauth_device_codes: [] }),
    // 14 → 15: sign-in sessions and the back-channel logouts owed; older snapshots have none.
    (s) => ({ ...s, sessions: [], backchannel_logouts: [] }),
    // 15 → 16: pushed authorization requests (RFC 9126), held in memory before; older snapshots have none.
    (s) => ({ ...s, oauth_pushed: [] }),
  ],
};

const VERSION = currentVersion(SNAPSHOT_FORMAT);

export function toSnapshot(s: OrgState): StateSnapshot {
  const { persons, person_order, handles, groups, attributes, webhooks, permissions, roles, sso_credentials, oauth_clients, oauth_revoked, revoked_tokens, mitm_tokens, oauth_codes, oauth_grants, oauth_device_codes, oauth_pushed, sessions, backchannel_logouts, direct_ids, used_password_resets, message_templates, cloud_connections, cloud_snapshots, billing_rows, ...org } = s;
  return {
    v: VERSION,
    org: { ...org, suborganizations: [...org.suborganizations], owed_twins: [...org.owed_twins] },
    persons: person_order.map((id) => persons.get(id) as Person),
    groups: [...groups.values()].map((g) => ({ ...g, members: [...g.members] })),
    attributes: [...attributes.entries()],
    webhooks: [...webhooks.values()],
    permissions: [...permissions.values()],
    roles: [...roles.values()],
    sso_credentials: [...sso_credentials.values()],
    oauth_clients: [...oauth_clients.values()],
    oauth_revoked: [...oauth_revoked.entries()],
    revoked_tokens: [...revoked_tokens.entries()],
    mitm_tokens: [...mitm_tokens.values()],
    oauth_codes: [...oauth_codes.values()],
    oauth_grants: [...oauth_grants.values()],
    oauth_device_codes: [...oauth_device_codes.values()],
    oauth_pushed: [...oauth_pushed.values()],
    sessions: [...sessions.values()],
    backchannel_logouts: [...backchannel_logouts.values()],
    direct_ids: [...direct_ids.entries()],
    used_password_resets: [...used_password_resets.entries()],
    message_templates: [...message_templates.entries()],
    cloud_connections: [...cloud_connections.values()],
    cloud_snapshots: [...cloud_snapshots],
    billing_rows: [...billing_rows.values()],
  };
}

interface SlicedGroups {
  readonly length: number;
  readonly per: number;
  slice(from: number, to: number): StateSnapshot['groups'];
}

/**
 * toSnapshot for packing over many turns of the event loop while the organization goes on changing: `snapshot`
 * is everything but the groups and persons, which it ends with as empty arrays; `lists` are the groups (copied
 * now) and the persons (held as they are now, copied only if changed before release), in that order, for the
 * writer to pack a slice at a time and splice in. release() once written.
 */
export function heldSnapshot(s: OrgState): { snapshot: StateSnapshot; lists: [SlicedGroups, HeldPersons]; release(): void } {
  const persons = holdPersons(s);
  const { groups, persons: _none, ...rest } = toSnapshot({ ...s, person_order: [] });
  // A group at a time: one group may list most of the persons.
  const sliced: SlicedGroups = { length: groups.length, per: 1, slice: (from, to) => groups.slice(from, to) };
  return { snapshot: { ...rest, groups: [], persons: [] }, lists: [sliced, persons], release: persons.release };
}

/**
 * The state of a snapshot of any known version. `owned`: the snapshot was just decoded and nothing else holds
 * its objects, so the state takes them as they are instead of copying each person.
 */
export function fromSnapshot(stored: StateSnapshot | StoredRecord, owned = false): OrgState {
  const snap = upgrade<StateSnapshot>(SNAPSHOT_FORMAT, stored);
  const state: OrgState = {
    ...snap.org,
    config: withDefaults(snap.org.config),
    persons: new Map(),
    person_order: [],
    handles: new Map(),
    groups: new Map(snap.groups.map((g) => [g.name, { ...g, members: new Set(g.members) }])),
    attributes: new Map(snap.attributes),
    webhooks: new Map(snap.webhooks.map((w) => [w.id, w])),
    permissions: new Map(snap.permissions.map((p) => [p.name, p])),
    roles: new Map(snap.roles.map((r) => [r.name, r])),
    sso_credentials: new Map(snap.sso_credentials.map((c) => [c.client_id, c])),
    oauth_clients: new Map(snap.oauth_clients.map((c) => [c.client_id, c])),
    oauth_revoked: new Map(snap.oauth_revoked),
    revoked_tokens: new Map(snap.revoked_tokens),
    mitm_tokens: new Map(snap.mitm_tokens.map((t) => [t.token, t])),
    oauth_codes: new Map(snap.oauth_codes.map((c) => [c.code_hash, c])),
    oauth_grants: new Map(snap.oauth_grants.map((g) => [g.grant_id, g])),
    oauth_device_codes: new Map(snap.oauth_device_codes.map((c) => [c.device_code_hash, c])),
    oauth_pushed: new Map(snap.oauth_pushed.map((r) => [r.request_uri_hash, r])),
    sessions: new Map(snap.sessions.map((s) => [s.session_id, s])),
    backchannel_logouts: new Map(snap.backchannel_logouts.map((n) => [n.sid, n])),
    direct_ids: new Map(snap.direct_ids),
    used_password_resets: new Map(snap.used_password_resets),
    message_templates: new Map(snap.message_templates),
    cloud_connections: new Map(snap.cloud_connections.map((c) => [c.connection_id, c])),
    cloud_snapshots: [...snap.cloud_snapshots],
    billing_rows: new Map(snap.billing_rows.map((r) => [billingKey(r), r])),
  };
  const order = state.person_order;
  for (const stored of snap.persons) {
    // Shares what a created person shares, so a restart does not make the state larger than it was.
    const p = owned ? adoptPerson(state, stored) : personOf(state, stored);
    state.persons.set(p.person_id, p);
    order.push(p.person_id);
    for (const h of p.handles) state.handles.set(handleKey(h), p.person_id);
  }
  return state;
}
