// A bulk import hands each CSV cell to the handle checks: a huge cell made to backtrack the email pattern
// used to hold the one thread for seconds (80 KB: 3.5 s of /health unanswered for every organization).
// Lengths are checked before patterns and the patterns are linear, so the row is refused at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fetch, FormData } from 'undici';
import { newOrg } from '../support/auth.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

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
