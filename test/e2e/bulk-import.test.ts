// GET/POST /persons/bulk-import: the CSV template, and imports where each row is created whole or refused by
// line, accepted rows committed in batches of one entry each, PersonCreated for each.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetch, FormData } from 'undici';
import { parse } from 'csv-parse/sync';
import { expectError, expectResult, offsets, unchanged } from '../support/expect.js';
import { startTestServer, type Reply, type TestServer } from '../support/server.js';
import { newOrg, recordEvents, type Org } from '../support/auth.js';
import { assertOriginalShape } from '../support/original.js';

const HEADER = '"service:emails","service:phone_numbers","service:usernames","service:region","service:groups","service:attributes"';

let server: TestServer;
let events: ReturnType<typeof recordEvents>;

before(async () => {
  server = await startTestServer();
  events = recordEvents(server);
});
after(() => server.stop());

/** The original's request: multipart/form-data with the CSV as the file part `persons`. */
async function upload(o: Org, csv: string, { field = 'persons', asFile = true, key = o.admin.apiKey } = {}): Promise<Reply> {
  const form = new FormData();
  if (asFile) form.append(field, new Blob([csv], { type: 'text/csv' }), 'persons.csv');
  else form.append(field, csv);
  const res = await fetch(`${server.base}/persons/bulk-import`, { method: 'POST', headers: { 'Service-OrgID': o.id, ...(key !== '' && { 'Service-API-Key': key }) }, body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : JSON.parse(text) };
}

interface ImportResult {
  successful_imports: number;
  failed_imports: number;
  failed_csv: string;
}

function imported(r: Reply): ImportResult {
  assertOriginalShape('POST /persons/bulk-import', r.status, r.body);
  return expectResult<ImportResult>(r, 200);
}

const failedLines = (csv: string) => (parse(csv, { columns: true }) as Array<Record<string, string>>).map((r) => ({ line: Number(r['line']), error: r['error'] as string }));
const state = (o: Org) => server.service.registry.get(o.id)?.state;

describe('GET /persons/bulk-import', () => {
  test('200 the CSV template: the header row of the original with the prefix service:', async () => {
    const org = await newOrg(server, 'template');
    const r = await org.admin.get('/persons/bulk-import');
    assert.equal(r.status, 200);
    assertOriginalShape('GET /persons/bulk-import', 200, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(r.headers.get('content-disposition') ?? '', /^attachment; filename=".+\.csv"$/);
    assert.equal(r.text, `${HEADER}\n`);
    expectError(await org.user.get('/persons/bulk-import'), 401);
  });
});

describe('POST /persons/bulk-import', () => {
  test('10,000 rows with 100 bad ones: the 9,900 created in one entry per batch with PersonCreated each, the 100 reported by line, nothing else changed', async (t) => {
    const org = await newOrg(server, 'bulk');
    const existing = expectResult(await org.admin.post('/persons', { handles: [{ type: 'email_address', value: 'taken@example.com' }] }), 201);
    assert.equal((await org.admin.post('/groups', { name: 'staff' })).status, 201);
    const before = { existing: (await org.admin.get(`/persons/${existing.person_id}?fields=handles,groups,attributes`)).body, group: (await org.admin.get('/groups/staff')).body };
    const lines = [HEADER];
    const bad = new Map<number, RegExp>();
    const badRow = (i: number): [string, RegExp] => {
      switch (Math.floor(i / 100) % 8) {
        case 0: return [`not-an-email-${i},,,,,`, /not an email address/];
        case 1: return [',,,,,', /no handle/];
        case 2: return ['taken@example.com,,,,,', /already exists/];
        case 3: return [`p${i}@example.com,,,,no-such-group,`, /group "no-such-group" does not exist/];
        case 4: return [`p${i}@example.com,,,,,{not json`, /malformed JSON/];
        case 5: return [`p${i}@example.com,,`, /3 fields; the header has 6/];
        case 6: return [`p${i}@example.com,,,mars-base,,`, /region/];
        default: return [`p${i - 1}@example.com,,,,,`, new RegExp(`taken by line ${i + 1} of this import`)];
      }
    };
    for (let i = 0; i < 10_000; i++) {
      const line = i + 2;
      if (i % 100 === 37) {
        const [row, reason] = badRow(i);
        lines.push(row);
        bad.set(line, reason);
      } else {
        lines.push(`p${i}@example.com,+1415555${String(i).padStart(4, '0')},user-${i},europe-belgium,${i % 2 === 0 ? 'staff' : ''},"{""end_user_read_write"":{""n"":${i}}}"`);
      }
    }
    const walBefore = offsets(server)[org.id] as number;
    const created = events(org.id, 'PersonCreated_v1').length;
    const started = performance.now();
    const result = imported(await upload(org, `${lines.join('\n')}\n`));
    t.diagnostic(`10,000 rows imported in ${Math.round(performance.now() - started)} ms`);

    assert.equal(result.successful_imports, 9900);
    assert.equal(result.failed_imports, 100);
    const failed = failedLines(result.failed_csv);
    assert.deepEqual(failed.map((f) => f.line), [...bad.keys()], 'each refused row named by its line, in order');
    for (const f of failed) assert.match(f.error, bad.get(f.line) as RegExp, `line ${f.line}`);

    assert.equal(state(org)?.persons.size, 9901);
    assert.equal(events(org.id, 'PersonCreated_v1').length - created, 9900, 'PersonCreated for each created person');
    // 9,999 rows reach the organization (the one with 3 fields is refused before): ten batches, one entry each
    assert.equal((offsets(server)[org.id] as number) - walBefore, 10, 'one entry per batch of 1000 rows');

    const found = await org.admin.get(`/persons?handle=${encodeURIComponent('email_address:p4242@example.com')}&fields=handles,groups,attributes`);
    const [p] = expectResult<any[]>(found, 200);
    assert.deepEqual(p.handles, [
      { type: 'email_address', value: 'p4242@example.com' },
      { type: 'phone_number', value: '+14155554242' },
      { type: 'username', value: 'user-4242' },
    ]);
    assert.deepEqual(p.groups, ['staff']);
    assert.deepEqual(p.attributes, { end_user_read_write: { n: 4242 } });
    for (const line of bad.keys()) {
      // a refused row left nothing: neither its handles nor a person
      if (Math.floor((line - 2) / 100) % 8 === 3) assert.equal(state(org)?.handles.has(`email_address:p${line - 2}@example.com`), false);
    }
    assert.deepEqual((await org.admin.get(`/persons/${existing.person_id}?fields=handles,groups,attributes`)).body, before.existing, 'the person already there is unchanged');
    assert.equal(state(org)?.groups.get('staff')?.members.size, 5000, 'every even row is good and in staff');
    assert.deepEqual((await org.admin.get('/groups/staff')).body, { result: { ...before.group.result, members_count: 5000 } });
    assert.deepEqual(expectResult(await org.admin.get('/groups'), 200), ['staff'], 'no group created');
  });

  test('a text field rather than a file part; CR LF line ends, quoted multi-line values; the failed CSV names the start line', async () => {
    const org = await newOrg(server, 'crlf');
    const csv = ['"service:usernames","service:attributes","comment"', 'ada,,ignored column', '"bo","{""end_user_read_write"":', '{""a"":1}}",x', 'not valid!,,'].join('\r\n');
    const result = imported(await upload(org, csv, { asFile: false }));
    assert.equal(result.successful_imports, 2);
    assert.deepEqual(failedLines(result.failed_csv).map((f) => f.line), [5]);
    assert.match(result.failed_csv, /^service:usernames,service:attributes,comment,line,error\n/);
  });

  test('every row refused: 200 with the report, nothing changes', async () => {
    const org = await newOrg(server, 'refused');
    await unchanged(org.admin, async () => {
      const result = imported(await upload(org, `${HEADER}\nnope,,,,,\n,,,,,x\n`));
      assert.deepEqual({ ...result, failed_csv: failedLines(result.failed_csv).map((f) => f.line) }, { successful_imports: 0, failed_imports: 2, failed_csv: [2, 3] });
    }, server);
  });

  test('refusals of the whole file: 400 naming the problem, 415 for another media type, 401 without the key; nothing changes', async () => {
    const org = await newOrg(server, 'refusals');
    await unchanged(org.admin, async () => {
      expectError(await upload(org, ''), 400, 'empty');
      expectError(await upload(org, '"name","role"\nada,admin\n'), 400, 'no handle column');
      expectError(await upload(org, '"service:emails","service:email"\na@example.com,b@example.com\n'), 400, 'unknown column "service:email"');
      expectError(await upload(org, '"service:emails","service:emails"\na@example.com,b@example.com\n'), 400, 'given twice');
      expectError(await upload(org, `${HEADER}\n"a@example.com,,,,,\n`), 400, 'not a valid CSV', 'line');
      expectError(await upload(org, `${HEADER}\na@example.com,,,,,\n`, { field: 'people' }), 400, 'persons');
      expectError(await upload(org, `${HEADER}\na@example.com,,,,,\n`, { key: '' }), 401);
      expectError(await org.admin.post('/persons/bulk-import', { persons: `${HEADER}\na@example.com,,,,,\n` }), 415, 'multipart/form-data');
      expectError(await org.admin.post('/persons/bulk-import', 'persons=x', { 'Content-Type': 'multipart/form-data' }), 400, 'boundary');
      expectError(await org.admin.post('/persons/bulk-import', 'garbage', { 'Content-Type': 'multipart/form-data; boundary=XYZ' }), 400, 'multipart');
    }, server);
  });
});
