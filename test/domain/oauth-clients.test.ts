import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import type { OAuthClient } from '../../src/domain/state.js';
import { GENESIS, NOW_MS, given, refused, when } from '../support/domain.js';

const NOW_S = Math.floor(NOW_MS / 1000);

const client = (client_id: string, fields: Partial<OAuthClient> = {}): OAuthClient => ({
  client_id,
  client_name: 'machine',
  grant_types: ['client_credentials'],
  scopes: ['a', 'b'],
  public: false,
  redirect_uris: [],
  access_token_duration: 3600,
  refresh_token_duration: 2_592_000,
  secret_hash: 'hash:secret-0',
  created: GENESIS.created,
  ...fields,
});
const aClient = (client_id: string, fields: Partial<OAuthClient> = {}): Change => ({ t: 'OAuthClientCreated', client: client(client_id, fields) });

describe('CreateOAuthClient', () => {
  test('given none, when created, then the client with its secret hash only, the secret in the reply, and a regional event without it', () => {
    const { decision, after } = when<Record<string, unknown>>(given(), { kind: 'CreateOAuthClient', input: { client_name: ' machine ', scopes: ['a', 'b'], grant_types: ['client_credentials'] } });
    assert.equal(decision.reply['client_id'], 'id-1');
    assert.equal(decision.reply['client_secret'], 'secret-1');
    assert.equal(decision.reply['client_name'], 'machine');
    assert.deepEqual(after.oauth_clients.get('id-1'), client('id-1', { secret_hash: 'hash:secret-1', created: new Date(NOW_MS).toISOString() }));
    assert.equal(JSON.stringify(decision.changes).includes('"secret-1"'), false);
    assert.deepEqual(decision.events.map((e) => e.name), ['OAuth2ClientCreated_InRegion_v1']);
    assert.deepEqual(decision.events[0]?.body, { client_id: 'id-1', client_name: 'machine', grant_types: ['client_credentials'], redirect_uris: [], scopes: ['a', 'b'], public: false, region: 'europe-belgium' });
    assert.deepEqual(after.owed_twins.map((t) => t.name), ['OAuth2ClientCreated_v1']);
  });

  test('given none, when a public client is created, then it has no secret and no hash', () => {
    const { decision, after } = when<Record<string, unknown>>(given(), { kind: 'CreateOAuthClient', input: { client_name: 'spa', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: ['https://app.example.com/cb'], public: true } });
    assert.equal('client_secret' in decision.reply, false);
    assert.equal(after.oauth_clients.get('id-1')?.secret_hash, '');
  });

  test('cross-field rules are 400s naming the field', () => {
    const base = { client_name: 'x', scopes: [], grant_types: ['client_credentials'] };
    refused(given(), { kind: 'CreateOAuthClient', input: { ...base, public: true } }, 'ERR_BAD_REQUEST', 'client_credentials');
    refused(given(), { kind: 'CreateOAuthClient', input: { ...base, grant_types: ['authorization_code'] } }, 'ERR_BAD_REQUEST', 'redirect_uris');
    refused(given(), { kind: 'CreateOAuthClient', input: { ...base, grant_types: ['client_credentials', 'client_credentials'] } }, 'ERR_BAD_REQUEST', 'grant_types[1]');
    refused(given(), { kind: 'CreateOAuthClient', input: { ...base, scopes: ['a"b'] } }, 'ERR_BAD_REQUEST', 'scopes[0]');
  });
});

describe('UpdateOAuthClient, RotateOAuthClientSecret, DeleteOAuthClient', () => {
  test('given a client, when patched, then the whole client is replaced and its secret hash kept; an unchanged patch changes nothing', () => {
    const { decision, after } = when(given(aClient('c')), { kind: 'UpdateOAuthClient', client_id: 'c', patch: { scopes: ['a'] } });
    assert.deepEqual(decision.changes, [{ t: 'OAuthClientUpdated', client: client('c', { scopes: ['a'] }) }]);
    assert.equal(after.oauth_clients.get('c')?.secret_hash, 'hash:secret-0');
    assert.deepEqual(when(given(aClient('c')), { kind: 'UpdateOAuthClient', client_id: 'c', patch: { client_name: 'machine' } }).decision.changes, []);
  });

  test('given a client, when its secret is rotated, then only the hash changes', () => {
    const { decision, after } = when(given(aClient('c')), { kind: 'RotateOAuthClientSecret', client_id: 'c' });
    assert.deepEqual(decision.reply, { client_secret: 'secret-1' });
    assert.deepEqual(after.oauth_clients.get('c'), client('c', { secret_hash: 'hash:secret-1' }));
    refused(given(aClient('p', { public: true, secret_hash: '' })), { kind: 'RotateOAuthClientSecret', client_id: 'p' }, 'ERR_BAD_REQUEST', 'public');
  });

  test('given a client, when deleted, then it is gone; an unknown one is a 404', () => {
    assert.equal(when(given(aClient('c')), { kind: 'DeleteOAuthClient', client_id: 'c' }).after.oauth_clients.size, 0);
    refused(given(), { kind: 'DeleteOAuthClient', client_id: 'c' }, 'ERR_NOT_FOUND', '"c"');
  });
});

describe('RevokeAccessToken', () => {
  test('given nothing revoked, when an unexpired token is revoked, then its jti is listed until its exp; again or expired: nothing', () => {
    const { after } = when(given(), { kind: 'RevokeAccessToken', jti: 'j1', exp: NOW_S + 60 });
    assert.deepEqual([...after.oauth_revoked], [['j1', NOW_S + 60]]);
    assert.deepEqual(when(after, { kind: 'RevokeAccessToken', jti: 'j1', exp: NOW_S + 60 }).decision.changes, []);
    assert.deepEqual(when(given(), { kind: 'RevokeAccessToken', jti: 'j2', exp: NOW_S }).decision.changes, []);
  });

  test('given a revocation whose token has expired, when another is revoked, then the expired one is dropped', () => {
    const state = given({ t: 'AccessTokenRevoked', jti: 'old', exp: NOW_S - 1, now: NOW_S - 100 });
    const { after } = when(state, { kind: 'RevokeAccessToken', jti: 'new', exp: NOW_S + 60 });
    assert.deepEqual([...after.oauth_revoked.keys()], ['new']);
  });
});

describe('snapshot', () => {
  test('clients and revocations round-trip; a version 4 snapshot reads as none of either', () => {
    const state = given(aClient('c'), { t: 'AccessTokenRevoked', jti: 'j', exp: NOW_S + 60, now: NOW_S });
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
    assert.deepEqual(back.oauth_clients, state.oauth_clients);
    assert.deepEqual(back.oauth_revoked, state.oauth_revoked);
    const { oauth_clients: _c, oauth_revoked: _r, ...v4 } = { ...toSnapshot(given()), v: 4 };
    const upgraded = fromSnapshot(v4 as never);
    assert.equal(upgraded.oauth_clients.size, 0);
    assert.equal(upgraded.oauth_revoked.size, 0);
  });
});
