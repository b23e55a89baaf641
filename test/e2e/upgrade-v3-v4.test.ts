// Data dirs written by earlier releases open and serve what they held, and take this version's records beside
// their own: test/fixtures/data-v3 (written by dad06c0 with scripts/make-fixture.ts, the release before sessions,
// second factors, passkeys, device codes, verified handles and imported hashes) and test/fixtures/data-v4 (written by
// c6fb3dd, the release before pushed requests in organization state, used one-time values kept across restarts and
// snapshots shipped between the processes of a region).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { systemClock, type Clock } from '../../src/lib/clock.js';
import { expectResult } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

interface Fixture {
  env: Record<string, string>;
  root: { id: string; api_key: string };
  persons: string[];
  inactive: string;
  groups: string[];
  webhook: string;
  tokens: Array<{ token: string; jti: string; exp: number }>;
  sub: { id: string; api_key: string; person: string };
}

/** Wall-clock time a minute after the fixture's tokens were minted, so that they stay within their year. */
function fixtureClock(expected: Fixture): Clock {
  const mintedMs = Math.max(...expected.tokens.map((t) => t.exp)) * 1000 - Number(expected.env['SERVICE_TOKEN_TTL']) * 1000;
  const skewMs = Math.max(0, Date.now() - (mintedMs + 60_000));
  return { ...systemClock, nowMs: () => Date.now() - skewMs, nowNs: () => BigInt(Math.round((performance.timeOrigin + performance.now() - skewMs) * 1e3)) * 1000n };
}

for (const [name, release] of [['data-v3', 'the release before sessions and second factors'], ['data-v4', 'the release before durable pushed requests and snapshots between processes']] as const) {
  const fixtureDir = fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  const expected = JSON.parse(readFileSync(`${fixtureDir}.json`, 'utf8')) as Fixture;
  describe(`a data dir of ${release} (${name})`, () => {
    test('opens, serves its persons, tokens and suborganization, and takes the new records beside its own across a restart', async () => {
      const dir = tempDir(`identity-upgrade-${name}-`);
      cpSync(fixtureDir, dir, { recursive: true });
      const start = (): Promise<TestServer> => startTestServer({ ...expected.env }, { clock: fixtureClock(expected) }, dir);
      let server = await start();
      try {
        const root = server.client.as(expected.root.id, expected.root.api_key);
        const listed = expectResult<any[]>(await root.get('/persons?limit=100'), 200);
        assert.deepEqual(listed.map((p) => p.person_id).sort(), [...expected.persons].sort());
        assert.deepEqual(expectResult<string[]>(await root.get('/groups'), 200).sort(), expected.groups);
        assert.equal(expectResult(await root.get(`/organizations/webhooks/${expected.webhook}`), 200).target_url, 'https://hooks.example.com/audit');
        for (const t of expected.tokens) assert.equal(expectResult(await root.post('/token/validate', { token: t.token }), 200).valid, true, `token ${t.jti}`);
        const sub = root.as(expected.sub.id, expected.sub.api_key);
        assert.deepEqual(expectResult(await sub.get(`/persons/${expected.sub.person}`), 200).handles, [{ type: 'email_address', value: 'sub@example.com' }]);

        // Its password hash signs in; the sign-in's token follows the fixture's last token.
        const signedIn = expectResult(await root.as(expected.root.id, '').post('/authenticate/password', { handle: { type: 'email_address', value: 'person1@example.com' }, password: 'correct horse battery staple' }), 200);
        const claims = JSON.parse(Buffer.from(String(signedIn.token).split('.')[1] ?? '', 'base64url').toString('utf8'));
        assert.equal(claims.prev_token_id, expected.tokens[1]?.jti);
        // A record of this version beside the fixture's: an OAuth client with the newer fields, and its person's sessions list.
        const client = expectResult(await root.post('/oauth2/clients', { client_name: 'after', grant_types: ['authorization_code'], scopes: ['openid'], redirect_uris: ['https://app.example.com/cb'], post_logout_redirect_uris: ['https://app.example.com/bye'] }), 201);
        assert.deepEqual(expectResult<any[]>(await root.get(`/persons/${expected.persons[1]}/sessions`), 200), []);

        await server.stop();
        server = await start();
        const again = server.client.as(expected.root.id, expected.root.api_key);
        assert.deepEqual(expectResult(await again.get(`/oauth2/clients/${client.client_id}`), 200).post_logout_redirect_uris, ['https://app.example.com/bye']);
        assert.equal(expectResult<any[]>(await again.get('/persons?limit=100'), 200).length, expected.persons.length);
        assert.equal(expectResult(await again.post('/token/validate', { token: signedIn.token }), 200).valid, true);
      } finally {
        await server.stop();
        removeDir(dir);
      }
    });
  });
}
