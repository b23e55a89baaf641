// Gate's configuration: files and GATE_ variables merged in order, unknown keys named, defaults; URL patterns.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildConfig, envDocument, GateConfigError, loadGateConfig } from '../../src/gate/config.js';
import { compilePattern, createMatcher } from '../../src/gate/match.js';
import { removeDir, tempDir } from '../support/server.js';

test('YAML then JSON then the environment, merged in that order; URL lists appended', () => {
  const dir = tempDir('gate-config-');
  try {
    const yaml = join(dir, 'gate.yaml');
    const json = join(dir, 'more.json');
    writeFileSync(yaml, 'gate:\n  port: 8081\n  default:\n    target: http://127.0.0.1:9000\n  urls:\n    - pattern: "*/a/*"\n  plugins:\n    - id: jwt\n      type: validate-jwt\n      parameters:\n        jwks_url: http://127.0.0.1:1/jwks\n');
    writeFileSync(json, JSON.stringify({ gate: { port: 8082, urls: [{ pattern: '*/b/*', plugins: { JWT: { enabled: false } } }], plugins: [{ id: 'jwt', parameters: { issuer: 'x' } }] } }));
    const c = loadGateConfig([yaml, json], { GATE_PORT: '8083', GATE_URLS_1_TARGET: 'http://127.0.0.1:9001', GATE_PLUGINS_0_PARAMETERS_REQUIRED_GROUPS: '["admins"]', GATE_EVENTS_HEARTBEAT_INTERVAL: '2s' });
    assert.equal(c.port, 8083);
    assert.deepEqual(c.urls.map((u) => u.pattern), ['*/a/*', '*/b/*']);
    assert.equal(c.urls[1]?.target, 'http://127.0.0.1:9001');
    assert.deepEqual(c.urls[1]?.plugins, { jwt: { enabled: false } });
    assert.equal(c.plugins.length, 1);
    assert.deepEqual(c.plugins[0]?.parameters, { jwks_url: 'http://127.0.0.1:1/jwks', issuer: 'x', required_groups: ['admins'] });
    assert.equal(c.events.heartbeat.intervalMs, 2000);
    assert.equal(c.events.enabled, false, 'no gate.service, no events');
  } finally {
    removeDir(dir);
  }
});

test('unknown keys, another mode and bad values are start-up errors naming the key', () => {
  const bad = (doc: unknown, pattern: RegExp) => assert.throws(() => buildConfig(doc as Record<string, unknown>), (e: Error) => e instanceof GateConfigError && pattern.test(e.message));
  bad({ gate: { prot: 1 } }, /gate\.prot: unknown key/);
  bad({ gate: { urls: [{ pattern: '/x', tragte: 'http://a' }] } }, /gate\.urls\.0\.tragte: unknown key/);
  bad({ gate: { mode: 'ext_auth' } }, /gate\.mode: "ext_auth"/);
  bad({ gate: { mode: 'aws_lambda_auth' } }, /gate\.mode/);
  bad({ gate: { port: 'x' } }, /gate\.port: must be a number/);
  bad({ gate: { upstream_timeout: 'soon' } }, /upstream_timeout/);
  bad({ gate: { plugins: [{ type: 'a' }, { id: 'A-0', type: 'b' }] } }, /used twice/);
  bad({ gate: { urls: [{ pattern: '/x', plugins: { nope: { enabled: false } } }] } }, /gate\.urls\.0\.plugins\.nope: no plugin has this id/);
  bad({ gate: { events: { enabled: true } } }, /gate\.service/);
  assert.throws(() => envDocument({ GATE_NOPE: '1' }), /GATE_NOPE: unknown key "nope"/);
  assert.deepEqual(envDocument({ GATE_BUILD_COMMIT: 'abc', GATE_BUILT_BY: 'ci', PATH: '/bin' }), {}, 'build stamps are not configuration');
});

test('defaults: proxy mode, 30 s upstream timeout, hourly renewal, heartbeat off at 60 s, plugin ids by type and index', () => {
  const c = buildConfig({ gate: { service: { base_url: 'http://s/', org_id: 'o', api_key: 'k' }, plugins: [{ type: 'ratelimit' }] } });
  assert.equal(c.mode, 'proxy');
  assert.equal(c.upstreamTimeoutMs, 30_000);
  assert.equal(c.events.enabled, true);
  assert.equal(c.events.serverStartedRenewalMs, 3_600_000);
  assert.deepEqual(c.events.heartbeat, { enabled: false, intervalMs: 60_000 });
  assert.equal(c.service?.baseUrl, 'http://s');
  assert.equal(c.plugins[0]?.id, 'ratelimit-0');
});

test('patterns: host wildcards stay in the host, path wildcards span segments, a host without port matches any port', () => {
  const p = compilePattern('*.example.com/api/*');
  assert.equal(p('a.example.com', '/api/x/y'), true);
  assert.equal(p('a.example.com:8080', '/api/x'), true);
  assert.equal(p('example.org', '/api/x'), false);
  assert.equal(p('a.example.com', '/other'), false);
  assert.equal(compilePattern('/health')('any', '/health'), true);
  assert.equal(compilePattern('*:8080/*')('h:8080', '/x'), true);
  assert.equal(compilePattern('*:8080/*')('h:9090', '/x'), false);
  assert.equal(compilePattern('*/a/*')('evil.com', '/x/a/y'), false);
});

test('matching in order, default target, plugins switched per URL with their own parameters', () => {
  const c = buildConfig({
    gate: {
      default: { target: 'http://127.0.0.1:1' },
      urls: [
        { pattern: '*/open/*', plugins: { auth: { enabled: false } } },
        { pattern: '*/open/special', target: 'http://127.0.0.1:2' },
        { pattern: 'api.test/*', target: 'http://127.0.0.1:3', plugins: { auth: { parameters: { x: 1 } } } },
      ],
      plugins: [{ id: 'auth', type: 't' }, { id: 'rl', type: 't', enabled: false }],
    },
  });
  const built: string[] = [];
  const m = createMatcher(c, (p) => {
    built.push(`${p.id}:${JSON.stringify(p.parameters)}`);
    return p.id;
  });
  assert.deepEqual(m('x', '/open/special'), { target: 'http://127.0.0.1:1', plugins: [], urlIndex: 0 });
  assert.deepEqual(m('api.test', '/z'), { target: 'http://127.0.0.1:3', plugins: ['auth'], urlIndex: 2 });
  assert.deepEqual(m('other', '/z'), { target: 'http://127.0.0.1:1', plugins: ['auth'], urlIndex: -1 });
  assert.deepEqual(built.sort(), ['auth:{"x":1}', 'auth:{}']);
});
