import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostAllowed } from '../../src/domain/mitm.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { given, refused, when } from '../support/domain.js';

describe('MITM tokens', () => {
  test('given none, when one is created: its domains lower case and distinct, then it is held', () => {
    const { decision, after } = when(given(), { kind: 'CreateMitmToken', input: { allowed_domains: ['Shop.Example', 'shop.example.', '*.shop.example'], tag: 'shop' } });
    const token = decision.reply as { token: string; allowed_domains: string[] };
    assert.deepEqual(token.allowed_domains, ['shop.example', '*.shop.example']);
    assert.equal(after.mitm_tokens.get(token.token)?.tag, 'shop');
    assert.deepEqual(decision.events, []);
  });

  test('bad domains are refused naming the entry', () => {
    refused(given(), { kind: 'CreateMitmToken', input: { allowed_domains: ['ok.example', 'https://x.example'], tag: '' } }, 'ERR_BAD_REQUEST', /allowed_domains\[1\]/);
    refused(given(), { kind: 'CreateMitmToken', input: { allowed_domains: [], tag: '' } }, 'ERR_BAD_REQUEST', /at least one/);
  });

  test('a detection names the token, its domains and tag; a token deleted meanwhile records nothing', () => {
    const created = when(given(), { kind: 'CreateMitmToken', input: { allowed_domains: ['shop.example'], tag: 'shop' } });
    const token = (created.decision.reply as { token: string }).token;
    const detection = { token, mitm_domain: 'phish.test', client_ip_address: '192.0.2.1', user_agent: 'ua' };
    const { decision } = when(created.after, { kind: 'RecordMitmDetection', detection });
    assert.deepEqual(decision.events, [
      { name: 'MitmAttackDetected_v1', body: { client_ip_address: '192.0.2.1', user_agent: 'ua', mitm_domain: 'phish.test', allowed_domains: ['shop.example'], token_tag: 'shop', mitm_token: token } },
    ]);
    const deleted = when(created.after, { kind: 'DeleteMitmToken', token }).after;
    assert.deepEqual(when(deleted, { kind: 'RecordMitmDetection', detection }).decision.events, []);
  });

  test('tokens survive a snapshot; a snapshot of version 8 reads as none', () => {
    const created = when(given(), { kind: 'CreateMitmToken', input: { allowed_domains: ['shop.example'], tag: 'shop' } }).after;
    assert.equal(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(created)))).mitm_tokens.size, 1);
    const older = { ...toSnapshot(given()), v: 11 } as Record<string, unknown>;
    delete older['mitm_tokens'];
    assert.equal(fromSnapshot(older as never).mitm_tokens.size, 0);
  });

  test('host matching: exact hosts, and *.host for hosts below it only', () => {
    const patterns = ['shop.example', '*.corp.example'];
    assert.equal(hostAllowed(patterns, 'shop.example'), true);
    assert.equal(hostAllowed(patterns, 'SHOP.example.'), true);
    assert.equal(hostAllowed(patterns, 'www.shop.example'), false);
    assert.equal(hostAllowed(patterns, 'a.corp.example'), true);
    assert.equal(hostAllowed(patterns, 'a.b.corp.example'), true);
    assert.equal(hostAllowed(patterns, 'corp.example'), false);
    assert.equal(hostAllowed(patterns, 'evilcorp.example'), false);
  });
});
