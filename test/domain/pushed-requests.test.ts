import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { MAX_PUSHED_REQUESTS, type PushOutcome, type PushRequestInput, type RedeemPushedOutcome } from '../../src/domain/pushed-requests.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { NOW_MS, fixedContext, given, when } from '../support/domain.js';

const TTL_MS = 60_000;
const input = (fields: Partial<PushRequestInput> = {}): PushRequestInput => ({ request_uri_hash: 'uri-1', client_id: 'client-a', params: { response_type: 'code', scope: 'openid' }, ttl_ms: TTL_MS, ...fields });
const pushed = (hash = 'uri-1', expires_at_ms = NOW_MS + TTL_MS): Change => ({ t: 'OAuthRequestPushed', request: { request_uri_hash: hash, client_id: 'client-a', params: { scope: 'openid' }, expires_at_ms }, expired: [] });
const redeem = (client_id = 'client-a') => ({ kind: 'RedeemOAuthPushedRequest' as const, input: { request_uri_hash: 'uri-1', client_id } });
const at = (nowMs: number) => ({ ...fixedContext(), nowMs });

describe('PushOAuthRequest', () => {
  test('stored by its hash until it expires; expired ones are dropped by the next push; no event', () => {
    const { decision, after } = when<PushOutcome>(given(pushed('old', NOW_MS - 1)), { kind: 'PushOAuthRequest', input: input() });
    assert.deepEqual(decision.reply, { expires_at_ms: NOW_MS + TTL_MS });
    assert.deepEqual(decision.events, []);
    assert.deepEqual([...after.oauth_pushed.keys()], ['uri-1']);
    assert.deepEqual(after.oauth_pushed.get('uri-1')?.params, { response_type: 'code', scope: 'openid' });
  });

  test('an organization holds a bounded number', () => {
    const full = given(...Array.from({ length: MAX_PUSHED_REQUESTS }, (_, i) => pushed(`u-${i}`)));
    const { decision } = when<PushOutcome>(full, { kind: 'PushOAuthRequest', input: input({ request_uri_hash: 'x' }) });
    assert.equal(decision.reply, undefined);
    assert.deepEqual(decision.changes, []);
  });
});

describe('RedeemOAuthPushedRequest', () => {
  test('once: the first use answers the parameters and removes it; the second finds nothing', () => {
    const first = when<RedeemPushedOutcome>(given(pushed()), redeem());
    assert.deepEqual(first.decision.reply, { ok: true, params: { scope: 'openid' } });
    assert.equal(first.after.oauth_pushed.size, 0);
    const second = when<RedeemPushedOutcome>(first.after, redeem());
    assert.deepEqual(second.decision.reply, { ok: false, reason: 'unknown' });
  });

  test('another client naming it does not use it up; an expired one is refused and removed', () => {
    const stranger = when<RedeemPushedOutcome>(given(pushed()), redeem('client-b'));
    assert.deepEqual(stranger.decision.reply, { ok: false, reason: 'other_client' });
    assert.equal(stranger.after.oauth_pushed.size, 1);
    const late = when<RedeemPushedOutcome>(given(pushed()), redeem(), at(NOW_MS + TTL_MS));
    assert.deepEqual(late.decision.reply, { ok: false, reason: 'expired' });
    assert.equal(late.after.oauth_pushed.size, 0);
  });
});

describe('snapshots', () => {
  test('pushed requests survive a snapshot; a snapshot of the version before reads as none', () => {
    const state = given(pushed());
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
    assert.deepEqual(back.oauth_pushed.get('uri-1'), state.oauth_pushed.get('uri-1'));
    const older = { ...toSnapshot(given()), v: 15 /* the version before pushed requests */ } as Record<string, unknown>;
    delete older['oauth_pushed'];
    assert.equal(fromSnapshot(older as never).oauth_pushed.size, 0);
  });
});
