// The proof table: the entry that records a sign-in checks each factor's proof against the state it is decided
// on and uses it up (a TOTP step once, a recovery code once), and holds a person who must use two factors to
// two, whatever the edge decided before the configuration changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply } from '../../src/domain/apply.js';
import { RECORDED } from '../../src/domain/admission.js';
import type { SignInEntry } from '../../src/domain/commands.js';
import { decide } from '../../src/domain/decide.js';
import type { DecideContext } from '../../src/domain/decision.js';
import { FACTOR_METHODS, FIRST_FACTOR_METHODS, SECOND_FACTOR_METHODS, SIGN_IN_METHODS } from '../../src/domain/factors.js';
import { defaultOrgConfig, PolicyRefused, type OrgConfig } from '../../src/domain/org-config.js';
import { emptyState, type OrgState } from '../../src/domain/state.js';
import type { TotpCredential } from '../../src/domain/totp.js';
import { ServiceError } from '../../src/errors.js';

const ctx: DecideContext = { nowMs: 1_800_000_000_000, uuid: () => 'u-1', secret: () => 's', hashKey: (k) => `h(${k})`, regions: ['europe-belgium'], isEventMessageName: () => true };
const genesis = { id: 'org-1', org_name: 'o', parent_id: null, root_id: 'org-1', api_key_hash: 'h', created: '2027-01-01T00:00:00.000Z' };
const totp: TotpCredential = { v: 1, credential_id: 't-1', secret: { plain: 'S' }, confirmed: true, last_step: 100, recovery_codes: ['h(r1)', 'h(r2)'], recovery_codes_total: 10, created: '2027-01-01T00:00:00.000Z' };

function given(over: Partial<OrgConfig> = {}, groups: string[] = []): OrgState {
  let state = emptyState(genesis);
  state = apply(state, { t: 'PersonCreated', person: { person_id: 'p-1', active: true, person_type: 'regular', region: 'europe-belgium', handles: [], groups, attributes: {}, gdpr_consents: [], created: '2027-01-01T00:00:00.000Z' } });
  state = apply(state, { t: 'PersonTotpSet', person_id: 'p-1', totp });
  return apply(state, { t: 'OrgConfigSet', config: { ...defaultOrgConfig(), ...over } });
}

const handle = { type: 'email_address', value: 'a@example.com' } as const;
const auth = (method: string) => ({ timestamp: '2027-01-15T08:00:00.000000000Z', method, handle: { type: 'EmailAddress', value: 'a@example.com' } });
const withTotp = (proof: { totp_step?: number; recovery_code?: string }): SignInEntry => ({
  person_id: 'p-1',
  authentications: [auth('password'), auth('totp')],
  sign_in: { handle, method: 'totp', client_ip_address: '203.0.113.7', ...proof, factors: [{ method: 'password' }] },
});
const passwordOnly: SignInEntry = { person_id: 'p-1', authentications: [auth('password')], sign_in: { handle, method: 'password', client_ip_address: '203.0.113.7' } };
const refusedWith = (status: number) => (e: unknown) => e instanceof ServiceError && e.status === status;

test('the method lists derive from FACTOR_METHODS: anonymous is no sign-in method, totp only a second factor, webauthn either', () => {
  const oneTime = ['otp_via_email', 'email_link', 'otp_via_sms', 'sms_link'];
  assert.deepEqual([...FACTOR_METHODS], ['password', 'oidc', 'direct_id', 'anonymous', 'totp', 'webauthn', ...oneTime]);
  assert.deepEqual([...SIGN_IN_METHODS], ['password', 'oidc', 'direct_id', 'totp', 'webauthn', ...oneTime]);
  assert.deepEqual([...FIRST_FACTOR_METHODS], ['password', 'oidc', 'direct_id', 'webauthn', ...oneTime]);
  assert.deepEqual([...SECOND_FACTOR_METHODS], ['totp', 'webauthn']);
});

test('a TOTP step later than the last one is used up; the same step or an earlier one is refused', () => {
  const state = given();
  const d = decide(state, { kind: 'RecordSignIn', entry: withTotp({ totp_step: 101 }) }, ctx);
  assert.equal(d.reply, RECORDED);
  const after = d.changes.reduce(apply, state);
  assert.equal(after.persons.get('p-1')?.totp?.last_step, 101);
  assert.deepEqual((d.events.at(-1)?.body as Record<string, unknown>)['authenticated_methods'], ['password', 'totp']);
  assert.throws(() => decide(after, { kind: 'RecordSignIn', entry: withTotp({ totp_step: 101 }) }, ctx), refusedWith(401));
  assert.throws(() => decide(after, { kind: 'RecordSignIn', entry: withTotp({ totp_step: 100 }) }, ctx), refusedWith(401));
  assert.throws(() => decide(after, { kind: 'RecordSignIn', entry: withTotp({}) }, ctx), refusedWith(401));
});

test('a recovery code signs in once', () => {
  const state = given();
  const d = decide(state, { kind: 'RecordSignIn', entry: withTotp({ recovery_code: 'h(r1)' }) }, ctx);
  const after = d.changes.reduce(apply, state);
  assert.deepEqual(after.persons.get('p-1')?.totp?.recovery_codes, ['h(r2)']);
  assert.throws(() => decide(after, { kind: 'RecordSignIn', entry: withTotp({ recovery_code: 'h(r1)' }) }, ctx), refusedWith(401));
});

test('a person who must use two factors is refused a sign-in of one (the configuration changed after the edge checked)', () => {
  const isMissing = (e: unknown) => e instanceof PolicyRefused && e.failure_reason === 'second_factor_required';
  assert.throws(() => decide(given({ second_factor_required: true }), { kind: 'RecordSignIn', entry: passwordOnly }, ctx), isMissing);
  assert.throws(() => decide(given({ second_factor_required_groups: ['admins'] }, ['admins']), { kind: 'RecordSignIn', entry: passwordOnly }, ctx), isMissing);
  assert.equal(decide(given({ second_factor_required_groups: ['admins'] }, ['staff']), { kind: 'RecordSignIn', entry: passwordOnly }, ctx).reply, RECORDED);
  assert.equal(decide(given({ second_factor_required: true }), { kind: 'RecordSignIn', entry: withTotp({ totp_step: 101 }) }, ctx).reply, RECORDED);
});

test('a factor out of its place is refused: totp first, password second, or a method the organization does not allow', () => {
  const notAllowed = (e: unknown) => e instanceof PolicyRefused && e.failure_reason === 'method_not_allowed';
  const totpFirst: SignInEntry = { person_id: 'p-1', authentications: [auth('totp')], sign_in: { handle, method: 'totp', client_ip_address: '203.0.113.7', totp_step: 101 } };
  assert.throws(() => decide(given(), { kind: 'RecordSignIn', entry: totpFirst }, ctx), notAllowed);
  assert.throws(() => decide(given({ allowed_factor_methods: ['password'] }), { kind: 'RecordSignIn', entry: withTotp({ totp_step: 101 }) }, ctx), notAllowed);
  assert.throws(() => decide(given({ first_factor_methods: ['oidc'] }), { kind: 'RecordSignIn', entry: withTotp({ totp_step: 101 }) }, ctx), notAllowed);
});

test('a passkey assertion: the counter must move forward and the challenge is used once; the new counter and backup state are stored', () => {
  const passkey = { id: 'k-1', webauthn_credential_id: 'cred', public_key: 'pk', counter: 5, transports: [], aaguid: 'a', attestation_type: 'none', rp_id: 'shop.example', backup_eligible: true, backup_state: false, created: '2027-01-01T00:00:00.000Z' };
  const state = apply(given(), { t: 'PersonWebauthnSet', person_id: 'p-1', webauthn: { v: 1, credentials: [passkey], used_challenges: [] } });
  const assertion = (counter: number, hash = 'c-1'): SignInEntry => ({
    person_id: 'p-1',
    authentications: [auth('webauthn')],
    sign_in: { handle, method: 'webauthn', client_ip_address: '203.0.113.7', webauthn_credential_id: 'cred', webauthn_counter: counter, webauthn_backup_state: true, webauthn_challenge: { hash, exp_ms: ctx.nowMs + 60_000 } },
  });
  const d = decide(state, { kind: 'RecordSignIn', entry: assertion(6) }, ctx);
  const after = d.changes.reduce(apply, state);
  const stored = after.persons.get('p-1')?.webauthn;
  assert.equal(stored?.credentials[0]?.counter, 6);
  assert.equal(stored?.credentials[0]?.backup_state, true);
  assert.deepEqual(stored?.used_challenges.map((c) => c.hash), ['c-1']);
  // The same challenge again, even with a later counter; a counter that did not move (a clone).
  assert.throws(() => decide(after, { kind: 'RecordSignIn', entry: assertion(7) }, ctx), refusedWith(401));
  assert.throws(() => decide(after, { kind: 'RecordSignIn', entry: assertion(6, 'c-2') }, ctx), refusedWith(401));
  assert.equal(decide(after, { kind: 'RecordSignIn', entry: assertion(7, 'c-2') }, ctx).reply, RECORDED);
});
