import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply } from '../../src/domain/apply.js';
import type { TokenRecord } from '../../src/domain/commands.js';
import { decide } from '../../src/domain/decide.js';
import type { DecideContext } from '../../src/domain/decision.js';
import { defaultOrgConfig, PolicyRefused, type OrgConfig } from '../../src/domain/org-config.js';
import { emptyState, type OrgState } from '../../src/domain/state.js';
import { AWAITING_APPROVAL, RECORDED } from '../../src/domain/admission.js';
import { ServiceError } from '../../src/errors.js';

const ctx: DecideContext = { nowMs: 1_800_000_000_000, uuid: () => 'p-1', secret: () => 's', hashKey: (k) => k, regions: ['europe-belgium'], isEventMessageName: () => true };

function orgWithPerson(active = true, personType: 'regular' | 'anonymous' = 'regular'): OrgState {
  const state = emptyState({ id: 'org-1', org_name: 'o', parent_id: null, root_id: 'org-1', api_key_hash: 'h', created: '2027-01-01T00:00:00.000Z' });
  return apply(state, {
    t: 'PersonCreated',
    person: { person_id: 'p-1', active, person_type: personType, region: 'europe-belgium', handles: [], groups: [], attributes: {}, gdpr_consents: [], created: '2027-01-01T00:00:00.000Z' },
  });
}

const record = (over: Partial<TokenRecord> = {}): TokenRecord => ({
  person_id: 'p-1',
  token_id: 'jti-1',
  mint_token_api: true,
  first_token: false,
  issued_at: '2027-01-15T08:00:00.123456789Z',
  expires_at: '2027-01-16T08:00:00.000000000Z',
  authentications: [],
  ...over,
});

test('given an active person, when a token is recorded, then it becomes their last token and TokenMinted is emitted', () => {
  const state = orgWithPerson();
  const d = decide(state, { kind: 'RecordToken', token: record() }, ctx);
  assert.deepEqual(d.changes, [{ t: 'PersonTokenMinted', person_id: 'p-1', token_id: 'jti-1' }]);
  assert.deepEqual(d.events, [
    {
      name: 'TokenMinted_v1',
      body: { token_id: 'jti-1', person_id: 'p-1', mint_token_api: true, issued_at: '2027-01-15T08:00:00.123456789Z', expires_at: '2027-01-16T08:00:00.000000000Z', first_token: false, authentications: [] },
    },
  ]);
  for (const c of d.changes) apply(state, c);
  const next = decide(state, { kind: 'RecordToken', token: record({ token_id: 'jti-2' }) }, ctx);
  for (const c of next.changes) apply(state, c);
  assert.equal(state.persons.get('p-1')?.last_token_id, 'jti-2');
  assert.equal(state.persons.get('p-1')?.token_count, 2);
});

test('given a sign-in, when its token is recorded, then the event carries its authentications and first_token', () => {
  const authentications = [{ timestamp: '2027-01-15T08:00:00.000000000Z', method: 'password', handle: { type: 'EmailAddress', value: 'a@example.com' } }];
  const d = decide(orgWithPerson(), { kind: 'RecordToken', token: record({ mint_token_api: false, first_token: true, authentications }) }, ctx);
  assert.equal(d.events[0]?.body['mint_token_api'], false);
  assert.equal(d.events[0]?.body['first_token'], true);
  assert.deepEqual(d.events[0]?.body['authentications'], authentications);
});

test('given an anonymous person, when a token is recorded, then AnonymousTokenMinted is emitted', () => {
  const d = decide(orgWithPerson(true, 'anonymous'), { kind: 'RecordToken', token: record() }, ctx);
  assert.equal(d.events[0]?.name, 'AnonymousTokenMinted_v1');
  assert.equal('authentications' in (d.events[0]?.body ?? {}), false);
});

test('given an inactive or unknown person, when a token is recorded, then it is refused and nothing changes', () => {
  assert.throws(() => decide(orgWithPerson(false), { kind: 'RecordToken', token: record() }, ctx), (e: unknown) => e instanceof ServiceError && e.status === 400 && /not active/.test(e.message));
  assert.throws(() => decide(orgWithPerson(), { kind: 'RecordToken', token: record({ person_id: 'p-2' }) }, ctx), (e: unknown) => e instanceof ServiceError && e.status === 404);
});

const signIn = { handle: { type: 'email_address', value: 'a@example.com' }, method: 'password', client_ip_address: '203.0.113.7' } as const;
const signInAuthentications = [{ timestamp: '2027-01-15T08:00:00.000000000Z', method: 'password', handle: { type: 'EmailAddress', value: 'a@example.com' } }];

test('given a sign-in, when its token is recorded, then AuthenticationSucceeded and TokenMinted share one analytics_metadata', () => {
  const d = decide(orgWithPerson(), { kind: 'RecordToken', token: record({ mint_token_api: false, first_token: true, authentications: signInAuthentications, sign_in: signIn }) }, ctx);
  assert.deepEqual(d.changes, [{ t: 'PersonTokenMinted', person_id: 'p-1', token_id: 'jti-1' }]);
  assert.deepEqual(d.events.map((e) => e.name), ['AuthenticationSucceeded_v1', 'TokenMinted_v1']);
  const analytics = { analytics_correlation_id: 'p-1', client_ip_address: '203.0.113.7' };
  assert.deepEqual(d.events[0]?.body, {
    analytics_metadata: analytics,
    person_id: 'p-1',
    region: 'europe-belgium',
    success_authn_method: 'password',
    authenticated_methods: ['password'],
    handle: { type: 'EmailAddress', value: 'a@example.com' },
  });
  assert.deepEqual(d.events[1]?.body, {
    analytics_metadata: analytics,
    token_id: 'jti-1',
    person_id: 'p-1',
    mint_token_api: false,
    issued_at: '2027-01-15T08:00:00.123456789Z',
    expires_at: '2027-01-16T08:00:00.000000000Z',
    first_token: true,
    authentications: signInAuthentications,
  });
});

test('given a registration, when its token is recorded, then the person is created with the password in the same decision', () => {
  const state = emptyState({ id: 'org-1', org_name: 'o', parent_id: null, root_id: 'org-1', api_key_hash: 'h', created: '2027-01-01T00:00:00.000Z' });
  const token = record({ person_id: 'p-9', mint_token_api: false, first_token: true, authentications: signInAuthentications, sign_in: { ...signIn, registration: { password_hash: 'hash', region: 'europe-belgium' } } });
  const d = decide(state, { kind: 'RecordToken', token }, ctx);
  assert.deepEqual(d.events.map((e) => e.name), ['PersonCreated_v1', 'AuthenticationSucceeded_v1', 'TokenMinted_v1']);
  for (const c of d.changes) apply(state, c);
  assert.equal(state.persons.get('p-9')?.password_hash, 'hash');
  assert.equal(state.persons.get('p-9')?.last_token_id, 'jti-1');
  assert.throws(() => decide(state, { kind: 'RecordToken', token: { ...token, person_id: 'p-10' } }, ctx), (e: unknown) => e instanceof ServiceError && e.status === 409);
});

test('given a sign-in of a person deactivated or deleted meanwhile, when its token is recorded, then it is a 401 and nothing changes', () => {
  const denied = (e: unknown) => e instanceof ServiceError && e.status === 401;
  assert.throws(() => decide(orgWithPerson(false), { kind: 'RecordToken', token: record({ mint_token_api: false, sign_in: signIn }) }, ctx), denied);
  assert.throws(() => decide(orgWithPerson(), { kind: 'RecordToken', token: record({ person_id: 'p-2', mint_token_api: false, sign_in: signIn }) }, ctx), denied);
});

/** The organization's configuration changed to `over` (as PATCH /organizations/config records it). */
function configured(state: OrgState, over: Partial<OrgConfig>): OrgState {
  return apply(state, { t: 'OrgConfigSet', config: { ...defaultOrgConfig(), ...over } });
}

const emptyOrg = () => emptyState({ id: 'org-1', org_name: 'o', parent_id: null, root_id: 'org-1', api_key_hash: 'h', created: '2027-01-01T00:00:00.000Z' });
const registration = () => record({ person_id: 'p-9', mint_token_api: false, first_token: true, authentications: signInAuthentications, sign_in: { ...signIn, registration: { password_hash: 'hash', region: 'europe-belgium' } } });
const refusedFor = (reason: string) => (e: unknown) => e instanceof PolicyRefused && e.status === 403 && e.failure_reason === reason;

test('given a configuration that no longer allows the method, when a sign-in\'s token is recorded, then it is a 403 naming it and nothing changes', () => {
  const state = configured(orgWithPerson(), { allowed_factor_methods: ['oidc'] });
  const token = record({ mint_token_api: false, sign_in: signIn });
  assert.throws(() => decide(state, { kind: 'RecordToken', token }, ctx), (e: unknown) => refusedFor('method_not_allowed')(e) && /"password"/.test((e as Error).message));
  assert.equal(decide(configured(orgWithPerson(), { allowed_factor_methods: ['password'] }), { kind: 'RecordToken', token }, ctx).reply, RECORDED);
  assert.equal(decide(state, { kind: 'RecordToken', token: record() }, ctx).reply, RECORDED, 'the mint-token API is no end-user method');
});

test('given a configuration that no longer allows the registration, when its token is recorded, then it is a 403 and nobody is created', () => {
  assert.throws(() => decide(configured(emptyOrg(), { deny_self_registration: true }), { kind: 'RecordToken', token: registration() }, ctx), refusedFor('self_registration_denied'));
  assert.throws(() => decide(configured(emptyOrg(), { new_person_handle_patterns: ['*@example.org'] }), { kind: 'RecordToken', token: registration() }, ctx), refusedFor('handle_not_allowed'));
  assert.throws(() => decide(configured(emptyOrg(), { allowed_factor_methods: ['oidc'] }), { kind: 'RecordToken', token: registration() }, ctx), refusedFor('method_not_allowed'));
  const allowed = decide(configured(emptyOrg(), { new_person_handle_patterns: ['*@EXAMPLE.com'] }), { kind: 'RecordToken', token: registration() }, ctx);
  assert.equal(allowed.reply, RECORDED);
});

test('given manual approval, when a registration is recorded, then the person is created inactive with the password, and no token counts', () => {
  const state = configured(emptyOrg(), { requires_manual_approval: true });
  const d = decide(state, { kind: 'RecordToken', token: registration() }, ctx);
  assert.equal(d.reply, AWAITING_APPROVAL);
  assert.deepEqual(d.events.map((e) => e.name), ['PersonCreated_v1', 'AuthenticationFailed_v1']);
  const failed = d.events[1]?.body as Record<string, unknown>;
  assert.equal(failed['failure_reason'], 'awaiting_approval');
  assert.equal(failed['person_id'], 'p-9');
  assert.equal(failed['failed_authn_method'], 'password');
  assert.equal(d.changes.some((c) => c.t === 'PersonTokenMinted'), false);
  let after = state;
  for (const c of d.changes) after = apply(after, c);
  const person = after.persons.get('p-9');
  assert.equal(person?.active, false);
  assert.equal(person?.password_hash, 'hash');
  assert.equal(person?.last_token_id, undefined);
});

test('given manual approval or a denied registration, when an existing person signs in, then their token is recorded as before', () => {
  const state = configured(orgWithPerson(), { requires_manual_approval: true, deny_self_registration: true, new_person_handle_patterns: ['*@example.org'] });
  const d = decide(state, { kind: 'RecordToken', token: record({ mint_token_api: false, sign_in: signIn }) }, ctx);
  assert.equal(d.reply, RECORDED);
  assert.deepEqual(d.events.map((e) => e.name), ['AuthenticationSucceeded_v1', 'TokenMinted_v1']);
});

test('given a sign-in that re-hashes an imported password, when its token is recorded, then the same entry replaces the hash, keeping the credential, unless it changed meanwhile', () => {
  const imported = apply(orgWithPerson(), { t: 'PersonPasswordSet', person_id: 'p-1', password_hash: '$2b$10$imported', credential_id: 'cred-1' });
  const token = record({ mint_token_api: false, authentications: signInAuthentications, sign_in: { ...signIn, rehash: { password_hash: 'scrypt$15$8$1$new', replaces: '$2b$10$imported' } } });
  const d = decide(imported, { kind: 'RecordToken', token }, ctx);
  assert.deepEqual(d.changes, [
    { t: 'PersonPasswordSet', person_id: 'p-1', password_hash: 'scrypt$15$8$1$new', credential_id: 'cred-1' },
    { t: 'PersonTokenMinted', person_id: 'p-1', token_id: 'jti-1' },
  ]);
  assert.ok(!d.events.some((e) => e.name === 'PasswordChanged_v1'), 'the password is the same');
  const changed = apply(imported, { t: 'PersonPasswordSet', person_id: 'p-1', password_hash: 'scrypt$15$8$1$set-meanwhile', credential_id: 'cred-2' });
  assert.deepEqual(decide(changed, { kind: 'RecordToken', token }, ctx).changes, [{ t: 'PersonTokenMinted', person_id: 'p-1', token_id: 'jti-1' }]);
});
