// A data dir written by an earlier version opens and serves what it held: test/fixtures/data-v0 was written
// by b8e09bc (scripts/make-fixture.ts), before records carried a format version.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEventCodec } from '../../src/events/codec.js';
import { systemClock, type Clock } from '../../src/lib/clock.js';
import { decodeRecord } from '../../src/wal/codec.js';
import { openStore } from '../../src/wal/store.js';
import { expectError, expectResult } from '../support/expect.js';
import { caughtUp, waitFor } from '../support/regions.js';
import { removeDir, startTestServer, tempDir, type Client, type TestServer } from '../support/server.js';
import { range, Subscriber } from '../support/ws.js';

const fixtureDir = fileURLToPath(new URL('../fixtures/data-v0', import.meta.url));
const expected = JSON.parse(readFileSync(`${fixtureDir}.json`, 'utf8')) as {
  env: Record<string, string>;
  root: { id: string; api_key: string; organization: unknown };
  persons: string[];
  inactive: string;
  groups: string[];
  webhook: string;
  tokens: Array<{ token: string; jti: string; sub: string; exp: number }>;
  sub: { id: string; api_key: string; person: string };
  root_event_count: number;
  root_wal_offset: number;
};

/**
 * Wall-clock time as it ran when the fixture was written, a minute after its tokens were minted: the tokens
 * were minted for a year, and the test must not start failing when that year is over.
 */
function fixtureClock(): Clock {
  const mintedMs = Math.max(...expected.tokens.map((t) => t.exp)) * 1000 - Number(expected.env['SERVICE_TOKEN_TTL']) * 1000;
  const skewMs = Math.max(0, Date.now() - (mintedMs + 60_000));
  return {
    ...systemClock,
    nowMs: () => Date.now() - skewMs,
    nowNs: () => BigInt(Math.round((performance.timeOrigin + performance.now() - skewMs) * 1e3)) * 1000n,
  };
}

function start(dataDir: string): Promise<TestServer> {
  return startTestServer({ ...expected.env }, { clock: fixtureClock() }, dataDir);
}

const rootOf = (s: TestServer): Client => s.client.as(expected.root.id, expected.root.api_key);

/** The format versions of the root organization's stored records in a stopped data dir (undefined: none). */
async function storedVersions(dataDir: string, offsets: number[]): Promise<{ snapshot: unknown; entries: unknown[] }> {
  const store = openStore(dataDir, 'local', false);
  try {
    const version = (bytes: Buffer | undefined) => (bytes ? decodeRecord<{ v?: number; state?: { v?: number } }>(bytes) : undefined);
    return {
      snapshot: version(store.snapshots.getBinary(expected.root.id))?.state?.v,
      entries: offsets.map((o) => version(store.wal.getBinary([expected.root.id, o]))?.v),
    };
  } finally {
    await store.close();
  }
}

describe('a data dir written before records carried a format version', () => {
  test('opens, and serves its persons, groups, attributes, webhook, tokens, keys and events', async () => {
    const dir = tempDir('identity-upgrade-');
    cpSync(fixtureDir, dir, { recursive: true });
    // What makes this test mean something: the fixture's records predate format versions.
    assert.deepEqual(await storedVersions(dir, [1, expected.root_wal_offset]), { snapshot: undefined, entries: [undefined, undefined] });
    let server = await start(dir);
    try {
      // The root organization comes back from its snapshot and the entry after it, the suborganization from its WAL.
      assert.equal(server.service.recovered.orgs, 2);
      assert.ok(server.service.recovered.replayed >= 3, `replayed ${server.service.recovered.replayed} entries`);
      const root = rootOf(server);

      // the answer has since gained the original's tenant and pool fields; what the fixture recorded stays as it was
      const organization = expectResult<Record<string, unknown>>(await root.get('/organizations'), 200);
      assert.deepEqual(Object.fromEntries(Object.keys(expected.root.organization as object).map((k) => [k, organization[k]])), expected.root.organization);
      expectError(await root.as(expected.root.id, `${expected.root.api_key}-wrong`).get('/organizations'), 401);

      const listed = expectResult<any[]>(await root.get('/persons?limit=100'), 200);
      assert.deepEqual(listed.map((p) => p.person_id).sort(), [...expected.persons].sort());
      for (const [i, id] of expected.persons.entries()) {
        const p = expectResult(await root.get(`/persons/${id}`), 200);
        assert.deepEqual(
          p.handles.map((h: any) => `${h.type}:${h.value}`).sort(),
          [`email_address:person${i}@example.com`, `username:person${i}`],
        );
        assert.equal(p.active, id !== expected.inactive);
        assert.deepEqual(expectResult<string[]>(await root.get(`/persons/${id}/groups`), 200).sort(), i === 0 ? ['admins', 'staff'] : ['staff']);
      }
      assert.deepEqual(expectResult<string[]>(await root.get('/groups'), 200).sort(), expected.groups);
      assert.equal(expectResult(await root.get('/groups/staff'), 200).description, 'people who work here');
      assert.equal(expectResult<any[]>(await root.get('/groups/staff/persons?limit=100'), 200).length, expected.persons.length);
      assert.deepEqual(expectResult(await root.get(`/persons/${expected.persons[0]}/attributes/end_user_read_write`), 200), { locale: 'en-GB', theme: 'dark' });
      assert.deepEqual(expectResult(await root.get('/organizations/attributes/end_user_read_only'), 200), { plan: 'pro' });

      const webhook = expectResult(await root.get(`/organizations/webhooks/${expected.webhook}`), 200);
      assert.equal(webhook.target_url, 'https://hooks.example.com/audit');
      assert.deepEqual(
        expectResult<any[]>(await root.get(`/organizations/webhooks/${expected.webhook}/triggers`), 200).map((t) => `${t.trigger_type}:${t.trigger_name}`),
        ['event:PersonDeleted_v1'],
      );

      // The signing keys were stored by the earlier version: its tokens still verify.
      for (const t of expected.tokens) {
        const verdict = expectResult(await root.post('/token/validate', { token: t.token }), 200);
        assert.equal(verdict.valid, true, `token ${t.jti}: ${JSON.stringify(verdict)}`);
      }

      const sub = root.as(expected.sub.id, expected.sub.api_key);
      assert.deepEqual(expectResult(await sub.get(`/persons/${expected.sub.person}`), 200).handles, [{ type: 'email_address', value: 'sub@example.com' }]);
      assert.deepEqual(expectResult<string[]>(await root.get('/organizations/suborganizations'), 200), [expected.sub.id]);

      // Every stored event replays from the first, in order.
      const events = await Subscriber.open(server.base, { org: expected.root.id, key: expected.root.api_key, query: { from: '1' } });
      try {
        await events.waitForCount(expected.root_event_count);
        assert.deepEqual(events.offsets(), range(1, expected.root_event_count));
        for (const f of events.frames) assert.equal(f.event.event_metadata.organization_id, expected.root.id);
        // Written before the event chain existed, they were chained at start, from zero at the first event.
        const codec = createEventCodec();
        let previous: Uint8Array = Buffer.alloc(32);
        for (const f of events.frames) {
          previous = createHash('sha256').update(previous).update(codec.encodeEvent(f.event.event_metadata.event_name, f.event)).digest();
          assert.equal(f.chain, Buffer.from(previous).toString('hex'), `chain of event ${f.offset}`);
        }
      } finally {
        await events.close();
      }

      // The replica region resumes from its own store, at the offset the fixture stopped at.
      await waitFor(() => caughtUp(server.base), 30_000, 'the replica to catch up');
      assert.equal(server.service.regions.replica('us-iowa')?.state(expected.root.id)?.offset, expected.root_wal_offset);

      // Written now, in the current format, after the entries of the earlier one; a password sign-in follows
      // the earlier tokens.
      const added = expectResult(await root.post('/persons', { handles: [{ type: 'email_address', value: 'after-upgrade@example.com' }], groups: ['admins'] }), 201);
      const signedIn = expectResult(await root.as(expected.root.id, '').post('/authenticate/password', { handle: { type: 'email_address', value: 'person1@example.com' }, password: 'correct horse battery staple' }), 200);
      const claims = JSON.parse(Buffer.from(String(signedIn.token).split('.')[1] ?? '', 'base64url').toString('utf8'));
      assert.equal(claims.first_token, false);
      assert.equal(claims.prev_token_id, expected.tokens[1]?.jti);

      // Old and new records together come back after another restart.
      await server.stop();
      const written = await storedVersions(dir, [expected.root_wal_offset, expected.root_wal_offset + 1]);
      assert.deepEqual(written.entries, [undefined, 1]);
      server = await start(dir);
      const again = rootOf(server);
      assert.deepEqual(expectResult(await again.get(`/persons/${added.person_id}/groups`), 200), ['admins']);
      assert.equal(expectResult<any[]>(await again.get('/persons?limit=100'), 200).length, expected.persons.length + 1);
      assert.equal(server.service.registry.get(expected.root.id)?.state.offset, expected.root_wal_offset + 2);
    } finally {
      await server.stop();
      removeDir(dir);
    }
  });
});
