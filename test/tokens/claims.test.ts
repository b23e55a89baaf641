import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/errors.js';
import { defaultOrgConfig, groupsClaimName } from '../../src/domain/org-config.js';
import { admitCustomClaims, CUSTOM_CLAIMS_MAX_BYTES, firstReservedClaim, identityClaims, personClaims, reservedClaim, withoutReservedClaims } from '../../src/tokens/claims.js';

const person = { person_id: 'p-1', region: 'europe-belgium', groups: ['admins', 'staff'] };

test('identity claims come in the documented order, with placeholders for what the issuer sets', () => {
  const claims = identityClaims({ org: 'org-1', person, authenticated_methods: ['api'], first_token: false, prev_token_id: 'jti-0' });
  assert.deepEqual(Object.keys(claims), ['iss', 'aud', 'oid', 'sub', 'person_id', 'iat', 'exp', 'jti', 'first_token', 'authenticated_methods', 'region', 'prev_token_id', 'groups']);
  assert.equal(claims['aud'], 'org-1');
  assert.equal(claims['oid'], 'org-1');
  assert.equal(claims['sub'], 'p-1');
  assert.equal(claims['person_id'], 'p-1');
  assert.equal(claims['region'], 'europe-belgium');
  assert.deepEqual(claims['groups'], ['admins', 'staff']);
});

test('prev_token_id, groups and roles appear only when there is something to say', () => {
  const claims = identityClaims({ org: { id: 'org-1' }, person: { ...person, groups: [], roles: [] }, authenticated_methods: ['password'], first_token: true });
  assert.equal('prev_token_id' in claims, false);
  assert.equal('groups' in claims, false);
  assert.equal('roles' in claims, false);
  assert.equal(claims['first_token'], true);
  const withRoles = identityClaims({ org: 'o', person: { ...person, roles: ['editor'] }, authenticated_methods: [], first_token: false });
  assert.deepEqual(withRoles['roles'], ['editor']);
});

test('groups go under the configured claim name, which is then reserved', () => {
  const custom = admitCustomClaims({ teams: 'x', groups: 'y', tier: 'gold' }, 'hook', 'teams');
  const claims = identityClaims({ org: 'o', person, authenticated_methods: [], first_token: false, groups_claim_name: 'teams', custom_claims: custom });
  assert.deepEqual(claims['teams'], ['admins', 'staff']);
  assert.equal('groups' in claims, false, 'groups stays reserved whatever the configured name');
  assert.equal(claims['tier'], 'gold');
  assert.equal(reservedClaim('teams', 'teams'), true);
  assert.equal(reservedClaim('teams'), false);
});

test('custom claims follow the standard ones, and reserved names among a hook\'s are dropped', () => {
  const claims = identityClaims({
    org: 'o',
    person,
    authenticated_methods: ['api'],
    first_token: false,
    custom_claims: admitCustomClaims(JSON.parse('{"plan":"pro","sub":"someone-else","exp":1,"__proto__":{"polluted":true},"n":2}') as Record<string, unknown>, 'hook', 'groups'),
  });
  assert.equal(claims['sub'], 'p-1');
  assert.equal(claims['exp'], 0);
  assert.deepEqual(Object.keys(claims).slice(-2), ['plan', 'n']);
  assert.equal(Object.getPrototypeOf(claims), Object.prototype);
  assert.equal((claims as { polluted?: boolean }).polluted, undefined);
});

test('every name on the reserved list is reserved, and the first one in a set of custom claims is named', () => {
  const list = 'aud exp jti iat iss nbf sub prev_token_id oid org_id user_id person_id first_token authenticated_methods oidc_tokens user_token groups roles access_token refresh_token id id_token gdpr gdpr_consent gdpr_consent_level parent_user_id parent_person_id parent_org_id parent_oid attributes custom_claims service sid';
  for (const name of list.split(' ')) assert.equal(reservedClaim(name), true, name);
  for (const name of ['region', 'plan', 'email', 'Sub']) assert.equal(reservedClaim(name), false, name);
  assert.equal(firstReservedClaim({ plan: 1, roles: [], sid: 'x' }), 'roles');
  assert.equal(firstReservedClaim({ plan: 1 }), undefined);
  assert.deepEqual(withoutReservedClaims({ plan: 1, roles: [], sid: 'x' }), { plan: 1 });
});

test('the API\'s custom claims are refused with a 400 naming the first reserved one, or when too large; passing ones are kept as they are', () => {
  const refused = (name: string) => (e: unknown) => e instanceof ServiceError && e.status === 400 && e.message.includes(`"${name}"`);
  assert.throws(() => admitCustomClaims({ plan: 1, roles: [], sid: 'x' }, 'api', 'groups'), refused('roles'));
  assert.throws(() => admitCustomClaims({ teams: 1 }, 'api', 'teams'), refused('teams'));
  assert.throws(() => admitCustomClaims(JSON.parse('{"__proto__":{}}') as Record<string, unknown>, 'api', 'groups'), refused('__proto__'));
  assert.throws(() => admitCustomClaims({ big: 'x'.repeat(CUSTOM_CLAIMS_MAX_BYTES) }, 'api', 'groups'), (e: unknown) => e instanceof ServiceError && e.status === 400 && /bytes of JSON/.test(e.message));
  const ok = { plan: 'pro' };
  assert.equal(admitCustomClaims(ok, 'api', 'groups'), ok);
  assert.equal(admitCustomClaims(ok, 'hook', 'groups'), ok, 'nothing to drop: the same object');
  assert.equal(groupsClaimName(defaultOrgConfig()), 'groups');
});

test('a profile sets its own audience: the identity token\'s is the organization, another\'s may differ', () => {
  const input = { org: { id: 'org-1' }, person, authenticated_methods: ['api'], first_token: false };
  assert.equal(identityClaims(input)['aud'], 'org-1');
  const other = personClaims(input, 'client-1');
  assert.equal(other['aud'], 'client-1');
  assert.equal(other['oid'], 'org-1');
  assert.deepEqual(Object.keys(other), Object.keys(identityClaims(input)), 'the same claims in the same order');
});
