import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import type { GrantOutcome, IssueCodeInput } from '../../src/domain/oauth-grants.js';
import { MAX_SESSIONS_PER_PERSON, type PersonSession } from '../../src/domain/sessions.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import type { OAuthClient } from '../../src/domain/state.js';
import { NOW_MS, aPerson, fixedContext, given, refused, when } from '../support/domain.js';

const session = (fields: Partial<PersonSession> = {}): PersonSession => ({
  session_id: 's-1',
  person_id: 'p-1',
  methods: ['password'],
  clients: [],
  created_ms: NOW_MS,
  last_used_ms: NOW_MS,
  expires_at_ms: NOW_MS + 3_600_000,
  ip: '203.0.113.7',
  user_agent: 'Mozilla/5.0',
  ...fields,
});

const code = (fields: Partial<IssueCodeInput> = {}): IssueCodeInput => ({
  code_hash: 'code-1',
  client_id: 'client-a',
  redirect_uri: 'https://app.example/cb',
  scope: ['openid'],
  person_id: 'p-1',
  auth_time: NOW_MS / 1000,
  amr: ['password'],
  session_id: 's-1',
  ...fields,
});

const started = (fields: Partial<PersonSession> = {}): Change => ({ t: 'SessionStarted', session: session(fields) });
const at = (nowMs: number) => ({ ...fixedContext(), nowMs });

const client = (client_id: string, fields: Partial<OAuthClient> = {}): Change => ({
  t: 'OAuthClientCreated',
  client: { client_id, client_name: client_id, grant_types: ['authorization_code'], scopes: [], public: false, redirect_uris: ['https://app.example/cb'], access_token_duration: 60, refresh_token_duration: 60, secret_hash: '', created: '', ...fields },
});

/** A person signed in (session s-1) and client-a, which listens for back-channel logouts, redeemed a code in it: grant g-1. */
function signedIn(listening = true) {
  const issued = when(given(aPerson('p-1'), client('client-a', listening ? { backchannel_logout_uri: 'https://app.example/logout' } : {})), { kind: 'IssueOAuthCode', code: code(), session: session() });
  const redeemed = when<GrantOutcome>(issued.after, { kind: 'RedeemOAuthCode', input: { code_hash: 'code-1', client_id: 'client-a', redirect_uri: 'https://app.example/cb', verifier_challenge: undefined, grant_id: 'g-1', refresh_hash: 'r-1', grant_ttl_ms: 86_400_000 } }, at(NOW_MS + 1000));
  return redeemed;
}

describe('sessions', () => {
  test('given a sign-in, when its code is issued and redeemed, then the session opens in the same entry and the grant belongs to it', () => {
    const { decision, after } = signedIn();
    assert.ok(decision.reply.ok);
    assert.equal(after.oauth_grants.get('g-1')?.session_id, 's-1');
    const s = after.sessions.get('s-1');
    assert.deepEqual(s?.clients, ['client-a']);
    assert.equal(s?.last_used_ms, NOW_MS + 1000);
    assert.equal(s?.expires_at_ms, NOW_MS + 1000 + 86_400_000, 'it lasts as long as its grant');
  });

  test('given a session with a grant, when the person ends it, then the grant is revoked and the client named for back-channel logout', () => {
    const { decision, after } = when(signedIn().after, { kind: 'EndSession', person_id: 'p-1', session_id: 's-1', reason: 'person' });
    assert.deepEqual(decision.changes, [
      { t: 'OAuthGrantRevoked', grant_id: 'g-1' },
      { t: 'SessionEnded', session_id: 's-1', reason: 'person', logouts: [{ client_id: 'client-a', sid: 'g-1', person_id: 'p-1' }] },
    ]);
    assert.equal(after.sessions.size, 0);
    assert.deepEqual([...after.backchannel_logouts.keys()], ['g-1'], 'owed until delivered');
    assert.equal(when(after, { kind: 'CompleteBackchannelLogouts', sids: ['g-1'] }).after.backchannel_logouts.size, 0);
    assert.deepEqual(when(after, { kind: 'CompleteBackchannelLogouts', sids: ['g-9'] }).decision.changes, [], 'an unknown sid changes nothing');
    const rotated = when<GrantOutcome>(after, { kind: 'RotateOAuthRefresh', input: { grant_id: 'g-1', presented_hash: 'r-1', client_id: 'client-a', next_hash: 'r-2', grant_ttl_ms: 1000 } });
    assert.equal(rotated.decision.reply.ok, false);
    assert.match((rotated.decision.reply as { description: string }).description, /its sign-in session ended/);
  });

  test('given a client without a backchannel_logout_uri, when its session ends, then it is not owed a logout', () => {
    const { decision, after } = when(signedIn(false).after, { kind: 'EndSession', person_id: 'p-1', session_id: 's-1', reason: 'organization' });
    assert.deepEqual(decision.changes.at(-1), { t: 'SessionEnded', session_id: 's-1', reason: 'organization', logouts: [] });
    assert.equal(after.backchannel_logouts.size, 0);
  });

  test("given a session, when another person or an unknown session is named, then 404 and nothing changes", () => {
    const state = signedIn().after;
    refused(state, { kind: 'EndSession', person_id: 'p-2', session_id: 's-1', reason: 'person' }, 'ERR_NOT_FOUND', 's-1');
    refused(state, { kind: 'EndSession', person_id: 'p-1', session_id: 's-9', reason: 'organization' }, 'ERR_NOT_FOUND', 's-9');
  });

  test('given an ended session, when its unredeemed code is redeemed, then it is refused', () => {
    const issued = when(given(aPerson('p-1')), { kind: 'IssueOAuthCode', code: code(), session: session() });
    const ended = when(issued.after, { kind: 'EndSession', person_id: 'p-1', session_id: 's-1', reason: 'organization' });
    const redeemed = when<GrantOutcome>(ended.after, { kind: 'RedeemOAuthCode', input: { code_hash: 'code-1', client_id: 'client-a', redirect_uri: 'https://app.example/cb', verifier_challenge: undefined, grant_id: 'g-1', grant_ttl_ms: 1000 } });
    assert.equal(redeemed.decision.reply.ok, false);
  });

  test("given an SSO session holding an identity token, when ended by that token's jti, then the token is revoked", () => {
    const state = when(given(aPerson('p-1')), { kind: 'StartSession', session: session({ methods: ['oidc'], tokens: [{ jti: 't-1', exp: NOW_MS / 1000 + 600 }] }) }).after;
    assert.deepEqual(when(state, { kind: 'EndSessionOf', person_id: 'p-2', jti: 't-1' }).decision.changes, [], "another person's token ends nothing");
    const { decision, after } = when<{ ended: string | null }>(state, { kind: 'EndSessionOf', person_id: 'p-1', jti: 't-1' });
    assert.equal(decision.reply.ended, 's-1');
    assert.equal(after.revoked_tokens.get('t-1'), NOW_MS / 1000 + 600);
    assert.deepEqual(when<{ ended: string | null }>(after, { kind: 'EndSessionOf', person_id: 'p-1', jti: 't-1' }).decision.changes, [], 'nothing left to end');
  });

  test('given sessions past their time and a person at the limit, when a session opens, then the expired go and the oldest ends', () => {
    const own = Array.from({ length: MAX_SESSIONS_PER_PERSON }, (_, i) => started({ session_id: `own-${i}`, created_ms: NOW_MS - 1000 + i }));
    const state = given(aPerson('p-1'), started({ session_id: 'old', person_id: 'p-2', expires_at_ms: NOW_MS }), ...own);
    const { decision, after } = when(state, { kind: 'StartSession', session: session({ session_id: 'new' }) });
    assert.deepEqual(decision.changes[0], { t: 'SessionsExpired', session_ids: ['old'] });
    assert.ok(!after.sessions.has('own-0') && after.sessions.has('own-1') && after.sessions.has('new'));
    assert.equal([...after.sessions.values()].filter((s) => s.person_id === 'p-1').length, MAX_SESSIONS_PER_PERSON);
  });

  test('given a session, when the person is deactivated or deleted, then it ends with its grants, and its clients are named', () => {
    for (const command of [{ kind: 'SetPersonActive', person_id: 'p-1', active: false }, { kind: 'DeletePerson', person_id: 'p-1' }] as const) {
      const { decision, after } = when(signedIn().after, command);
      assert.deepEqual(decision.changes.slice(0, 2), [
        { t: 'OAuthGrantRevoked', grant_id: 'g-1' },
        { t: 'SessionEnded', session_id: 's-1', reason: 'organization', logouts: [{ client_id: 'client-a', sid: 'g-1', person_id: 'p-1' }] },
      ], command.kind);
      assert.equal(after.sessions.size, 0);
    }
    assert.equal(when(signedIn().after, { kind: 'SetPersonActive', person_id: 'p-1', active: true }).after.sessions.size, 1, 'activating ends nothing');
  });

  test('a snapshot keeps sessions, and one written before sessions existed reads as having none', () => {
    const state = signedIn().after;
    assert.deepEqual(fromSnapshot(toSnapshot(state)).sessions.get('s-1'), state.sessions.get('s-1'));
    const ended = when(state, { kind: 'EndSession', person_id: 'p-1', session_id: 's-1', reason: 'person' }).after;
    assert.deepEqual(fromSnapshot(toSnapshot(ended)).backchannel_logouts.get('g-1'), { client_id: 'client-a', sid: 'g-1', person_id: 'p-1' });
    const { sessions: _none, backchannel_logouts: _owed, ...older } = toSnapshot(state);
    assert.equal(fromSnapshot({ ...older, v: 14 /* the version before sessions */ }).sessions.size, 0);
  });
});
