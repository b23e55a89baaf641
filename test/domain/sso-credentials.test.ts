import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { MAX_SSO_CREDENTIALS, listSsoCredentials, type SsoCredentialInput } from '../../src/domain/sso-credentials.js';
import type { SsoCredential } from '../../src/domain/state.js';
import { GENESIS, NOW_MS, given, refused, when } from '../support/domain.js';

const sealed = (tag: string) => ({ sealed: 'aes-256-gcm' as const, box: `box-${tag}` });
const APPLE = { authorize_scopes: ['openid', 'email', 'name'], team_id: 'TEAM123456', key_id: 'KEY9876543' };

function input(client_id: string, provider = 'google', fields: Partial<SsoCredentialInput> = {}): SsoCredentialInput {
  return {
    client_id,
    provider,
    label: '',
    external_cred_id: '',
    enable_in_slashid_oidc_authz_server: false,
    options: { [provider]: { authorize_scopes: ['openid', 'email', 'profile'] } },
    client_secret: sealed(`secret-${client_id}`),
    ...fields,
  };
}

const aCredential = (client_id: string, provider = 'google', fields: Partial<SsoCredentialInput> = {}): Change => ({
  t: 'SsoCredentialCreated',
  credential: { ...input(client_id, provider, fields), created: GENESIS.created },
});

const view = (c: SsoCredentialInput) => ({
  client_id: c.client_id,
  provider: c.provider,
  label: c.label,
  external_cred_id: c.external_cred_id,
  enable_in_slashid_oidc_authz_server: c.enable_in_slashid_oidc_authz_server,
  options: c.options,
});

describe('CreateSsoCredential', () => {
  test('given none, when created, then SsoCredentialCreated with the sealed secret, no event, and a reply without it', () => {
    const credential = input('client-1', 'apple', { label: 'web', private_key: sealed('key'), options: { apple: { ...APPLE, secret_lifetime: '720h' } } });
    const { decision, after } = when(given(), { kind: 'CreateSsoCredential', credential });
    assert.deepEqual(decision.changes, [{ t: 'SsoCredentialCreated', credential: { ...credential, created: new Date(NOW_MS).toISOString() } }]);
    assert.deepEqual(decision.events, []);
    assert.deepEqual(decision.reply, view(credential));
    assert.equal(JSON.stringify(decision.reply).includes('box-'), false);
    assert.deepEqual(after.sso_credentials.get('client-1')?.client_secret, sealed('secret-client-1'));
  });

  test('given the client_id exists, when created again (any provider), then 409 naming it', () => {
    refused(given(aCredential('client-1')), { kind: 'CreateSsoCredential', credential: input('client-1', 'github') }, 'ERR_CONFLICT', 'client-1');
  });

  test('an apple credential without private_key, team_id or key_id is refused, naming each missing one', () => {
    const { team_id: _t, ...noTeam } = APPLE;
    refused(given(), { kind: 'CreateSsoCredential', credential: input('a', 'apple', { private_key: sealed('k'), options: { apple: noTeam } }) }, 'ERR_BAD_REQUEST', 'options.apple.team_id');
    refused(given(), { kind: 'CreateSsoCredential', credential: input('a', 'apple', { options: { apple: APPLE } }) }, 'ERR_BAD_REQUEST', 'options.apple.private_key');
    refused(given(), { kind: 'CreateSsoCredential', credential: input('a', 'apple', { options: {} }) }, 'ERR_BAD_REQUEST', 'options.apple.private_key, options.apple.team_id, options.apple.key_id');
  });

  test(`at most ${MAX_SSO_CREDENTIALS} per organization`, () => {
    const full = given(...Array.from({ length: MAX_SSO_CREDENTIALS }, (_, i) => aCredential(`c${i}`)));
    refused(full, { kind: 'CreateSsoCredential', credential: input('one-more') }, 'ERR_BAD_REQUEST', `${MAX_SSO_CREDENTIALS}`);
  });
});

describe('the list', () => {
  test('in creation order, optionally one provider, never a secret', () => {
    const state = given(aCredential('g1'), aCredential('a1', 'apple', { private_key: sealed('k'), options: { apple: APPLE } }), aCredential('g2'));
    assert.deepEqual(listSsoCredentials(state).map((c) => c.client_id), ['g1', 'a1', 'g2']);
    assert.deepEqual(listSsoCredentials(state, 'google').map((c) => c.client_id), ['g1', 'g2']);
    assert.deepEqual(listSsoCredentials(state, 'azuread'), []);
    assert.equal(JSON.stringify(listSsoCredentials(state)).includes('box-'), false);
  });
});

describe('UpdateSsoCredential', () => {
  const world = () => given(aCredential('a1', 'apple', { label: 'old', private_key: sealed('k1'), options: { apple: { ...APPLE, secret_lifetime: '720h' } } }));

  test('given a credential, when fields and some options change, then the others stay, the key included', () => {
    const { decision, after } = when(world(), {
      kind: 'UpdateSsoCredential',
      client_id: 'a1',
      provider: 'apple',
      patch: { label: 'new', client_secret: sealed('s2'), options: { secret_lifetime: '24h' } },
    });
    const c = after.sso_credentials.get('a1') as SsoCredential;
    assert.equal(decision.changes.length, 1);
    assert.equal(decision.changes[0]?.t, 'SsoCredentialUpdated');
    assert.equal(c.label, 'new');
    assert.deepEqual(c.client_secret, sealed('s2'));
    assert.deepEqual(c.private_key, sealed('k1'));
    assert.deepEqual(c.options, { apple: { ...APPLE, secret_lifetime: '24h' } });
    assert.equal(c.provider, 'apple');
    assert.deepEqual(decision.events, []);
    assert.equal(JSON.stringify(decision.reply).includes('box-'), false);
  });

  test('the same values again change nothing', () => {
    const { decision } = when(world(), { kind: 'UpdateSsoCredential', client_id: 'a1', provider: 'apple', patch: { label: 'old', options: { team_id: 'TEAM123456' } } });
    assert.deepEqual(decision.changes, []);
  });

  test('a credential stored without a required option (written before they were required) must gain it with its first change', () => {
    const old = given(aCredential('a1', 'apple', { private_key: sealed('k'), options: { apple: { authorize_scopes: ['openid'], team_id: 'TEAM123456' } } }));
    refused(old, { kind: 'UpdateSsoCredential', client_id: 'a1', provider: 'apple', patch: { label: 'x' } }, 'ERR_BAD_REQUEST', 'options.apple.key_id');
    assert.equal(when(old, { kind: 'UpdateSsoCredential', client_id: 'a1', provider: 'apple', patch: { options: { key_id: 'KEY9876543' } } }).decision.changes.length, 1);
  });

  test('an unknown client_id is a 404', () => {
    refused(world(), { kind: 'UpdateSsoCredential', client_id: 'nope', provider: 'apple', patch: { label: 'x' } }, 'ERR_NOT_FOUND', 'nope');
  });

  test('a patch checked for another provider (the credential was replaced meanwhile) is a 409', () => {
    refused(world(), { kind: 'UpdateSsoCredential', client_id: 'a1', provider: 'google', patch: { label: 'x' } }, 'ERR_CONFLICT', 'a1');
  });
});

describe('DeleteSsoCredential', () => {
  test('given a credential, when deleted, then it is gone and its client_id is free again', () => {
    const { decision, after } = when(given(aCredential('g1')), { kind: 'DeleteSsoCredential', client_id: 'g1' });
    assert.deepEqual(decision.changes, [{ t: 'SsoCredentialDeleted', client_id: 'g1' }]);
    assert.equal(after.sso_credentials.size, 0);
    assert.equal(when(after, { kind: 'CreateSsoCredential', credential: input('g1') }).decision.changes.length, 1);
  });

  test('an unknown client_id is a 404', () => {
    refused(given(), { kind: 'DeleteSsoCredential', client_id: 'g1' }, 'ERR_NOT_FOUND', 'g1');
  });
});

describe('snapshots', () => {
  test('credentials round-trip with their sealed secrets', () => {
    const state = given(aCredential('g1'), aCredential('a1', 'apple', { private_key: sealed('k'), options: { apple: APPLE } }));
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
    assert.deepEqual([...back.sso_credentials.values()], [...state.sso_credentials.values()]);
  });

  test('a snapshot written before credentials existed reads as none', () => {
    // A version-2 snapshot: the version before SSO credentials.
    const { sso_credentials: _, ...old } = toSnapshot(given());
    assert.equal(fromSnapshot({ ...old, v: 2 }).sso_credentials.size, 0);
  });
});
