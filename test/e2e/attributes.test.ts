// Attribute buckets and sets over HTTP, for the organization and for a person: replace, merge, read,
// delete, and the seed's limits at their boundaries.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectNoContent, expectResult, unchanged } from '../support/expect.js';
import { email, startTestServer, type Client, type TestServer } from '../support/server.js';

let server: TestServer;
let c: Client;
let personId: string;

before(async () => {
  server = await startTestServer();
  c = server.client;
  personId = expectResult(await c.post('/persons', email('attrs@example.com')), 201).person_id;
});
after(() => server.stop());

const BUCKETS = ['end_user_read_write', 'end_user_read_only', 'end_user_no_access', 'person_pool-end_user_read_write', 'person_pool-end_user_read_only', 'person_pool-end_user_no_access'];

test('GET /organizations/attribute-buckets lists the six default buckets', async () => {
  const buckets = expectResult<any[]>(await c.get('/organizations/attribute-buckets'), 200);
  assert.deepEqual(
    buckets.map((b) => b.name).sort(),
    [...BUCKETS].sort(),
  );
  for (const b of buckets) {
    assert.deepEqual(Object.keys(b).sort(), ['end_user_permissions', 'name', 'owner_organization_id', 'sharing_scope']);
    assert.equal(b.owner_organization_id, 'root-org');
    assert.equal(b.sharing_scope, b.name.startsWith('person_pool-') ? 'person_pool' : 'organization');
    assert.equal(b.end_user_permissions, b.name.replace(/^(person_pool-)?end_user_/, ''));
  }
});

for (const owner of ['organization', 'person'] as const) {
  const base = (bucket: string) => (owner === 'organization' ? `/organizations/attributes/${bucket}` : `/persons/${personId}/attributes/${bucket}`);
  const read = async (bucket: string, query = '') => expectResult(await c.get(base(bucket) + query), 200);

  describe(`attributes of the ${owner}`, () => {
    test('PUT replaces the set: 204 without a body, keys not in the body are deleted', async () => {
      expectNoContent(await c.put(base('end_user_read_write'), { a: 1, b: 'two', c: { deep: [1, null, true] } }));
      assert.deepEqual(await read('end_user_read_write'), { a: 1, b: 'two', c: { deep: [1, null, true] } });
      expectNoContent(await c.put(base('end_user_read_write'), { b: 'new', d: false }));
      assert.deepEqual(await read('end_user_read_write'), { b: 'new', d: false });
      expectNoContent(await c.put(base('end_user_read_write'), {}));
      assert.deepEqual(await read('end_user_read_write'), {});
    });

    test('PATCH merges: keys not in the body are kept, those in it overwritten', async () => {
      expectNoContent(await c.put(base('end_user_read_only'), { a: 1, b: 2 }));
      expectNoContent(await c.patch(base('end_user_read_only'), { b: { now: 'an object' }, c: [3] }));
      assert.deepEqual(await read('end_user_read_only'), { a: 1, b: { now: 'an object' }, c: [3] });
      expectNoContent(await c.patch(base('end_user_read_only'), {}));
      assert.deepEqual(await read('end_user_read_only'), { a: 1, b: { now: 'an object' }, c: [3] });
    });

    test('GET ?attributes=a,b answers only those that exist; an absent bucket reads as {}', async () => {
      expectNoContent(await c.put(base('end_user_no_access'), { a: 1, b: 2, c: 3, 'é€': 'x' }));
      assert.deepEqual(await read('end_user_no_access', '?attributes=a,c,zz'), { a: 1, c: 3 });
      assert.deepEqual(await read('end_user_no_access', `?attributes=${encodeURIComponent('é€')}`), { 'é€': 'x' });
      assert.deepEqual(await read('end_user_no_access', '?attributes=toString,constructor'), {});
      assert.deepEqual(await read('end_user_no_access', '?attributes='), {});
      assert.deepEqual(await read('person_pool-end_user_no_access'), {});
      expectError(await c.get(base('end_user_no_access') + '?names=a'), 400, 'names');
    });

    test('DELETE ?attributes=a,b deletes those; DELETE without it deletes all; both 204 without a body', async () => {
      expectNoContent(await c.put(base('person_pool-end_user_read_write'), { a: 1, b: 2, c: 3 }));
      expectNoContent(await c.delete(base('person_pool-end_user_read_write') + '?attributes=a,c,zz'));
      assert.deepEqual(await read('person_pool-end_user_read_write'), { b: 2 });
      expectNoContent(await c.delete(base('person_pool-end_user_read_write')));
      assert.deepEqual(await read('person_pool-end_user_read_write'), {});
      // deleting what is not there is still a 204
      expectNoContent(await c.delete(base('person_pool-end_user_read_write')));
      expectNoContent(await c.delete(base('person_pool-end_user_read_write') + '?attributes=zz'));
    });

    test('DELETE ?attributes= with no name is a 400, not a delete of everything', async () => {
      expectNoContent(await c.put(base('person_pool-end_user_read_only'), { keep: 1 }));
      await unchanged(c, async () => {
        expectError(await c.delete(base('person_pool-end_user_read_only') + '?attributes='), 400, 'attributes');
        expectError(await c.delete(base('person_pool-end_user_read_only') + '?attributes=,'), 400, 'attributes');
      }, server);
      assert.deepEqual(await read('person_pool-end_user_read_only'), { keep: 1 });
    });

    test('buckets are independent', async () => {
      expectNoContent(await c.put(base('end_user_read_write'), { only: 'rw' }));
      expectNoContent(await c.put(base('end_user_no_access'), { only: 'na' }));
      assert.deepEqual(await read('end_user_read_write'), { only: 'rw' });
      assert.deepEqual(await read('end_user_no_access'), { only: 'na' });
    });

    test('an unknown bucket is a 404 naming it, on all four methods, and nothing changes', async () => {
      await unchanged(c, async () => {
        for (const bucket of ['nope', 'END_USER_READ_WRITE', 'end_user_read_write2']) {
          expectError(await c.put(base(bucket), { a: 1 }), 404, bucket);
          expectError(await c.patch(base(bucket), { a: 1 }), 404, bucket);
          expectError(await c.get(base(bucket)), 404, bucket);
          expectError(await c.delete(base(bucket)), 404, bucket);
        }
      }, server);
    });

    test('names: 70 bytes of UTF-8 are allowed, 71 or more refused with a 400 naming the limit', async () => {
      const allowed = ['n'.repeat(70), 'é'.repeat(35), '€'.repeat(23) + 'a', '😀'.repeat(17) + 'ab'];
      for (const name of allowed) assert.equal(Buffer.byteLength(name), 70);
      expectNoContent(await c.put(base('end_user_read_write'), Object.fromEntries(allowed.map((name, i) => [name, i]))));
      assert.deepEqual(await read('end_user_read_write'), Object.fromEntries(allowed.map((name, i) => [name, i])));
      const refused = ['n'.repeat(71), 'é'.repeat(35) + 'a', '€'.repeat(24), '😀'.repeat(18)];
      await unchanged(c, async () => {
        for (const name of refused) {
          expectError(await c.put(base('end_user_read_write'), { ok: 1, [name]: 1 }), 400, '70', name);
          expectError(await c.patch(base('end_user_read_write'), { [name]: 1 }), 400, '70');
        }
        expectError(await c.put(base('end_user_read_write'), { '': 1 }), 400, 'name');
      }, server);
    });

    test('values: JSON of exactly 65,536 bytes is allowed, 65,537 refused with a 400', async () => {
      const atLimit = 'v'.repeat(65_534);
      assert.equal(Buffer.byteLength(JSON.stringify(atLimit)), 65_536);
      // an object value whose JSON is exactly 65,536 bytes: {"k":"…"} is 8 bytes plus the string
      const objectAtLimit = { k: 'o'.repeat(65_528) };
      assert.equal(Buffer.byteLength(JSON.stringify(objectAtLimit)), 65_536);
      expectNoContent(await c.put(base('end_user_read_only'), { s: atLimit, o: objectAtLimit }));
      assert.deepEqual(await read('end_user_read_only'), { s: atLimit, o: objectAtLimit });
      await unchanged(c, async () => {
        expectError(await c.put(base('end_user_read_only'), { s: atLimit + 'v' }), 400, 's', '65537');
        expectError(await c.patch(base('end_user_read_only'), { o: { k: 'o'.repeat(65_529) } }), 400, 'o', '65537');
        // multibyte: 21,845 × '€' is 65,535 bytes, with quotes 65,537
        expectError(await c.patch(base('end_user_read_only'), { euro: '€'.repeat(21_845) }), 400, 'euro');
      }, server);
    });

    test('bad bodies are a 400 naming the problem, and nothing changes', async () => {
      await unchanged(c, async () => {
        for (const body of ['[]', '[1]', '"text"', '5', 'null', 'true']) {
          expectError(await c.put(base('end_user_read_write'), body), 400, 'body');
          expectError(await c.patch(base('end_user_read_write'), body), 400, 'body');
        }
        expectError(await c.put(base('end_user_read_write'), '{"a": 1,}'), 400, 'JSON');
        expectError(await c.put(base('end_user_read_write'), ''), 400, 'body');
        expectError(await c.put(base('end_user_read_write'), '{"__proto__": {"x": 1}}'), 400, '__proto__');
        expectError(await c.patch(base('end_user_read_write'), '{"a": {"__proto__": 1}}'), 400, '__proto__');
        expectError(await c.put(base('end_user_read_write'), { a: 1 }, { 'Content-Type': 'text/plain' }), 415, 'Content-Type');
      }, server);
    });
  });
}

test("a person's attributes: GET /persons/{id}/attributes answers every bucket, apart from the organization's", async () => {
  const p = expectResult(await c.post('/persons', { ...email('all-buckets@example.com'), attributes: { end_user_read_write: { from: 'create' } } }), 201).person_id;
  expectNoContent(await c.put(`/persons/${p}/attributes/end_user_no_access`, { secret: 1 }));
  expectNoContent(await c.put('/organizations/attributes/end_user_no_access', { org: 'level' }));
  assert.deepEqual(expectResult(await c.get(`/persons/${p}/attributes`), 200), { end_user_read_write: { from: 'create' }, end_user_no_access: { secret: 1 } });
  assert.deepEqual(expectResult(await c.get('/organizations/attributes/end_user_no_access'), 200), { org: 'level' });
  assert.deepEqual(expectResult(await c.get(`/persons/${personId}/attributes/end_user_no_access`), 200).secret, undefined);
});
