import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { CODE_RETAIN_MS, CODE_TTL_MS, type GrantOutcome, type IssueCodeInput, type RedeemCodeInput } from '../../src/domain/oauth-grants.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { NOW_MS, aPerson, fixedContext, given, when } from '../support/domain.js';

const code = (fields: Partial<IssueCodeInput> = {}): IssueCodeInput => ({
  code_hash: 'code-1',
  client_id: 'client-a',
  redirect_uri: 'https://app.example/cb',
  code_challenge: 'challenge-1',
  scope: ['openid'],
  nonce: 'n-1',
  person_id: 'p-1',
  auth_time: NOW_MS / 1000,
  amr: ['password'],
  ...fields,
});

const issued = (fields: Partial<IssueCodeInput> = {}, expires_at_ms = NOW_MS + CODE_TTL_MS): Change => ({ t: 'OAuthCodeIssued', code: { ...code(fields), expires_at_ms } });

const redeem = (fields: Partial<RedeemCodeInput> = {}): RedeemCodeInput => ({
  code_hash: 'code-1',
  client_id: 'client-a',
  redirect_uri: 'https://app.example/cb',
  verifier_challenge: 'challenge-1',
  grant_id: 'grant-1',
  refresh_hash: 'refresh-1',
  grant_ttl_ms: 3_600_000,
  ...fields,
});

const at = (nowMs: number) => ({ ...fixedContext(), nowMs });

function refusal(outcome: GrantOutcome, mention: string): void {
  assert.equal(outcome.ok, false);
  if (!outcome.ok) assert.ok(outcome.description.includes(mention), outcome.description);
}

describe('IssueOAuthCode', () => {
  test('given none, when issued, then it is stored by its hash for 60 s, and no event', () => {
    const { decision, after } = when(given(aPerson('p-1')), { kind: 'IssueOAuthCode', code: code() });
    assert.deepEqual(decision.events, []);
    assert.equal(after.oauth_codes.get('code-1')?.expires_at_ms, NOW_MS + CODE_TTL_MS);
  });

  test('given codes and grants long past their time, when a code is issued, then they are pruned', () => {
    const old = issued({ code_hash: 'old' }, NOW_MS - CODE_RETAIN_MS - 1);
    const recent = issued({ code_hash: 'recent' }, NOW_MS - 1);
    const { after } = when(given(old, recent), { kind: 'IssueOAuthCode', code: code() });
    assert.deepEqual([...after.oauth_codes.keys()].sort(), ['code-1', 'recent']);
  });
});

describe('RedeemOAuthCode', () => {
  test('given a code, when redeemed with its client, redirect_uri and verifier, then a grant starts', () => {
    const { decision, after } = when<GrantOutcome>(given(issued()), { kind: 'RedeemOAuthCode', input: redeem() });
    assert.equal(decision.reply.ok, true);
    assert.equal(after.oauth_grants.get('grant-1')?.refresh_hash, 'refresh-1');
    assert.equal(after.oauth_grants.get('grant-1')?.person_id, 'p-1');
    assert.equal(after.oauth_codes.get('code-1')?.redeemed_grant, 'grant-1');
  });

  test('given a redeemed code, when redeemed again, then refused and the grant it started is revoked', () => {
    const first = when<GrantOutcome>(given(issued()), { kind: 'RedeemOAuthCode', input: redeem() });
    const { decision, after } = when<GrantOutcome>(first.after, { kind: 'RedeemOAuthCode', input: redeem({ grant_id: 'grant-2' }) });
    refusal(decision.reply, 'already used');
    assert.equal(after.oauth_grants.get('grant-1')?.revoked, true);
    assert.equal(after.oauth_grants.has('grant-2'), false);
  });

  for (const [name, fields, mention] of [
    ['another client', { client_id: 'client-b' }, 'another client'],
    ['another redirect_uri', { redirect_uri: 'https://app.example/other' }, 'redirect_uri'],
    ['a wrong verifier', { verifier_challenge: 'other' }, 'does not match'],
    ['no verifier', { verifier_challenge: undefined }, 'code_verifier is required'],
    ['an unknown code', { code_hash: 'nope' }, 'unknown'],
  ] as const) {
    test(`given a code, when redeemed with ${name}, then refused and nothing changes`, () => {
      const { decision } = when<GrantOutcome>(given(issued()), { kind: 'RedeemOAuthCode', input: redeem(fields) });
      refusal(decision.reply, mention);
      assert.deepEqual(decision.changes, []);
    });
  }

  test('given a code past its 60 s, when redeemed, then refused as expired', () => {
    const { decision } = when<GrantOutcome>(given(issued()), { kind: 'RedeemOAuthCode', input: redeem() }, at(NOW_MS + CODE_TTL_MS));
    refusal(decision.reply, 'expired');
  });
});

describe('RotateOAuthRefresh', () => {
  const started = () => when<GrantOutcome>(given(issued()), { kind: 'RedeemOAuthCode', input: redeem() }).after;
  const rotate = (presented_hash: string, next_hash: string, client_id = 'client-a') => ({ kind: 'RotateOAuthRefresh' as const, input: { grant_id: 'grant-1', presented_hash, next_hash, client_id, grant_ttl_ms: 3_600_000 } });

  test('given a grant, when its refresh token is used, then it rotates', () => {
    const { decision, after } = when<GrantOutcome>(started(), rotate('refresh-1', 'refresh-2'));
    assert.equal(decision.reply.ok, true);
    assert.equal(after.oauth_grants.get('grant-1')?.refresh_hash, 'refresh-2');
  });

  test('given a rotated token, when it is used again, then the whole grant is revoked, the newest token too', () => {
    const once = when(started(), rotate('refresh-1', 'refresh-2')).after;
    const reuse = when<GrantOutcome>(once, rotate('refresh-1', 'refresh-3'));
    refusal(reuse.decision.reply, 'already used');
    assert.equal(reuse.after.oauth_grants.get('grant-1')?.revoked, true);
    refusal(when<GrantOutcome>(reuse.after, rotate('refresh-2', 'refresh-4')).decision.reply, 'revoked');
  });

  test('given a grant, when another client presents its token, then refused and nothing changes', () => {
    const { decision } = when<GrantOutcome>(started(), rotate('refresh-1', 'refresh-2', 'client-b'));
    refusal(decision.reply, 'another client');
    assert.deepEqual(decision.changes, []);
  });
});

describe('snapshots', () => {
  test('codes and grants survive a snapshot; a snapshot of the version before reads as none', () => {
    const state = when(given(issued()), { kind: 'RedeemOAuthCode', input: redeem() }).after;
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
    assert.deepEqual(back.oauth_grants.get('grant-1'), state.oauth_grants.get('grant-1'));
    // version 5: the one before codes and grants (later steps add other fields)
    const older = { ...toSnapshot(given()), v: 5 } as Record<string, unknown>;
    delete older['oauth_codes'];
    delete older['oauth_grants'];
    const upgraded = fromSnapshot(older as never);
    assert.equal(upgraded.oauth_codes.size, 0);
    assert.equal(upgraded.oauth_grants.size, 0);
  });
});
