// GET and PATCH /organizations/config against the real service: defaults, partial changes, refusals that
// change nothing, restarts, and one configuration per organization.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectResult, offsets } from '../support/expect.js';
import { ROOT_ORG, removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

// the original's fields for features not offered, answered with neutral values
const NOT_OFFERED = { from_email: '', from_phone_number_sms: '', authn_link_allowed_redirect_uris: [], sudo_mode_duration: 0 };
const DEFAULTS = {
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
  ...NOT_OFFERED,
};

const CONFIGURED = {
  token_duration: 900,
  groups_claim_name: 'https://example.com/teams',
  requires_manual_approval: true,
  deny_self_registration: true,
  allowed_factor_methods: ['oidc'],
  new_person_handle_patterns: ['*@example.com', '+44*'],
  sso_allowed_redirect_uris: ['https://app.example.com/signed-in', 'http://localhost:3000/cb', 'com.example.app:/oauth2redirect'],
};
/** the configuration as answered: the settable fields and the original's fields not offered */
const CONFIGURED_ANSWER = { ...CONFIGURED, first_factor_methods: [], second_factor_methods: [], second_factor_required: false, second_factor_required_groups: [], ...NOT_OFFERED };

describe('one server', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  const eventOffset = () => server.service.registry.get(ROOT_ORG)?.state.event_offset;

  test('a new organization has the default configuration', async () => {
    assert.deepEqual(expectResult(await server.client.get('/organizations/config'), 200), DEFAULTS);
  });

  test('a PATCH of some fields answers the whole configuration, keeps the others, and records one entry without an event', async () => {
    const c = server.client;
    const wal = offsets(server)[ROOT_ORG] as number;
    const events = eventOffset();
    const first = expectResult(await c.patch('/organizations/config', { token_duration: 900, allowed_factor_methods: ['oidc', 'oidc'] }), 200);
    assert.deepEqual(first, { ...DEFAULTS, token_duration: 900, allowed_factor_methods: ['oidc'] });
    assert.equal(offsets(server)[ROOT_ORG], wal + 1);
    assert.equal(eventOffset(), events, 'the catalog has no event for a configuration change');

    const second = expectResult(await c.patch('/organizations/config', { groups_claim_name: 'https://example.com/teams' }), 200);
    assert.deepEqual(second, { ...first, groups_claim_name: 'https://example.com/teams' });
    assert.deepEqual(expectResult(await c.get('/organizations/config'), 200), second);

    // the same values again, or nothing at all, change nothing and write nothing
    const before = offsets(server)[ROOT_ORG];
    assert.deepEqual(expectResult(await c.patch('/organizations/config', { token_duration: 900 }), 200), second);
    assert.deepEqual(expectResult(await c.patch('/organizations/config', {}), 200), second);
    assert.equal(offsets(server)[ROOT_ORG], before);
  });

  test('each invalid field is a 400 naming it, and nothing is stored', async () => {
    const c = server.client;
    const stored = expectResult(await c.get('/organizations/config'), 200);
    const bad: Array<[Record<string, unknown>, ...string[]]> = [
      [{ token_duration: -1 }, 'token_duration'],
      [{ token_duration: 366 * 86_400 + 1 }, 'token_duration'],
      [{ token_duration: 1.5 }, 'token_duration'],
      [{ token_duration: '60' }, 'token_duration'],
      [{ groups_claim_name: 'sub' }, 'groups_claim_name', '"sub"'],
      [{ groups_claim_name: 'region' }, 'groups_claim_name', '"region"'],
      [{ groups_claim_name: 'two words' }, 'groups_claim_name'],
      [{ groups_claim_name: '' }, 'groups_claim_name'],
      [{ requires_manual_approval: 'true' }, 'requires_manual_approval'],
      [{ deny_self_registration: null }, 'deny_self_registration'],
      [{ allowed_factor_methods: ['password', 'magic_link'] }, 'allowed_factor_methods[1]'],
      [{ new_person_handle_patterns: [''] }, 'new_person_handle_patterns[0]'],
      [{ new_person_handle_patterns: ['* @example.com'] }, 'new_person_handle_patterns[0]'],
      [{ new_person_handle_patterns: Array.from({ length: 33 }, (_, i) => `*@d${i}.example`) }, 'new_person_handle_patterns'],
      [{ sso_allowed_redirect_uris: ['/relative'] }, 'sso_allowed_redirect_uris[0]', 'absolute'],
      [{ sso_allowed_redirect_uris: ['https://app.example.com/cb#done'] }, 'sso_allowed_redirect_uris[0]', 'fragment'],
      [{ sso_allowed_redirect_uris: ['http://app.example.com/cb'] }, 'sso_allowed_redirect_uris[0]', 'https'],
      [{ sso_allowed_redirect_uris: ['javascript:alert(1)'] }, 'sso_allowed_redirect_uris[0]'],
      [{ sso_allowed_redirect_uris: Array.from({ length: 9 }, (_, i) => `https://a${i}.example.com/`) }, 'sso_allowed_redirect_uris'],
      [{ token_lifetime: 60 }, 'token_lifetime', 'unknown field'],
    ];
    const wal = offsets(server)[ROOT_ORG];
    for (const [fields, ...mentions] of bad) {
      // a valid field beside the bad one is not stored either
      expectError(await c.patch('/organizations/config', { deny_self_registration: !stored.deny_self_registration, ...fields }), 400, ...mentions);
    }
    assert.equal(offsets(server)[ROOT_ORG], wal, 'a refused PATCH wrote an entry');
    assert.deepEqual(expectResult(await c.get('/organizations/config'), 200), stored);
  });

  test('both routes want the API key', async () => {
    const c = server.client;
    expectError(await c.as(ROOT_ORG, '').get('/organizations/config'), 401, 'Service-API-Key');
    expectError(await c.as(ROOT_ORG, 'wrong-key-0123456789abcdef').patch('/organizations/config', { token_duration: 1 }), 401);
  });

  test('a suborganization starts with the defaults and keeps its own configuration', async () => {
    const c = server.client;
    expectResult(await c.patch('/organizations/config', CONFIGURED), 200);
    const created = expectResult(await c.post('/organizations/suborganizations', { sub_org_name: 'configured-apart' }), 200);
    const sub = c.as(created.id, created.api_key);
    assert.deepEqual(expectResult(await sub.get('/organizations/config'), 200), DEFAULTS);

    const subConfig = expectResult(await sub.patch('/organizations/config', { token_duration: 60, sso_allowed_redirect_uris: ['https://sub.example.com/'] }), 200);
    assert.deepEqual(subConfig, { ...DEFAULTS, token_duration: 60, sso_allowed_redirect_uris: ['https://sub.example.com/'] });
    assert.deepEqual(expectResult(await c.get('/organizations/config'), 200), CONFIGURED_ANSWER);
    // the sub's key reaches only the sub's configuration
    expectError(await sub.as(ROOT_ORG, created.api_key).get('/organizations/config'), 403);
  });

  test('the OpenAPI document describes both routes from their declaration', async () => {
    const doc = (await server.client.as('', '').get('/openapi.json')).body;
    const path = doc.paths['/organizations/config'];
    assert.ok(path.get && path.patch);
    const body = path.patch.requestBody.content['application/json'].schema;
    const notSettable = ['from_email', 'from_phone_number_sms', 'authn_link_allowed_redirect_uris', 'sudo_mode_duration'];
    assert.deepEqual(Object.keys(body.properties).sort(), Object.keys(DEFAULTS).filter((k) => !notSettable.includes(k)).sort());
    assert.equal(body.required, undefined, 'every field of the PATCH is optional');
  });
});

for (const [label, env] of [
  ['from the WAL', {}],
  ['from a snapshot', { SERVICE_SNAPSHOT_INTERVAL: '1' }],
] as const) {
  test(`the configuration survives a restart ${label}, and changes go on after it`, async () => {
    const dir = tempDir();
    let server = await startTestServer(env, {}, dir);
    try {
      expectResult(await server.client.patch('/organizations/config', CONFIGURED), 200);
      const created = expectResult(await server.client.post('/organizations/suborganizations', { sub_org_name: 'restarted' }), 200);
      expectResult(await server.client.as(created.id, created.api_key).patch('/organizations/config', { requires_manual_approval: true }), 200);
      await server.stop();
      server = await startTestServer(env, {}, dir);
      assert.deepEqual(expectResult(await server.client.get('/organizations/config'), 200), CONFIGURED_ANSWER);
      const sub = server.client.as(created.id, created.api_key);
      assert.deepEqual(expectResult(await sub.get('/organizations/config'), 200), { ...DEFAULTS, requires_manual_approval: true });

      expectResult(await server.client.patch('/organizations/config', { token_duration: 0, allowed_factor_methods: [] }), 200);
      await server.stop();
      server = await startTestServer(env, {}, dir);
      assert.deepEqual(expectResult(await server.client.get('/organizations/config'), 200), { ...CONFIGURED_ANSWER, token_duration: 0, allowed_factor_methods: [] });
    } finally {
      await server.stop();
      removeDir(dir);
    }
  });
}
