import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { ServiceError, type ErrorCode } from '../../src/errors.js';
import { checkOptions, checkTenant, type OptionsInput } from '../../src/sso/options.js';
import { ALWAYS_REQUESTED, SSO_PROVIDERS, type SsoProvider } from '../../src/sso/providers.js';

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

function refused(fn: () => unknown, code: ErrorCode, ...mentions: string[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ServiceError, String(e));
    assert.equal(e.code, code, e.message);
    for (const m of mentions) assert.ok(e.message.includes(m), `"${e.message}" does not mention "${m}"`);
    return true;
  });
}

const create = (provider: SsoProvider, options?: OptionsInput, allowInsecure = false) => checkOptions(provider, options, allowInsecure, true);

describe('the seed provider table', () => {
  const seed: Record<SsoProvider, string[]> = {
    google: ['openid', 'email', 'profile'],
    github: ['read:user', 'user:email'],
    bitbucket: ['account'],
    gitlab: ['read_user'],
    facebook: ['email', 'public_profile'],
    line: ['openid', 'email', 'profile'],
    azuread: ['openid', 'email', 'profile', 'User.Read'],
    service: ['openid', 'email', 'profile'],
    apple: ['openid', 'email', 'name'],
  };

  test('every provider of the seed, `service` standing for "the service"', () => {
    assert.deepEqual([...SSO_PROVIDERS].sort(), Object.keys(seed).sort());
  });

  for (const provider of SSO_PROVIDERS) {
    test(`${provider}: defaults without options, and supplied scopes after the always-requested ones without duplicates`, () => {
      const always = seed[provider];
      assert.deepEqual(ALWAYS_REQUESTED[provider], always);
      assert.deepEqual(create(provider).options.authorize_scopes, always);
      assert.deepEqual(create(provider, { [provider]: {} }).options.authorize_scopes, always);
      assert.deepEqual(create(provider, { [provider]: { authorize_scopes: [] } }).options.authorize_scopes, always);
      const supplied = ['extra.one', always[0] as string, 'https://example.com/x:read', 'extra.one', (always[0] as string).toUpperCase()];
      assert.deepEqual(create(provider, { [provider]: { authorize_scopes: supplied } }).options.authorize_scopes, [
        ...always,
        'extra.one',
        'https://example.com/x:read',
        (always[0] as string).toUpperCase(),
      ]);
    });
  }

  test('a change gives only the fields it sets; scopes it sets are merged the same way', () => {
    assert.deepEqual(checkOptions('github', { github: {} }, false, false).options, {});
    assert.deepEqual(checkOptions('github', { github: { authorize_scopes: ['repo'] } }, false, false).options, { authorize_scopes: ['read:user', 'user:email', 'repo'] });
  });
});

describe('authorize_scopes', () => {
  test('a scope with a space, an empty scope or a control character is a 400 naming its position', () => {
    refused(() => create('google', { google: { authorize_scopes: ['a', 'b c'] } }), 'ERR_BAD_REQUEST', 'options.google.authorize_scopes[1]', 'space');
    refused(() => create('google', { google: { authorize_scopes: [''] } }), 'ERR_BAD_REQUEST', 'authorize_scopes[0]');
    refused(() => create('google', { google: { authorize_scopes: ['a\tb'] } }), 'ERR_BAD_REQUEST', 'authorize_scopes[0]');
    refused(() => create('google', { google: { authorize_scopes: ['a"b'] } }), 'ERR_BAD_REQUEST', 'authorize_scopes[0]');
  });
});

describe("options of another provider than the credential's", () => {
  test('are a 400 naming them, also when empty', () => {
    refused(() => create('google', { github: { authorize_scopes: ['repo'] } }), 'ERR_BAD_REQUEST', 'options.github', 'google');
    refused(() => create('apple', { apple: {}, azuread: {} }), 'ERR_BAD_REQUEST', 'options.azuread', 'apple');
    refused(() => checkOptions('line', { google: {} }, false, false), 'ERR_BAD_REQUEST', 'options.google');
  });
});

describe('azuread.tenant', () => {
  test('defaults to common', () => {
    assert.equal(create('azuread').options.tenant, 'common');
  });
  test('accepts a GUID, a domain name and the pseudo tenants', () => {
    for (const t of ['common', 'organizations', 'consumer', '72f988bf-86f1-41af-91ab-2d7cd011db47', '72F988BF-86F1-41AF-91AB-2D7CD011DB47', 'contoso.onmicrosoft.com', 'example.com']) {
      assert.equal(create('azuread', { azuread: { tenant: t } }).options.tenant, t);
    }
  });
  test('refuses anything else', () => {
    for (const t of ['', 'Common', 'tenant', '72f988bf-86f1-41af-91ab', 'exa mple.com', '-bad.com', 'a..com', 'http://example.com']) {
      refused(() => checkTenant(t), 'ERR_BAD_REQUEST', 'options.azuread.tenant');
    }
  });
});

describe('service.organization_url', () => {
  test('an https URL with a host name', () => {
    assert.equal(create('service', { service: { organization_url: 'https://login.example.com/org/acme' } }).options.organization_url, 'https://login.example.com/org/acme');
    assert.equal(create('service').options.organization_url, undefined);
  });
  test('http, localhost and IP addresses only with SERVICE_WEBHOOK_ALLOW_INSECURE', () => {
    for (const url of ['http://login.example.com', 'https://localhost/x', 'https://127.0.0.1/x', 'https://[::1]/x']) {
      refused(() => create('service', { service: { organization_url: url } }), 'ERR_BAD_REQUEST', 'options.service.organization_url');
      assert.equal(create('service', { service: { organization_url: url } }, true).options.organization_url, url);
    }
    refused(() => create('service', { service: { organization_url: 'not a url' } }, true), 'ERR_BAD_REQUEST', 'options.service.organization_url');
    refused(() => create('service', { service: { organization_url: 'ftp://example.com' } }, true), 'ERR_BAD_REQUEST', 'scheme');
  });
});

describe('apple', () => {
  const key = p256();
  const apple = (fields: Record<string, string>) => create('apple', { apple: fields });

  test('defaults: secret_lifetime 30 days, no key, no ids', () => {
    assert.deepEqual(create('apple').options, { authorize_scopes: ['openid', 'email', 'name'], secret_lifetime: '720h' });
    assert.equal(create('apple').private_key, undefined);
  });

  test('secret_lifetime boundaries: 300 s to 15,777,000 s inclusive', () => {
    for (const ok of ['300s', '5m', '15777000s', '4382h30m', '262950m', '24h', '720h', '1h30m', '0.5h', '300000ms', '300000000000ns']) {
      assert.equal(apple({ secret_lifetime: ok }).options.secret_lifetime, ok, ok);
    }
    for (const low of ['299s', '4m59s', '299999ms', '299999999999ns', '0', '0s']) refused(() => apple({ secret_lifetime: low }), 'ERR_BAD_REQUEST', 'options.apple.secret_lifetime', '300s');
    for (const high of ['15777001s', '4382h30m1s', '4383h', '8760h']) refused(() => apple({ secret_lifetime: high }), 'ERR_BAD_REQUEST', 'options.apple.secret_lifetime', '15777000s');
  });

  test('malformed durations are refused', () => {
    for (const bad of ['', '300', '5 m', '-5m', '+5m', '5d', '1w', 'h', 'm5', '5mm', '1h 30m', 'P30D', '300.5s']) {
      refused(() => apple({ secret_lifetime: bad }), 'ERR_BAD_REQUEST', 'options.apple.secret_lifetime');
    }
  });

  test('team_id and key_id are exactly 10 characters', () => {
    const r = apple({ team_id: 'ABCDE12345', key_id: 'XYZ9876543' });
    assert.equal(r.options.team_id, 'ABCDE12345');
    assert.equal(r.options.key_id, 'XYZ9876543');
    for (const bad of ['ABCDE1234', 'ABCDE123456', '', 'ABCDE 1234']) {
      refused(() => apple({ team_id: bad }), 'ERR_BAD_REQUEST', 'options.apple.team_id', '10');
      refused(() => apple({ key_id: bad }), 'ERR_BAD_REQUEST', 'options.apple.key_id', '10');
    }
  });

  test('private_key: a PKCS8 EC P-256 key, kept apart from the options', () => {
    const r = apple({ private_key: key });
    assert.equal(r.private_key, key);
    assert.equal('private_key' in r.options, false);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const sec1 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'sec1' }).toString();
    const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const pub = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const garbled = key.replace(/\n[A-Za-z0-9+/]{8}/, '\nAAAAAAAA');
    for (const bad of [other, rsa, sec1, ed, pub, garbled, 'not a key', '']) refused(() => apple({ private_key: bad }), 'ERR_BAD_REQUEST', 'options.apple.private_key');
  });
});

test('groups_claim: a claim name or empty; anything else is refused naming the field', () => {
  assert.equal(checkOptions('service', { service: { groups_claim: 'groups' } }, false, false).options.groups_claim, 'groups');
  assert.equal(checkOptions('google', { google: { groups_claim: '' } }, false, false).options.groups_claim, '');
  assert.throws(() => checkOptions('google', { google: { groups_claim: 'has space' } }, false, false), /options\.google\.groups_claim/);
});
