// apply(state, change): the state after a change, and applyEntry: the state after a whole WAL entry. They
// mutate in place because one actor owns the state; they never fail on a change that decide() produced, and
// replay the WAL deterministically: the actor, recovery and the replicas all go through applyEntry.
import type { Change } from './changes.js';
import { billingKey, monthStart, monthText } from './cloud.js';
import { withDefaults } from './org-config.js';
import { withRevoked } from './oauth-clients.js';
import { withUse } from './sessions.js';
import { keepBeforeChange } from './snapshot-hold.js';
import { UNRECORDED, withRecordedVerifications } from './handle-verification.js';
import { emptyState, handleKey, lowerBound, HANDLE_TYPES, type AttributeSet, type GdprConsent, type Handle, type HandleVerification, type OrgState, type Person } from './state.js';

// Per-person memory: a million persons each holding their own copy of the same few strings ("email_address",
// a group's name) and their own empty consent list cost about a tenth of the heap; one shared copy of each
// does not. Consent lists are replaced whole, never mutated, so the empty one can be shared (and is frozen).
const NO_CONSENTS = Object.freeze([]) as unknown as GdprConsent[];

function sharedHandle(h: Handle): Handle {
  return { type: HANDLE_TYPES.find((t) => t === h.type) ?? h.type, value: h.value };
}

/** The person as the state keeps it: its own arrays and objects, the strings every person shares shared. */
export function personOf(state: OrgState, person: Person): Person {
  return withRecordedVerifications({
    ...person,
    ...(person.verified_handles && { verified_handles: { ...person.verified_handles } }),
    person_type: person.person_type === 'anonymous' ? 'anonymous' : 'regular',
    handles: person.handles.map(sharedHandle),
    groups: person.groups.map((g) => state.groups.get(g)?.name ?? g),
    attributes: { ...person.attributes },
    gdpr_consents: person.gdpr_consents.length === 0 ? NO_CONSENTS : person.gdpr_consents,
  });
}

/**
 * personOf without the copies, for a person decoded from a snapshot that nothing else holds: its strings are
 * made the shared ones in place. At a million persons the copies cost a third of a restart's state rebuild.
 */
export function adoptPerson(state: OrgState, person: Person): Person {
  if (person.person_type !== 'anonymous') person.person_type = 'regular';
  for (const h of person.handles) h.type = HANDLE_TYPES.find((t) => t === h.type) ?? h.type;
  const groups = person.groups;
  for (let i = 0; i < groups.length; i++) groups[i] = state.groups.get(groups[i] as string)?.name ?? (groups[i] as string);
  if (person.gdpr_consents.length === 0) person.gdpr_consents = NO_CONSENTS;
  return withRecordedVerifications(person);
}

/** Records how `handles` were verified (null: not); a change written before verifications were kept says nothing: `unrecorded`. */
function recordVerification(p: Person, handles: readonly Handle[], verified: HandleVerification | null | undefined): void {
  const v = verified === undefined ? UNRECORDED : verified;
  const next = { ...p.verified_handles };
  for (const h of handles) {
    if (v === null) delete next[handleKey(h)];
    else next[handleKey(h)] = v;
  }
  p.verified_handles = next;
}

function attributeHome(state: OrgState, personId: string | undefined): { get(b: string): AttributeSet | undefined; set(b: string, a: AttributeSet): void; delete(b: string): void } | undefined {
  if (personId === undefined) return state.attributes;
  const person = changing(state, personId);
  if (!person) return undefined;
  const attrs = person.attributes;
  return {
    get: (b) => attrs[b],
    set: (b, a) => void (attrs[b] = a),
    delete: (b) => void delete attrs[b],
  };
}

/** The person apply() is about to change in place, handed first to a snapshot still packing (snapshot-hold.ts). */
function changing(state: OrgState, personId: string): Person | undefined {
  const p = state.persons.get(personId);
  if (p !== undefined) keepBeforeChange(state, p);
  return p;
}

/** What applyEntry needs of a WAL entry: its changes, its offset, and the event offset once it is applied. */
export interface AppliedEntry {
  offset: number;
  changes: readonly Change[];
  ev: number;
}

/**
 * The state after an entry: its changes in order, then its offsets. An organization starts at the entry that
 * creates it; before that (a state of undefined) every other change is ignored and the state stays undefined.
 */
export function applyEntry(state: OrgState, entry: AppliedEntry): OrgState;
export function applyEntry(state: OrgState | undefined, entry: AppliedEntry): OrgState | undefined;
export function applyEntry(state: OrgState | undefined, entry: AppliedEntry): OrgState | undefined {
  let s = state;
  for (const change of entry.changes) s = change.t === 'OrgCreated' ? emptyState(change.genesis) : s && apply(s, change);
  if (!s) return undefined;
  s.offset = entry.offset;
  s.event_offset = entry.ev;
  return s;
}

export function apply(state: OrgState, change: Change): OrgState {
  switch (change.t) {
    case 'OrgCreated':
      return emptyState(change.genesis);
    case 'ApiKeyRotated':
      state.api_key_hash = change.api_key_hash;
      return state;
    case 'SuborganizationCreated':
      state.suborganizations.push(change.id);
      return state;
    case 'SuborganizationDeleted':
      state.suborganizations = state.suborganizations.filter((id) => id !== change.id);
      return state;
    case 'PersonCreated': {
      const p = personOf(state, change.person);
      state.persons.set(p.person_id, p);
      const at = lowerBound(state.person_order, p.person_id);
      state.person_order.splice(at, 0, p.person_id);
      for (const h of p.handles) state.handles.set(handleKey(h), p.person_id);
      for (const g of p.groups) state.groups.get(g)?.members.add(p.person_id);
      return state;
    }
    case 'PersonActiveSet': {
      const p = changing(state, change.person_id);
      if (p) p.active = change.active;
      return state;
    }
    case 'PersonHandlesAdded': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      for (const h of change.handles) {
        p.handles.push(h);
        state.handles.set(handleKey(h), p.person_id);
      }
      recordVerification(p, change.handles, change.verified);
      return state;
    }
    case 'PersonHandleVerified': {
      const p = changing(state, change.person_id);
      if (p && state.handles.get(handleKey(change.handle)) === p.person_id) recordVerification(p, [change.handle], change.verified);
      return state;
    }
    case 'PersonHandleRemoved': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      const key = handleKey(change.handle);
      p.handles = p.handles.filter((h) => handleKey(h) !== key);
      if (state.handles.get(key) === p.person_id) state.handles.delete(key);
      recordVerification(p, [change.handle], null);
      return state;
    }
    case 'MitmTokenCreated':
      state.mitm_tokens.set(change.token.token, { ...change.token, allowed_domains: [...change.token.allowed_domains] });
      return state;
    case 'MitmTokenDeleted':
      state.mitm_tokens.delete(change.token);
      return state;
    case 'AnonymousPersonUpgraded': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      p.person_type = 'regular';
      delete p.anonymous_expires_ms;
      p.handles = [...p.handles, ...change.handles];
      for (const h of change.handles) state.handles.set(handleKey(h), p.person_id);
      recordVerification(p, change.handles, change.verified);
      return state;
    }
    case 'PersonDeleted': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      state.persons.delete(p.person_id);
      const at = lowerBound(state.person_order, p.person_id);
      if (state.person_order[at] === p.person_id) state.person_order.splice(at, 1);
      for (const h of p.handles) state.handles.delete(handleKey(h));
      for (const g of p.groups) state.groups.get(g)?.members.delete(p.person_id);
      return state;
    }
    case 'GroupCreated':
      state.groups.set(change.name, { name: change.name, description: change.description, created: change.created, members: new Set() });
      return state;
    case 'GroupDeleted': {
      const g = state.groups.get(change.name);
      if (!g) return state;
      for (const id of g.members) {
        const p = changing(state, id);
        if (p) p.groups = p.groups.filter((n) => n !== change.name);
      }
      state.groups.delete(change.name);
      return state;
    }
    case 'PersonGroupsSet': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      for (const g of p.groups) state.groups.get(g)?.members.delete(p.person_id);
      p.groups = change.groups;
      for (const g of p.groups) state.groups.get(g)?.members.add(p.person_id);
      return state;
    }
    case 'AttributesSet': {
      const home = attributeHome(state, change.person_id);
      if (!home) return state;
      const next = change.replace ? { ...change.attributes } : { ...home.get(change.bucket), ...change.attributes };
      if (Object.keys(next).length === 0) home.delete(change.bucket);
      else home.set(change.bucket, next);
      return state;
    }
    case 'GdprConsentsSet': {
      const p = changing(state, change.person_id);
      if (p) p.gdpr_consents = change.consents;
      return state;
    }
    case 'AttributesDeleted': {
      const home = attributeHome(state, change.person_id);
      if (!home) return state;
      const current = home.get(change.bucket);
      if (!current) return state;
      if (change.names === undefined) {
        home.delete(change.bucket);
        return state;
      }
      const next = { ...current };
      for (const n of change.names) delete next[n];
      if (Object.keys(next).length === 0) home.delete(change.bucket);
      else home.set(change.bucket, next);
      return state;
    }
    case 'PersonPasswordSet': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      p.password_hash = change.password_hash;
      if (change.credential_id === undefined) delete p.password_credential_id;
      else p.password_credential_id = change.credential_id;
      return state;
    }
    case 'PersonTotpSet': {
      const p = changing(state, change.person_id);
      if (p) p.totp = change.totp;
      return state;
    }
    case 'PersonWebauthnSet': {
      const p = changing(state, change.person_id);
      if (p) p.webauthn = change.webauthn;
      return state;
    }
    case 'PersonTotpRemoved': {
      const p = changing(state, change.person_id);
      if (p) delete p.totp;
      return state;
    }
    case 'PersonPasswordRemoved': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      delete p.password_hash;
      delete p.password_credential_id;
      return state;
    }
    case 'PasswordResetUsed':
      withRevoked(state.used_password_resets, change.reset_id, change.exp, change.now);
      return state;
    case 'MessageTemplateSet':
      state.message_templates.set(change.name, change.template);
      return state;
    case 'PersonTokenMinted': {
      const p = changing(state, change.person_id);
      if (!p) return state;
      p.last_token_id = change.token_id;
      p.token_count = (p.token_count ?? 0) + 1;
      return state;
    }
    // Webhooks are replaced, never mutated, so a webhook read before a change stays as it was.
    case 'WebhookCreated':
      state.webhooks.set(change.webhook.id, { ...change.webhook, triggers: [...change.webhook.triggers] });
      return state;
    case 'WebhookUpdated': {
      const w = state.webhooks.get(change.id);
      if (w) state.webhooks.set(w.id, { ...w, ...change.settings });
      return state;
    }
    case 'WebhookDeleted':
      state.webhooks.delete(change.id);
      return state;
    case 'WebhookTriggerAdded': {
      const w = state.webhooks.get(change.id);
      if (!w) return state;
      const trigger = { trigger_type: change.trigger.trigger_type, trigger_name: change.trigger.trigger_name };
      // Entries written before from_event existed attached the trigger at the event offset they were applied at.
      const attached = trigger.trigger_type === 'event' ? { ...trigger, from_event: change.from_event ?? state.event_offset + 1 } : trigger;
      state.webhooks.set(w.id, { ...w, triggers: [...w.triggers, attached] });
      return state;
    }
    case 'WebhookTriggerRemoved': {
      const w = state.webhooks.get(change.id);
      const gone = (t: typeof change.trigger) => t.trigger_type === change.trigger.trigger_type && t.trigger_name === change.trigger.trigger_name;
      if (w) state.webhooks.set(w.id, { ...w, triggers: w.triggers.filter((t) => !gone(t)) });
      return state;
    }
    case 'TwinOwed':
      state.owed_twins.push({ ...change.twin });
      return state;
    case 'TwinsEmitted':
      state.owed_twins = state.owed_twins.filter((t) => t.offset > change.through);
      return state;
    // Access control. Roles and permissions are replaced, never mutated, like webhooks.
    case 'PermissionCreated':
      state.permissions.set(change.permission.name, { ...change.permission });
      return state;
    case 'PermissionUpdated': {
      const p = state.permissions.get(change.name);
      if (p) state.permissions.set(p.name, { ...p, description: change.description });
      return state;
    }
    case 'PermissionDeleted':
      state.permissions.delete(change.name);
      return state;
    case 'RoleCreated':
      state.roles.set(change.role.name, { ...change.role, permissions: [...change.role.permissions] });
      return state;
    case 'RoleUpdated': {
      const r = state.roles.get(change.name);
      if (r) state.roles.set(r.name, { ...r, description: change.description, permissions: [...change.permissions] });
      return state;
    }
    case 'RoleDeleted':
      state.roles.delete(change.name);
      return state;
    case 'PersonRolesSet': {
      const p = changing(state, change.person_id);
      if (p) p.roles = [...change.roles];
      return state;
    }
    case 'PersonAdditionalPermissionsSet': {
      const p = changing(state, change.person_id);
      if (p) p.additional_permissions = [...change.permissions];
      return state;
    }
    // SSO credentials are replaced, never mutated, like webhooks.
    case 'SsoCredentialCreated':
    case 'SsoCredentialUpdated':
      state.sso_credentials.set(change.credential.client_id, change.credential);
      return state;
    case 'CloudConnectionSet':
      state.cloud_connections.set(change.connection.connection_id, change.connection);
      return state;
    case 'CloudConnectionDeleted':
      state.cloud_connections.delete(change.connection_id);
      return state;
    case 'CloudSnapshotRecorded': {
      const from = monthStart(change.snapshot.at_ms, -1);
      state.cloud_snapshots = [...state.cloud_snapshots.filter((s) => s.at_ms >= from), change.snapshot];
      return state;
    }
    case 'BillingCounted': {
      state.billing_rows.set(billingKey(change.row), change.row);
      const from = monthText(monthStart(change.now_ms, -1));
      for (const [key, row] of state.billing_rows) if (row.window_start < from) state.billing_rows.delete(key);
      return state;
    }
    case 'SsoCredentialDeleted':
      state.sso_credentials.delete(change.client_id);
      return state;
    case 'OrgConfigSet':
      state.config = withDefaults(change.config);
      return state;
    case 'TokenTemplateSet':
      state.token_template = change.content;
      return state;
    case 'AllowedDomainsSet':
      state.allowed_domains = [...change.domains];
      return state;
    // OAuth clients are replaced, never mutated, like webhooks.
    case 'OAuthClientCreated':
    case 'OAuthClientUpdated':
      state.oauth_clients.set(change.client.client_id, change.client);
      return state;
    case 'OAuthClientSecretSet': {
      const c = state.oauth_clients.get(change.client_id);
      if (c) state.oauth_clients.set(c.client_id, { ...c, secret_hash: change.secret_hash });
      return state;
    }
    case 'OAuthClientDeleted':
      state.oauth_clients.delete(change.client_id);
      return state;
    case 'OAuthRegistrationTokensSet':
      state.oauth_registration_tokens = change.tokens;
      return state;
    case 'AccessTokenRevoked':
      withRevoked(state.oauth_revoked, change.jti, change.exp, change.now);
      return state;
    case 'DirectIdIssued':
      for (const hash of change.expired) state.direct_ids.delete(hash);
      state.direct_ids.set(change.hash, change.direct_id);
      return state;
    case 'DirectIdRedeemed':
      state.direct_ids.delete(change.hash);
      return state;
    case 'IdentityTokenRevoked':
      withRevoked(state.revoked_tokens, change.jti, change.exp, change.now);
      return state;
    // OAuth codes and grants are replaced, never mutated: decide() hands them out in its replies.
    case 'OAuthCodeIssued':
      state.oauth_codes.set(change.code.code_hash, change.code);
      return state;
    case 'OAuthCodeRedeemed': {
      const code = state.oauth_codes.get(change.code_hash);
      if (code) state.oauth_codes.set(code.code_hash, { ...code, redeemed_grant: change.grant.grant_id });
      state.oauth_grants.set(change.grant.grant_id, change.grant);
      return state;
    }
    case 'OAuthRefreshRotated': {
      const grant = state.oauth_grants.get(change.grant_id);
      if (grant) state.oauth_grants.set(grant.grant_id, { ...grant, refresh_hash: change.refresh_hash, rotated: change.rotated, expires_at_ms: change.expires_at_ms });
      return state;
    }
    case 'OAuthGrantRevoked': {
      const grant = state.oauth_grants.get(change.grant_id);
      if (grant) state.oauth_grants.set(grant.grant_id, { ...grant, revoked: true });
      return state;
    }
    case 'OAuthGrantStarted':
      state.oauth_grants.set(change.grant.grant_id, change.grant);
      return state;
    case 'OAuthPruned':
      for (const h of change.code_hashes) state.oauth_codes.delete(h);
      for (const id of change.grant_ids) state.oauth_grants.delete(id);
      return state;
    case 'SessionStarted':
      state.sessions.set(change.session.session_id, change.session);
      return state;
    case 'SessionUsed': {
      const session = state.sessions.get(change.session_id);
      if (session) state.sessions.set(session.session_id, withUse(session, change.client_id, change.at_ms, change.expires_at_ms));
      return state;
    }
    case 'SessionEnded':
      state.sessions.delete(change.session_id);
      for (const notice of change.logouts) state.backchannel_logouts.set(notice.sid, notice);
      return state;
    case 'BackchannelLogoutsDone':
      for (const sid of change.sids) state.backchannel_logouts.delete(sid);
      return state;
    case 'SessionsExpired':
      for (const id of change.session_ids) state.sessions.delete(id);
      return state;
    case 'OAuthDeviceCodeIssued':
      state.oauth_device_codes.set(change.code.device_code_hash, change.code);
      return state;
    case 'OAuthDeviceCodeDecided': {
      const code = state.oauth_device_codes.get(change.device_code_hash);
      if (code) state.oauth_device_codes.set(code.device_code_hash, change.approved !== undefined ? { ...code, approved: change.approved } : { ...code, denied: true });
      return state;
    }
    case 'OAuthDeviceCodeRedeemed': {
      const code = state.oauth_device_codes.get(change.device_code_hash);
      if (code) state.oauth_device_codes.set(code.device_code_hash, { ...code, redeemed_grant: change.grant.grant_id });
      state.oauth_grants.set(change.grant.grant_id, change.grant);
      return state;
    }
    case 'OAuthDeviceCodesPruned':
      for (const h of change.device_code_hashes) state.oauth_device_codes.delete(h);
      return state;
    case 'OAuthRequestPushed':
      for (const h of change.expired) state.oauth_pushed.delete(h);
      state.oauth_pushed.set(change.request.request_uri_hash, change.request);
      return state;
    case 'OAuthPushedRequestRedeemed':
      state.oauth_pushed.delete(change.request_uri_hash);
      return state;
  }
}
