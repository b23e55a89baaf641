// A bulk import hands each CSV cell to the handle checks: a huge cell made to backtrack the email pattern
// used to hold the one thread for seconds (80 KB: 3.5 s of /health unanswered for every organization).
// Lengths are checked before patterns and the patterns are linear, so the row is refused at once. The CSV of
// refused rows goes to spreadsheets: a cell that would run as a formula there is written with a leading quote.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fetch, FormData } from 'undici';
import { newOrg, type Org } from '../support/auth.js';
import { parse } from 'csv-parse/sync';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

async function upload(org: Org, csv: string): Promise<{ successful_imports: number; failed_imports: number; failed_csv: string }> {
  const form = new FormData();
  form.append('persons', new Blob([csv], { type: 'text/csv' }), 'persons.csv');
  const res = await fetch(`${server.base}/persons/bulk-import`, { method: 'POST', headers: { 'Service-OrgID': org.id, 'Service-API-Key': org.admin.apiKey }, body: form });
  assert.equal(res.status, 200);
  return ((await res.json()) as { result: { successful_imports: number; failed_imports: number; failed_csv: string } }).result;
}

test('the CSV of refused rows neutralises cells a spreadsheet would run as formulas, and reads them back as they were', async () => {
  const org = await newOrg(server, 'formulas');
  const cells = ['=HYPERLINK("https://evil.example","x")', '+1 555', '-2+3', '@SUM(A1)'];
  const csv = `service:emails,service:usernames\n${cells.map((c) => `"${c.replace(/"/g, '""')}",`).join('\n')}\n`;
  const first = await upload(org, csv);
  assert.equal(first.failed_imports, cells.length);
  const rows = parse(first.failed_csv, { columns: true }) as Array<Record<string, string>>;
  for (const row of rows) assert.match(row['service:emails'] as string, /^'[=+\-@\t]/, `a formula cell left as is: ${row['service:emails']}`);
  // The fixed file goes back in as the original cells: the same rows are refused for the same reasons.
  const again = await upload(org, first.failed_csv);
  assert.deepEqual(
    (parse(again.failed_csv, { columns: true }) as Array<Record<string, string>>).map((r) => r['error']),
    rows.map((r) => r['error']),
  );
});

test('a CSV cell of 900 KB that backtracks the email pattern is refused without blocking /health', async () => {
  const org = await newOrg(server, 'redos');
  const cell = `a@${'a.'.repeat(450_000)}@`;
  const form = new FormData();
  form.append('persons', new Blob([`service:emails\n${cell}\nok@example.com\n`], { type: 'text/csv' }), 'persons.csv');
  const started = performance.now();
  const imported = fetch(`${server.base}/persons/bulk-import`, { method: 'POST', headers: { 'Service-OrgID': org.id, 'Service-API-Key': org.admin.apiKey }, body: form, signal: AbortSignal.timeout(20_000) });
  const health = await fetch(`${server.base}/health`, { signal: AbortSignal.timeout(20_000) });
  assert.equal(health.status, 200);
  const res = await imported;
  const body = (await res.json()) as { result: { successful_imports: number; failed_imports: number; failed_csv: string } };
  assert.equal(res.status, 200);
  assert.equal(body.result.successful_imports, 1);
  assert.equal(body.result.failed_imports, 1);
  assert.match(body.result.failed_csv, /at most 320 characters/);
  // Linear work on 900 KB is milliseconds; the quadratic pattern needed minutes. A busy machine stays far below this.
  const ms = performance.now() - started;
  assert.ok(ms < 5_000, `the import and /health took ${ms.toFixed(0)} ms`);
});
