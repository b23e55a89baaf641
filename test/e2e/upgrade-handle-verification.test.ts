// Data dirs written before handles recorded their verification (test/fixtures/data-v0..v2) open with every
// stored handle read as `unrecorded`: an SSO sign-in joins such a person only while they hold no password.
// Handles added afterwards record how they were verified.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { joinableBySso } from '../../src/domain/handle-verification.js';
import type { Person } from '../../src/domain/state.js';
import { removeDir, startTestServer, tempDir } from '../support/server.js';

const fixtureDir = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

describe('handle verification in data dirs of earlier versions', () => {
  for (const name of ['data-v0', 'data-v1', 'data-v2']) {
    test(`${name}: stored handles read as unrecorded, joinable by SSO only without a password; new handles record their verifier`, async () => {
      const expected = JSON.parse(readFileSync(`${fixtureDir(name)}.json`, 'utf8')) as { env: Record<string, string>; root: { id: string; api_key: string } };
      const dir = tempDir(`identity-upgrade-${name}-`);
      cpSync(fixtureDir(name), dir, { recursive: true });
      const server = await startTestServer({ ...expected.env }, {}, dir);
      try {
        const persons = [...(server.service.registry.get(expected.root.id)?.state.persons.values() ?? [])] as Person[];
        assert.ok(persons.some((p) => p.password_hash !== undefined), 'the fixture holds a person with a password');
        assert.ok(persons.some((p) => p.password_hash === undefined && p.handles.length > 0), 'and one with handles and none');
        for (const p of persons) {
          assert.deepEqual(Object.values(p.verified_handles ?? {}), p.handles.map(() => ({ method: 'unrecorded' })), p.person_id);
          for (const h of p.handles) assert.equal(joinableBySso(p, h), p.password_hash === undefined, `${p.person_id} ${h.value}`);
        }
        const someone = persons[0] as Person;
        const root = server.client.as(expected.root.id, expected.root.api_key);
        const added = await root.post(`/persons/${someone.person_id}/handles`, [{ type: 'email_address', value: 'added-after@example.com' }]);
        assert.ok(added.status < 300, added.text);
        const after = server.service.registry.get(expected.root.id)?.state.persons.get(someone.person_id) as Person;
        assert.equal(after.verified_handles?.['email_address:added-after@example.com']?.method, 'organization');
      } finally {
        await server.stop();
        removeDir(dir);
      }
    });
  }
});
