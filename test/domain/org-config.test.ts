import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apply } from '../../src/domain/apply.js';
import {
  checkFactorAllowed,
  checkRedirectAllowed,
  checkSelfRegistration,
  defaultOrgConfig,
  globMatch,
  groupsClaimName,
  handleAllowed,
  newPersonActive,
  normaliseRedirectUri,
  redirectAllowed,
  tokenLifetime,
  type OrgConfig,
} from '../../src/domain/org-config.js';
import { fromSnapshot, toSnapshot, type StateSnapshot } from '../../src/domain/snapshot.js';
import type { Handle, OrgState } from '../../src/domain/state.js';
import { ServiceError, type ErrorCode } from '../../src/errors.js';
import { given, refused, when } from '../support/domain.js';

const DEFAULTS: OrgConfig = {
  token_duration: 0,
  groups_claim_name: 'groups',
  requires_manual_approval: false,
  deny_self_registration: false,
  allowed_factor_methods: [],
  first_factor_methods: [],
  second_factor_methods: [],
  second_factor_required: false,
  second_factor_required_groups: [],
  new_person_handle_patterns: [],
  sso_allowed_redirect_uris: [],
};

const config = (fields: Partial<OrgConfig> = {}): OrgConfig => ({ ...defaultOrgConfig(), ...fields });
const mail = (value: string): Handle => ({ type: 'email_address', value });
const phone = (value: string): Handle => ({ type: 'phone_number', value });
const user = (value: string): Handle => ({ type: 'username', value });

/** The call throws a ServiceError with this code whose message mentions each string. */
function throwsService(fn: () => unknown, code: ErrorCode, ...mentions: string[]): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, code, error.message);
    for (const m of mentions) assert.ok(error.message.includes(m), `"${error.message}" does not mention "${m}"`);
    return true;
  });
}

describe('SetOrgConfig', () => {
  test('given a new organization, then its configuration is the defaults', () => {
    assert.deepEqual(given().config, DEFAULTS);
  });

  test('given the defaults, when some fields are patched, then those change, the reply is the whole configuration, and no event is emitted', () => {
    const { decision, after } = when<OrgConfig>(given(), { kind: 'SetOrgConfig', patch: { token_duration: 600, deny_self_registration: true } });
    const expected = { ...DEFAULTS, token_duration: 600, deny_self_registration: true };
    assert.deepEqual(decision.reply, expected);
    assert.deepEqual(decision.changes, [{ t: 'OrgConfigSet', config: expected }]);
    assert.deepEqual(decision.events, []);
    assert.deepEqual(after.config, expected);
  });

  test('given a configuration, when another field is patched, then the earlier ones are kept', () => {
    const { after } = when(given({ t: 'OrgConfigSet', config: config({ token_duration: 600 }) }), { kind: 'SetOrgConfig', patch: { groups_claim_name: 'teams' } });
    assert.deepEqual(after.config, { ...DEFAULTS, token_duration: 600, groups_claim_name: 'teams' });
  });

  test('given a configuration, when the patch is empty or repeats the current values, then nothing is recorded and the reply is the configuration', () => {
    const state = given({ t: 'OrgConfigSet', config: config({ allowed_factor_methods: ['password'] }) });
    for (const patch of [{}, { allowed_factor_methods: ['password'] }, { allowed_factor_methods: ['password', 'password'] }]) {
      const { decision } = when<OrgConfig>(state, { kind: 'SetOrgConfig', patch });
      assert.deepEqual(decision.changes, []);
      assert.deepEqual(decision.reply, { ...DEFAULTS, allowed_factor_methods: ['password'] });
    }
  });

  test('lists drop duplicates, keeping the first of each in place; redirect URIs that normalise alike count once', () => {
    const { decision } = when<OrgConfig>(given(), {
      kind: 'SetOrgConfig',
      patch: {
        allowed_factor_methods: ['oidc', 'password', 'oidc'],
        new_person_handle_patterns: ['*@b.com', '*@a.com', '*@b.com'],
        sso_allowed_redirect_uris: ['https://App.example.com', 'https://app.example.com:443/', 'myapp://callback'],
      },
    });
    assert.deepEqual(decision.reply.allowed_factor_methods, ['oidc', 'password']);
    assert.deepEqual(decision.reply.new_person_handle_patterns, ['*@b.com', '*@a.com']);
    assert.deepEqual(decision.reply.sso_allowed_redirect_uris, ['https://App.example.com', 'myapp://callback']);
  });

  test('the reply and the recorded configuration share no arrays with each other', () => {
    const { decision, after } = when<OrgConfig>(given(), { kind: 'SetOrgConfig', patch: { new_person_handle_patterns: ['*@a.com'] } });
    decision.reply.new_person_handle_patterns.push('*');
    assert.deepEqual(after.config.new_person_handle_patterns, ['*@a.com']);
  });

  test('the limits themselves are accepted', () => {
    const patch = {
      token_duration: 366 * 86_400,
      groups_claim_name: 'https://example.com/' + 'g'.repeat(100 - 20),
      new_person_handle_patterns: Array.from({ length: 32 }, (_, i) => `${'x'.repeat(310)}${i}*`),
      sso_allowed_redirect_uris: Array.from({ length: 8 }, (_, i) => `https://app${i}.example.com/cb`),
    };
    const { decision } = when<OrgConfig>(given(), { kind: 'SetOrgConfig', patch });
    assert.equal(decision.reply.groups_claim_name.length, 100);
    assert.equal(decision.reply.new_person_handle_patterns.length, 32);
    assert.equal(decision.reply.sso_allowed_redirect_uris.length, 8);
    assert.equal(when<OrgConfig>(given(), { kind: 'SetOrgConfig', patch: { token_duration: 1 } }).decision.reply.token_duration, 1);
  });

  const invalid: Array<[string, Record<string, unknown>, ...string[]]> = [
    ['a body that is not an object', [] as unknown as Record<string, unknown>, 'body'],
    ['an unknown field', { token_lifetime: 5 }, 'token_lifetime', 'unknown field'],
    ['a negative token_duration', { token_duration: -1 }, 'token_duration'],
    ['a fractional token_duration', { token_duration: 1.5 }, 'token_duration'],
    ['a token_duration over 366 days', { token_duration: 366 * 86_400 + 1 }, 'token_duration', '31622400'],
    ['a token_duration given as text', { token_duration: '3600' }, 'token_duration'],
    ['an empty groups_claim_name', { groups_claim_name: '' }, 'groups_claim_name'],
    ['a groups_claim_name with a space', { groups_claim_name: 'my groups' }, 'groups_claim_name'],
    ['a groups_claim_name over 100 characters', { groups_claim_name: 'g'.repeat(101) }, 'groups_claim_name'],
    ['a groups_claim_name starting with a digit', { groups_claim_name: '1groups' }, 'groups_claim_name'],
    ['a reserved groups_claim_name', { groups_claim_name: 'sub' }, 'groups_claim_name', '"sub"'],
    ['the roles claim as groups_claim_name', { groups_claim_name: 'roles' }, 'groups_claim_name', '"roles"'],
    ['the region claim as groups_claim_name', { groups_claim_name: 'region' }, 'groups_claim_name', '"region"'],
    ['__proto__ as groups_claim_name', { groups_claim_name: '__proto__' }, 'groups_claim_name'],
    ['a groups_claim_name that is not a string', { groups_claim_name: 7 }, 'groups_claim_name'],
    ['requires_manual_approval as text', { requires_manual_approval: 'yes' }, 'requires_manual_approval'],
    ['deny_self_registration as a number', { deny_self_registration: 1 }, 'deny_self_registration'],
    ['an unknown factor method', { allowed_factor_methods: ['password', 'sms'] }, 'allowed_factor_methods[1]', '"sms"', 'password, oidc'],
    ['allowed_factor_methods that is not an array', { allowed_factor_methods: 'password' }, 'allowed_factor_methods'],
    ['too many handle patterns', { new_person_handle_patterns: Array.from({ length: 33 }, (_, i) => `*@d${i}.com`) }, 'new_person_handle_patterns', 'at most 32'],
    ['an empty handle pattern', { new_person_handle_patterns: ['*@a.com', ''] }, 'new_person_handle_patterns[1]'],
    ['a handle pattern over 320 characters', { new_person_handle_patterns: ['x'.repeat(321)] }, 'new_person_handle_patterns[0]'],
    ['a handle pattern with a space', { new_person_handle_patterns: ['* @a.com'] }, 'new_person_handle_patterns[0]'],
    ['a handle pattern that is not a string', { new_person_handle_patterns: [5] }, 'new_person_handle_patterns'],
    ['nine redirect URIs', { sso_allowed_redirect_uris: Array.from({ length: 9 }, (_, i) => `https://a${i}.example.com/`) }, 'sso_allowed_redirect_uris', 'at most 8'],
    ['a relative redirect URI', { sso_allowed_redirect_uris: ['/callback'] }, 'sso_allowed_redirect_uris[0]', 'absolute'],
    ['a redirect URI without its slashes', { sso_allowed_redirect_uris: ['https:app.example.com/cb'] }, 'sso_allowed_redirect_uris[0]', 'absolute'],
    ['a redirect URI with a fragment', { sso_allowed_redirect_uris: ['https://app.example.com/', 'https://app.example.com/cb#x'] }, 'sso_allowed_redirect_uris[1]', 'fragment'],
    ['a redirect URI with an empty fragment', { sso_allowed_redirect_uris: ['https://app.example.com/cb#'] }, 'sso_allowed_redirect_uris[0]', 'fragment'],
    ['a plain-http redirect URI off loopback', { sso_allowed_redirect_uris: ['http://app.example.com/cb'] }, 'sso_allowed_redirect_uris[0]', 'https'],
    ['a javascript: redirect URI', { sso_allowed_redirect_uris: ['javascript:alert(1)'] }, 'sso_allowed_redirect_uris[0]', 'javascript:'],
    ['a data: redirect URI', { sso_allowed_redirect_uris: ['data:text/html,hi'] }, 'sso_allowed_redirect_uris[0]', 'data:'],
    ['a redirect URI with credentials', { sso_allowed_redirect_uris: ['https://user:pw@app.example.com/'] }, 'sso_allowed_redirect_uris[0]', 'password'],
    ['a redirect URI with a backslash', { sso_allowed_redirect_uris: ['https://app.example.com\\@evil.example/'] }, 'sso_allowed_redirect_uris[0]', 'backslash'],
    ['a redirect URI with a space', { sso_allowed_redirect_uris: ['https://app.example.com/a b'] }, 'sso_allowed_redirect_uris[0]'],
    ['a redirect URI over 2048 characters', { sso_allowed_redirect_uris: [`https://app.example.com/${'a'.repeat(2048)}`] }, 'sso_allowed_redirect_uris[0]', '2048'],
    ['redirect URIs that are not strings', { sso_allowed_redirect_uris: [{}] }, 'sso_allowed_redirect_uris'],
  ];
  for (const [what, patch, ...mentions] of invalid) {
    test(`given a configuration, when the patch has ${what}, then it is a 400 naming the field and nothing changes`, () => {
      const state = given({ t: 'OrgConfigSet', config: config({ token_duration: 60 }) });
      // a valid field beside the bad one is not applied either
      refused(state, { kind: 'SetOrgConfig', patch: Array.isArray(patch) ? patch : { requires_manual_approval: true, ...patch } }, 'ERR_BAD_REQUEST', ...mentions);
    });
  }

  test('loopback http, custom schemes and queries are accepted as redirect URIs', () => {
    const uris = ['http://localhost:3000/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]/cb', 'http://dev.localhost/cb', 'com.example.app:/oauth2redirect', 'myapp://callback?x=1'];
    const { decision } = when<OrgConfig>(given(), { kind: 'SetOrgConfig', patch: { sso_allowed_redirect_uris: uris } });
    assert.deepEqual(decision.reply.sso_allowed_redirect_uris, uris);
  });
});

describe('snapshots and replay', () => {
  test('a configured state survives toSnapshot/fromSnapshot through JSON unchanged', () => {
    const state = given({ t: 'OrgConfigSet', config: config({ token_duration: 60, sso_allowed_redirect_uris: ['https://app.example.com/cb'], allowed_factor_methods: ['oidc'] }) });
    assert.deepEqual(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state)))), state);
  });

  test('a snapshot written before the configuration existed reads as the defaults', () => {
    // A version-3 snapshot: the version before the configuration.
    const snap = JSON.parse(JSON.stringify(toSnapshot(given()))) as StateSnapshot;
    const { config: _, ...org } = snap.org;
    assert.deepEqual(fromSnapshot({ ...snap, v: 3, org }).config, DEFAULTS);
  });

  test('a stored configuration lacking a later field reads that field as its default', () => {
    const snap = JSON.parse(JSON.stringify(toSnapshot(given()))) as StateSnapshot;
    snap.org.config = { token_duration: 90 };
    assert.deepEqual(fromSnapshot(snap).config, { ...DEFAULTS, token_duration: 90 });
    const replayed = given({ t: 'OrgConfigSet', config: { token_duration: 90 } as OrgConfig });
    assert.deepEqual(replayed.config, { ...DEFAULTS, token_duration: 90 });
  });

  test('a suborganization starts with the defaults, whatever its parent set', () => {
    const parent = given({ t: 'OrgConfigSet', config: config({ deny_self_registration: true }) });
    const { decision } = when(parent, { kind: 'CreateSuborganization', sub_org_name: 'child' });
    assert.ok(decision.spawn);
    // what the registry does with a spawn: the child's first entry
    const child = apply(undefined as unknown as OrgState, { t: 'OrgCreated', genesis: decision.spawn });
    assert.deepEqual(child.config, DEFAULTS);
    assert.equal(parent.config.deny_self_registration, true);
  });
});

describe('tokenLifetime and groupsClaimName', () => {
  test('token_duration 0 means the deployment default; any other value is the lifetime', () => {
    assert.equal(tokenLifetime(config(), 86_400), 86_400);
    assert.equal(tokenLifetime(config({ token_duration: 300 }), 86_400), 300);
    assert.equal(tokenLifetime(config({ token_duration: 200_000 }), 86_400), 200_000);
  });

  test('the groups claim is groups by default, else the configured name', () => {
    assert.equal(groupsClaimName(config()), 'groups');
    assert.equal(groupsClaimName(config({ groups_claim_name: 'https://example.com/teams' })), 'https://example.com/teams');
  });
});

describe('checkFactorAllowed', () => {
  test('given no allowed methods, then every method may authenticate', () => {
    for (const m of ['password', 'oidc']) assert.doesNotThrow(() => checkFactorAllowed(config(), m));
  });

  test('given only oidc, then password is a 403 naming it, and oidc passes', () => {
    const c = config({ allowed_factor_methods: ['oidc'] });
    throwsService(() => checkFactorAllowed(c, 'password'), 'ERR_FORBIDDEN', '"password"', 'allowed: oidc');
    assert.doesNotThrow(() => checkFactorAllowed(c, 'oidc'));
  });
});

describe('globMatch', () => {
  const cases: Array<[string, string, boolean]> = [
    ['*@example.com', 'ada@example.com', true],
    ['*@example.com', 'ada@example.com.evil.org', false],
    ['*@example.com', 'ada@sub.example.com', false],
    ['*@*.example.com', 'ada@sub.example.com', true],
    ['+44*', '+442071234567', true],
    ['+44*', '+14155550100', false],
    ['*', '', true],
    ['', '', true],
    ['', 'a', false],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'aXXbYY', false],
    ['**', 'anything', true],
    ['[ab]', '[ab]', true],
    ['[ab]', 'a', false],
    ['.*', 'x', false],
    ['é?', 'éa', true],
    ['?', '😀', true],
  ];
  for (const [pattern, text, expected] of cases) {
    test(`${JSON.stringify(pattern)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(text)}`, () => {
      assert.equal(globMatch(pattern, text), expected);
    });
  }

  test('many stars against a long near-miss finish at once (no exponential backtracking)', () => {
    const started = performance.now();
    assert.equal(globMatch('*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(320)), false);
    // far below what a backtracking regular expression would take (years); generous for a busy machine
    assert.ok(performance.now() - started < 5000);
  });
});

describe('checkSelfRegistration', () => {
  test('given the defaults, then any handle may register by any method', () => {
    for (const [m, h] of [['password', mail('a@x.org')], ['oidc', user('bob')], ['password', phone('+33612345678')]] as const) {
      assert.doesNotThrow(() => checkSelfRegistration(config(), m, h));
    }
  });

  test('given deny_self_registration, then registration is a 403 saying self-registration is disabled', () => {
    throwsService(() => checkSelfRegistration(config({ deny_self_registration: true }), 'password', mail('a@example.com')), 'ERR_FORBIDDEN', 'self-registration is disabled');
  });

  test('given a method that is not allowed, then the 403 names the method before anything else', () => {
    const c = config({ allowed_factor_methods: ['password'], deny_self_registration: true });
    throwsService(() => checkSelfRegistration(c, 'oidc', mail('a@example.com')), 'ERR_FORBIDDEN', '"oidc"');
  });

  test('given handle patterns, then a matching handle registers and another is a 403 naming the handle, without listing the patterns', () => {
    const c = config({ new_person_handle_patterns: ['*@example.com', '+44*'] });
    assert.doesNotThrow(() => checkSelfRegistration(c, 'password', mail('ada@example.com')));
    assert.doesNotThrow(() => checkSelfRegistration(c, 'oidc', phone('+442071234567')));
    throwsService(() => checkSelfRegistration(c, 'password', mail('ada@other.com')), 'ERR_FORBIDDEN', '"ada@other.com"', 'new_person_handle_patterns');
    throwsService(() => checkSelfRegistration(c, 'password', phone('+14155550100')), 'ERR_FORBIDDEN', '"+14155550100"');
    throwsService(() => checkSelfRegistration(c, 'password', user('ada')), 'ERR_FORBIDDEN', '"ada"');
    assert.throws(() => checkSelfRegistration(c, 'password', mail('ada@other.com')), (e: Error) => !e.message.includes('*@example.com'));
  });

  test('email addresses match patterns case-insensitively; other handles exactly', () => {
    assert.equal(handleAllowed(config({ new_person_handle_patterns: ['*@Example.COM'] }), mail('Ada@EXAMPLE.com')), true);
    assert.equal(handleAllowed(config({ new_person_handle_patterns: ['Admin*'] }), user('admin1')), false);
    assert.equal(handleAllowed(config({ new_person_handle_patterns: ['Admin*'] }), user('Admin1')), true);
  });
});

describe('newPersonActive', () => {
  test('a self-registered person starts active unless the organization requires manual approval', () => {
    assert.equal(newPersonActive(config()), true);
    assert.equal(newPersonActive(config({ requires_manual_approval: true })), false);
  });
});

describe('redirectAllowed', () => {
  const c = config({ sso_allowed_redirect_uris: ['https://App.Example.com:443/cb?from=sso', 'http://localhost:3000', 'myapp://callback'] });

  test('a URI equal to an allowed one after normalisation is allowed', () => {
    for (const uri of ['https://app.example.com/cb?from=sso', 'HTTPS://APP.EXAMPLE.COM/cb?from=sso', 'https://app.example.com/x/../cb?from=sso', 'http://localhost:3000/', 'myapp://callback']) {
      assert.equal(redirectAllowed(c, uri), true, uri);
    }
  });

  test('a different path, path case, trailing slash, query, port or scheme is not', () => {
    for (const uri of ['https://app.example.com/cb', 'https://app.example.com/CB?from=sso', 'https://app.example.com/cb/?from=sso', 'https://app.example.com/cb?from=sso&x=1', 'http://localhost:3001/', 'https://localhost:3000/', 'myapp://callback/other']) {
      assert.equal(redirectAllowed(c, uri), false, uri);
    }
  });

  test('a URI with a fragment, credentials, or that is not absolute is never allowed', () => {
    for (const uri of ['https://app.example.com/cb?from=sso#x', 'https://u:p@app.example.com/cb?from=sso', '/cb', '', 'javascript:alert(1)']) {
      assert.equal(redirectAllowed(c, uri), false, uri);
    }
  });

  test('given no allowed URIs, then nothing is allowed', () => {
    assert.equal(redirectAllowed(config(), 'https://app.example.com/'), false);
  });

  test('the normal form lowercases scheme and host, drops the default port, and gives an empty path its slash', () => {
    assert.equal(normaliseRedirectUri('HTTPS://Example.COM:443'), 'https://example.com/');
    assert.equal(normaliseRedirectUri('https://example.com#x'), undefined);
  });

  test('checkRedirectAllowed is a 400 naming redirect_uri and the URI', () => {
    throwsService(() => checkRedirectAllowed(c, 'https://evil.example/cb'), 'ERR_BAD_REQUEST', 'redirect_uri', '"https://evil.example/cb"');
    assert.doesNotThrow(() => checkRedirectAllowed(c, 'myapp://callback'));
  });
});
