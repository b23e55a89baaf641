import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { GENESIS, NOW_MS, fixedContext, given, refused, when } from '../support/domain.js';

const machine = { client_name: 'agent', scopes: ['a'], grant_types: ['client_credentials'] };

describe('initial access tokens and RegisterOAuthClient', () => {
  test('given none, when a token is issued, then only its hash is kept and the value names the organization', () => {
    const { decision, after } = when<Record<string, unknown>>(given(), { kind: 'IssueOAuthRegistrationToken', input: { description: 'agents', expires_in: 3600 } });
    assert.equal(decision.reply['token'], `${GENESIS.id}.secret-1`);
    assert.deepEqual(after.oauth_registration_tokens, [{ id: 'id-1', token_hash: `hash:${GENESIS.id}.secret-1`, created: new Date(NOW_MS).toISOString(), description: 'agents', expires_at_ms: NOW_MS + 3_600_000 }]);
    assert.equal(JSON.stringify(decision.changes).includes('"org-1.secret-1"'), false);
    assert.deepEqual(decision.events, []);
  });

  test('given a token, when a client registers with it, then the client is created as by the management API, with its registration token hashed', () => {
    const issued = when<Record<string, unknown>>(given(), { kind: 'IssueOAuthRegistrationToken', input: {} });
    const state = issued.after;
    const { decision, after } = when<Record<string, unknown>>(state, { kind: 'RegisterOAuthClient', input: machine, initial_token_hash: `hash:${GENESIS.id}.secret-1` }, { ...fixedContext(), uuid: () => 'client-1', secret: (() => { let n = 1; return () => `s-${n++}`; })() });
    assert.equal(decision.reply['registration_access_token'], 'client-1.s-2');
    assert.equal(decision.reply['client_secret'], 's-1');
    const client = after.oauth_clients.get('client-1');
    assert.equal(client?.registration_access_token_hash, 'hash:client-1.s-2');
    assert.equal(client?.registration_token_id, 'id-1');
    assert.deepEqual(decision.events.map((e) => e.name), ['OAuth2ClientCreated_InRegion_v1']);
    // survives a snapshot, and a snapshot written before has none
    const again = fromSnapshot(toSnapshot(after));
    assert.deepEqual(again.oauth_registration_tokens, after.oauth_registration_tokens);
    assert.deepEqual(again.oauth_clients.get('client-1'), client);
    const { oauth_registration_tokens: _none, ...older } = toSnapshot(after).org;
    assert.equal(fromSnapshot({ ...toSnapshot(after), org: older }).oauth_registration_tokens, undefined);
  });

  test('an unknown, revoked or expired token registers nothing', () => {
    refused(given(), { kind: 'RegisterOAuthClient', input: machine, initial_token_hash: 'hash:nope' }, 'ERR_UNAUTHORIZED', 'initial access token');
    const issued = when(given(), { kind: 'IssueOAuthRegistrationToken', input: { expires_in: 60 } }).after;
    const late = { ...fixedContext(), nowMs: NOW_MS + 61_000 };
    assert.throws(() => when(issued, { kind: 'RegisterOAuthClient', input: machine, initial_token_hash: `hash:${GENESIS.id}.secret-1` }, late), /expired/);
    const revoked = when(issued, { kind: 'RevokeOAuthRegistrationToken', id: 'id-1' }).after;
    assert.deepEqual(revoked.oauth_registration_tokens, []);
    refused(revoked, { kind: 'RegisterOAuthClient', input: machine, initial_token_hash: `hash:${GENESIS.id}.secret-1` }, 'ERR_UNAUTHORIZED', 'revoked');
    refused(revoked, { kind: 'RevokeOAuthRegistrationToken', id: 'id-1' }, 'ERR_NOT_FOUND', 'id-1');
  });
});
