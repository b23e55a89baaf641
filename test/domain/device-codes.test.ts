import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { DEVICE_CODE_TTL_MS, MAX_DEVICE_CODES, type DecideOutcome, type DeviceOutcome, type IssueDeviceCodeInput } from '../../src/domain/device-codes.js';
import { CODE_RETAIN_MS } from '../../src/domain/oauth-grants.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { NOW_MS, aPerson, fixedContext, given, refused, when } from '../support/domain.js';

const input = (fields: Partial<IssueDeviceCodeInput> = {}): IssueDeviceCodeInput => ({ device_code_hash: 'device-1', user_code_hash: 'user-1', client_id: 'client-a', scope: ['openid'], ...fields });
const issued = (fields: Partial<IssueDeviceCodeInput> = {}, expires_at_ms = NOW_MS + DEVICE_CODE_TTL_MS): Change => ({ t: 'OAuthDeviceCodeIssued', code: { ...input(fields), expires_at_ms } });
const facts = { person_id: 'p-1', auth_time: NOW_MS / 1000, amr: ['password'] };
const allowed: Change = { t: 'OAuthDeviceCodeDecided', device_code_hash: 'device-1', approved: facts };
const redeem = (client_id = 'client-a') => ({ kind: 'RedeemOAuthDeviceCode' as const, input: { device_code_hash: 'device-1', client_id, grant_id: 'grant-1', refresh_hash: 'refresh-1', grant_ttl_ms: 3_600_000 } });
const at = (nowMs: number) => ({ ...fixedContext(), nowMs });

function error(outcome: DeviceOutcome, code: string): void {
  assert.equal(outcome.ok, false);
  if (!outcome.ok) assert.equal(outcome.error, code, outcome.description);
}

describe('IssueOAuthDeviceCode', () => {
  test('stored by its hash for 10 minutes; codes long past their time are pruned; no event', () => {
    const old = issued({ device_code_hash: 'old', user_code_hash: 'old' }, NOW_MS - CODE_RETAIN_MS - 1);
    const { decision, after } = when(given(old), { kind: 'IssueOAuthDeviceCode', input: input() });
    assert.deepEqual(decision.events, []);
    assert.deepEqual([...after.oauth_device_codes.keys()], ['device-1']);
    assert.equal(after.oauth_device_codes.get('device-1')?.expires_at_ms, NOW_MS + DEVICE_CODE_TTL_MS);
  });

  test('a live user code is not given twice; an organization holds a bounded number', () => {
    refused(given(issued()), { kind: 'IssueOAuthDeviceCode', input: input({ device_code_hash: 'device-2' }) }, 'ERR_CONFLICT', 'in use');
    const full = given(...Array.from({ length: MAX_DEVICE_CODES }, (_, i) => issued({ device_code_hash: `d-${i}`, user_code_hash: `u-${i}` })));
    refused(full, { kind: 'IssueOAuthDeviceCode', input: input({ device_code_hash: 'x', user_code_hash: 'x' }) }, 'ERR_TOO_MANY_REQUESTS', String(MAX_DEVICE_CODES));
  });
});

describe('DecideOAuthDeviceCode', () => {
  test('answered once: allowed with the sign-in, or denied; a second answer is refused and changes nothing', () => {
    const { decision, after } = when<DecideOutcome>(given(issued()), { kind: 'DecideOAuthDeviceCode', input: { user_code_hash: 'user-1', approved: facts } });
    assert.deepEqual(decision.reply, { ok: true, client_id: 'client-a' });
    assert.deepEqual(after.oauth_device_codes.get('device-1')?.approved, facts);
    const again = when<DecideOutcome>(after, { kind: 'DecideOAuthDeviceCode', input: { user_code_hash: 'user-1', approved: undefined } });
    assert.equal(again.decision.reply.ok, false);
    assert.deepEqual(again.decision.changes, []);
  });

  test('an expired or unknown user code is refused', () => {
    const late = when<DecideOutcome>(given(issued()), { kind: 'DecideOAuthDeviceCode', input: { user_code_hash: 'user-1', approved: facts } }, at(NOW_MS + DEVICE_CODE_TTL_MS));
    assert.equal(late.decision.reply.ok, false);
    assert.equal(when<DecideOutcome>(given(), { kind: 'DecideOAuthDeviceCode', input: { user_code_hash: 'nope', approved: facts } }).decision.reply.ok, false);
  });
});

describe('RedeemOAuthDeviceCode', () => {
  test('pending, denied, expired, of another client: refused, nothing changes', () => {
    error(when<DeviceOutcome>(given(issued()), redeem()).decision.reply, 'authorization_pending');
    error(when<DeviceOutcome>(given(issued(), { t: 'OAuthDeviceCodeDecided', device_code_hash: 'device-1', denied: true }), redeem()).decision.reply, 'access_denied');
    error(when<DeviceOutcome>(given(issued(), allowed), redeem(), at(NOW_MS + DEVICE_CODE_TTL_MS)).decision.reply, 'expired_token');
    const foreign = when<DeviceOutcome>(given(issued(), allowed), redeem('client-b'));
    error(foreign.decision.reply, 'invalid_grant');
    assert.deepEqual(foreign.decision.changes, []);
  });

  test('allowed: a grant of the sign-in starts; redeemed again, it is revoked', () => {
    const first = when<DeviceOutcome>(given(aPerson('p-1'), issued(), allowed), redeem());
    assert.equal(first.decision.reply.ok, true);
    const grant = first.after.oauth_grants.get('grant-1');
    assert.equal(grant?.person_id, 'p-1');
    assert.deepEqual(grant?.scope, ['openid']);
    assert.equal(grant?.refresh_hash, 'refresh-1');
    const replay = when<DeviceOutcome>(first.after, { ...redeem(), input: { ...redeem().input, grant_id: 'grant-2' } });
    error(replay.decision.reply, 'invalid_grant');
    assert.equal(replay.after.oauth_grants.get('grant-1')?.revoked, true);
  });
});

describe('snapshots', () => {
  test('device codes survive a snapshot; a snapshot of the version before reads as none', () => {
    const state = given(issued(), allowed);
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
    assert.deepEqual(back.oauth_device_codes.get('device-1'), state.oauth_device_codes.get('device-1'));
    const older = { ...toSnapshot(given()), v: 13 /* the version before device codes */ } as Record<string, unknown>;
    delete older['oauth_device_codes'];
    assert.equal(fromSnapshot(older as never).oauth_device_codes.size, 0);
  });
});
