// Offset and cursor paging as the contract says, over persons and group members; forged cursors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectResult } from '../support/expect.js';
import { email, startTestServer, type Client, type TestServer } from '../support/server.js';

let server: TestServer;
let c: Client;
/** person IDs in list order */
let ids: string[] = [];
const TOTAL = 23;

before(async () => {
  server = await startTestServer();
  c = server.client;
  await c.post('/groups', { name: 'crowd' });
  // concurrent creates share group commits; the list order is still the ID order
  const created = await Promise.all(Array.from({ length: TOTAL }, (_, i) => c.post('/persons', { ...email(`p${i}@example.com`), groups: ['crowd'] })));
  ids = created.map((r) => expectResult(r, 201).person_id as string).sort();
});
after(() => server.stop());

interface Page {
  ids: string[];
  cursor: { limit: number; next_cursor?: string; prev_cursor?: string; last_cursor: string; total_count?: number };
}

async function page(path: string): Promise<Page> {
  const r = await c.get(path);
  const result = expectResult<any[]>(r, 200);
  assert.deepEqual(Object.keys(r.body.meta), ['cursor_pagination']);
  return { ids: result.map((x) => (typeof x === 'string' ? x : x.person_id)), cursor: r.body.meta.cursor_pagination };
}

const q = (cursor: string) => `cursor=${encodeURIComponent(cursor)}`;

describe('offset paging', () => {
  test('limit and offset slice the list; meta.pagination has limit, offset and total_count', async () => {
    const r = await c.get('/persons?limit=5&offset=20');
    assert.deepEqual(expectResult<any[]>(r, 200).map((p) => p.person_id), ids.slice(20));
    assert.deepEqual(r.body.meta, { pagination: { limit: 5, offset: 20, total_count: TOTAL } });
    const all = await c.get('/persons');
    assert.deepEqual(all.body.meta, { pagination: { limit: 100, offset: 0, total_count: TOTAL } });
    assert.deepEqual(all.body.result.map((p: any) => p.person_id), ids);
    const past = await c.get('/persons?offset=100');
    assert.deepEqual(past.body, { result: [], meta: { pagination: { limit: 100, offset: 100, total_count: TOTAL } } });
  });

  test('limit is 1 to 1000: 1000 is fine, 1001, 0, -1, 1.5 and abc are a 400 naming limit', async () => {
    assert.equal(expectResult<any[]>(await c.get('/persons?limit=1000'), 200).length, TOTAL);
    assert.equal(expectResult<any[]>(await c.get('/persons?limit=1'), 200).length, 1);
    for (const bad of ['1001', '0', '-1', '1.5', 'abc', '']) {
      expectError(await c.get(`/persons?limit=${bad}`), 400, 'limit');
      expectError(await c.get(`/groups/crowd/persons?limit=${bad}`), 400, 'limit');
      expectError(await c.get(`/persons?paging=cursor&limit=${bad}`), 400, 'limit');
    }
    expectError(await c.get('/persons?offset=-1'), 400, 'offset');
    expectError(await c.get('/persons?paging=pages'), 400, 'paging');
    expectError(await c.get('/persons?paging=cursor&offset=2'), 400, 'offset');
  });
});

describe('cursor paging', () => {
  test('the first page: no prev_cursor, a next_cursor, a last_cursor and total_count', async () => {
    const first = await page('/persons?paging=cursor&limit=5');
    assert.deepEqual(first.ids, ids.slice(0, 5));
    assert.equal(first.cursor.limit, 5);
    assert.equal(first.cursor.total_count, TOTAL);
    assert.equal('prev_cursor' in first.cursor, false);
    assert.equal(typeof first.cursor.next_cursor, 'string');
    assert.equal(typeof first.cursor.last_cursor, 'string');
  });

  test('walking forward with the cursor alone visits every person exactly once, in pages of the first limit', async () => {
    let p = await page('/persons?paging=cursor&limit=5');
    const seen = [...p.ids];
    const sizes = [p.ids.length];
    while (p.cursor.next_cursor !== undefined) {
      p = await page(`/persons?${q(p.cursor.next_cursor)}`);
      assert.equal('total_count' in p.cursor, false, 'total_count on a page requested with a cursor');
      assert.equal(typeof p.cursor.prev_cursor, 'string');
      assert.equal(typeof p.cursor.last_cursor, 'string');
      assert.equal(p.cursor.limit, 5);
      seen.push(...p.ids);
      sizes.push(p.ids.length);
      assert.ok(sizes.length <= 10, 'the walk does not end');
    }
    assert.deepEqual(seen, ids);
    assert.deepEqual(sizes, [5, 5, 5, 5, 3]);
    // on the last page, last_cursor addresses that page
    const again = await page(`/persons?${q(p.cursor.last_cursor)}`);
    assert.deepEqual(again.ids, p.ids);
  });

  test('last_cursor jumps to the final page from any page; walking back visits every person exactly once', async () => {
    const first = await page('/persons?paging=cursor&limit=5');
    const second = await page(`/persons?${q(first.cursor.next_cursor as string)}`);
    for (const from of [first, second]) {
      const last = await page(`/persons?${q(from.cursor.last_cursor)}`);
      assert.deepEqual(last.ids, ids.slice(20));
      assert.equal('next_cursor' in last.cursor, false);
      assert.equal('total_count' in last.cursor, false);
    }
    let p = await page(`/persons?${q(first.cursor.last_cursor)}`);
    const seen = [p.ids];
    while (p.cursor.prev_cursor !== undefined) {
      p = await page(`/persons?${q(p.cursor.prev_cursor)}`);
      seen.unshift(p.ids);
      assert.ok(seen.length <= 10, 'the walk does not end');
    }
    assert.deepEqual(seen.flat(), ids);
    assert.deepEqual(p.ids, ids.slice(0, 5), 'the first page reached walking back is the first page');
    assert.equal('prev_cursor' in p.cursor, false);
    assert.equal(typeof p.cursor.next_cursor, 'string');
  });

  test('a list that fills its pages exactly: the last page is full and has no next_cursor', async () => {
    const start = await page('/persons?paging=cursor&limit=23');
    assert.deepEqual(start.ids, ids);
    assert.equal('next_cursor' in start.cursor, false);
    assert.equal('prev_cursor' in start.cursor, false);
    assert.deepEqual((await page(`/persons?${q(start.cursor.last_cursor)}`)).ids, ids);
    const p = await page(`/persons?${q((await page('/persons?paging=cursor&limit=1')).cursor.last_cursor)}`);
    assert.deepEqual(p.ids, ids.slice(-1));
  });

  test('an empty list: no next or prev cursor, a last_cursor, total_count 0', async () => {
    const empty = await page('/persons?paging=cursor&handle=username:nobody');
    assert.deepEqual(empty.ids, []);
    assert.equal(empty.cursor.total_count, 0);
    assert.equal('next_cursor' in empty.cursor || 'prev_cursor' in empty.cursor, false);
    assert.deepEqual((await page(`/persons?handle=username:nobody&${q(empty.cursor.last_cursor)}`)).ids, []);
  });

  test('a walk goes on past a person deleted under it, without repeating anyone', async () => {
    await c.post('/groups', { name: 'shrinking' });
    const members = ids.slice(0, 9);
    for (const id of members) await c.put(`/persons/${id}/groups`, { groups: ['crowd', 'shrinking'] });
    const first = await page('/groups/shrinking/persons?paging=cursor&limit=3');
    assert.deepEqual(first.ids, members.slice(0, 3));
    // the next cursor's anchor leaves the group
    await c.put(`/persons/${members[2]}/groups`, { groups: ['crowd'] });
    const second = await page(`/groups/shrinking/persons?${q(first.cursor.next_cursor as string)}`);
    assert.deepEqual(second.ids, members.slice(3, 6));
  });

  test('group members page the same way', async () => {
    let p = await page('/groups/crowd/persons?paging=cursor&limit=10');
    assert.equal(p.cursor.total_count, TOTAL);
    const seen = [...p.ids];
    while (p.cursor.next_cursor !== undefined) {
      p = await page(`/groups/crowd/persons?${q(p.cursor.next_cursor)}`);
      seen.push(...p.ids);
    }
    assert.deepEqual(seen, ids);
  });
});

describe('forged cursors', () => {
  let genuine: string;
  before(async () => {
    genuine = (await page('/persons?paging=cursor&limit=5')).cursor.next_cursor as string;
  });

  function flip(s: string, i: number): string {
    const ch = s[i] as string;
    return s.slice(0, i) + (ch === 'A' ? 'B' : 'A') + s.slice(i + 1);
  }

  test('made up, truncated, extended or altered anywhere: 400 naming the cursor', async () => {
    const [payload, tag] = genuine.split('.') as [string, string];
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const reanchored = Buffer.from(JSON.stringify({ ...body, a: ids[15] })).toString('base64url');
    const relimited = Buffer.from(JSON.stringify({ ...body, l: 1000 })).toString('base64url');
    // the last base64url character of the 16-byte tag carries 2 bits; changing only its 4 spare bits
    // leaves the decoded bytes the same, and must still be refused
    const last = tag[tag.length - 1] as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[(alphabet.indexOf(last) & ~0xf) | ((alphabet.indexOf(last) + 1) & 0xf)] as string;
    assert.deepEqual(Buffer.from(tag.slice(0, -1) + twin, 'base64url'), Buffer.from(tag, 'base64url'));
    const forged = [
      'abc',
      'abc.def',
      '',
      '.',
      genuine.slice(0, -1),
      genuine + 'A',
      genuine + '.x',
      `${payload}.`,
      `.${tag}`,
      `${reanchored}.${tag}`,
      `${relimited}.${tag}`,
      `${payload}.${flip(tag, 3)}`,
      `${flip(payload, 5)}.${tag}`,
      `${payload}.${tag.slice(0, -1)}${twin}`,
      `${payload}=.${tag}`,
      'x'.repeat(600),
    ];
    for (const cursor of forged) {
      expectError(await c.get(`/persons?${q(cursor)}`), 400, 'cursor');
    }
    assert.equal((await c.get(`/persons?${q(genuine)}`)).status, 200);
  });

  test('a cursor of one list is refused by another list of the same organization', async () => {
    expectError(await c.get(`/groups/crowd/persons?${q(genuine)}`), 400, 'cursor');
    const members = (await page('/groups/crowd/persons?paging=cursor&limit=5')).cursor.next_cursor as string;
    expectError(await c.get(`/persons?${q(members)}`), 400, 'cursor');
    expectError(await c.get(`/persons?handle=email_address:p1@example.com&${q(genuine)}`), 400, 'cursor');
  });

  test('a cursor for a long handle filter fits the cursor parameter', async () => {
    // the longest email handle: 64 + 1 + 243 + 12 = 320 characters
    const long = `${'l'.repeat(64)}@${'d'.repeat(243)}.example.com`;
    assert.equal(long.length, 320);
    await c.post('/persons', email(long));
    const first = await page(`/persons?paging=cursor&handle=email_address:${long}`);
    assert.equal(first.ids.length, 1);
    assert.equal((await c.get(`/persons?handle=email_address:${long}&${q(first.cursor.last_cursor)}`)).status, 200);
  });
});
