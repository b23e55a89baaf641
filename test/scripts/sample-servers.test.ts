// The sample scripts' servers turn whatever a handler throws into an answer instead of ending their process:
// a request target that node:http accepts and the WHATWG URL parser does not (`//`) used to throw there.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { startSamplePage } from '../../scripts/sso-sample.js';

function rawGet(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET' }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode ?? 0));
    });
    req.path = path;
    req.on('error', reject).end();
  });
}

test('the SSO sample page answers a target it cannot parse with 500 and goes on serving', async () => {
  const page = await startSamplePage({ serviceUrl: 'http://127.0.0.1:9', orgId: 'org', clientId: 'client' });
  try {
    assert.equal(await rawGet(page.url, '//'), 500);
    assert.equal(await rawGet(page.url, '/'), 200);
  } finally {
    await page.close();
  }
});
