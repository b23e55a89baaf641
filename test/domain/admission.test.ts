// A verified sign-in recorded without a token (RecordSignIn): the same admission as a sign-in's token, its
// AuthenticationSucceeded alone, and the person's last token left as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply } from '../../src/domain/apply.js';
import { AWAITING_APPROVAL, RECORDED } from '../../src/domain/admission.js';
import type { SignInEntry } from '../../src/domain/commands.js';
import { decide } from '../../src/domain/decide.js';
import type { DecideContext } from '../../src/domain/decision.js';
import { defaultOrgConfig, PolicyRefused, type OrgConfig } from '../../src/domain/org-config.js';
import { emptyState, type OrgState } from '../../src/domain/state.js';
import { ServiceError } from '../../src/errors.js';

const ctx: DecideContext = { nowMs: 1_800_000_000_000, uuid: () => 'u-1', secret: () => 's', hashKey: (k) => k, regions: ['europe-belgium'], isEventMessageName: () => true };
const genesis = { id: 'org-1', org_name: 'o', parent_id: null, root_id: 'org-1', api_key_hash: 'h', created: '2027-01-01T00:00:00.000Z' };

function given(active = true, over: Partial<OrgConfig> = {}): OrgState {
  let state = emptyState(genesis);
  state = apply(state, { t: 'PersonCreated', person: { person_id: 'p-1', active, person_type: 'regular', region: 'europe-belgium', handles: [], groups: [], attributes: {}, gdpr_consents: [], created: '2027-01-01T00:00:00.000Z' } });
  state = apply(state, { t: 'PersonTokenMinted', person_id: 'p-1', token_id: 'jti-0' });
  return apply(state, { t: 'OrgConfigSet', config: { ...defaultOrgConfig(), ...over } });
}

const authentications = [{ timestamp: '2027-01-15T08:00:00.000000000Z', method: 'password', handle: { type: 'EmailAddress', value: 'a@example.com' } }];
const entry = (over: Partial<SignInEntry> = {}): SignInEntry => ({
  person_id: 'p-1',
  authentications,
  sign_in: { handle: { type: 'email_address', value: 'a@example.com' }, method: 'password', client_ip_address: '203.0.113.7' },
  ...over,
});

test('given an active person, when a sign-in is recorded alone, then AuthenticationSucceeded is its one event and no token is recorded', () => {
  const state = given();
  const d = decide(state, { kind: 'RecordSignIn', entry: entry() }, ctx);
  assert.equal(d.reply, RECORDED);
  assert.deepEqual(d.changes, []);
  assert.deepEqual(d.events, [
    {
      name: 'AuthenticationSucceeded_v1',
      body: {
        analytics_metadata: { analytics_correlation_id: 'u-1', client_ip_address: '203.0.113.7' },
        person_id: 'p-1',
        region: 'europe-belgium',
        success_authn_method: 'password',
        authenticated_methods: ['password'],
        handle: { type: 'EmailAddress', value: 'a@example.com' },
      },
    },
  ]);
  assert.equal(state.persons.get('p-1')?.last_token_id, 'jti-0');
});

test('given a person deactivated or deleted, or a configuration refusing the method, when a sign-in is recorded alone, then it is refused as its token would be', () => {
  assert.throws(() => decide(given(false), { kind: 'RecordSignIn', entry: entry() }, ctx), (e: unknown) => e instanceof ServiceError && e.status === 401);
  assert.throws(() => decide(given(), { kind: 'RecordSignIn', entry: entry({ person_id: 'p-2' }) }, ctx), (e: unknown) => e instanceof ServiceError && e.status === 401);
  assert.throws(() => decide(given(true, { allowed_factor_methods: ['oidc'] }), { kind: 'RecordSignIn', entry: entry() }, ctx), (e: unknown) => e instanceof PolicyRefused && e.failure_reason === 'method_not_allowed');
});

test('given manual approval, when a registration is recorded alone, then the person is created inactive and awaits approval', () => {
  const state = given(true, { requires_manual_approval: true });
  const d = decide(state, { kind: 'RecordSignIn', entry: entry({ person_id: 'p-9', sign_in: { ...entry().sign_in, handle: { type: 'email_address', value: 'b@example.com' }, registration: { region: 'europe-belgium' } } }) }, ctx);
  assert.equal(d.reply, AWAITING_APPROVAL);
  assert.deepEqual(d.events.map((e) => e.name), ['PersonCreated_v1', 'AuthenticationFailed_v1']);
});
