// The pure-Node fallback of uWebSockets.js (forced with the package's UWS_USE_FALLBACK): the service refuses
// to start on it unless SERVICE_ALLOW_FALLBACK_HTTP=1, and then says so in /health.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnNode, spawnService } from '../support/process.js';
import { removeDir, tempDir } from '../support/server.js';

test('on the fallback the service refuses to start, exiting with status 2 and the reason', async () => {
  const dataDir = tempDir();
  try {
    const child = await spawnNode({
      script: 'src/main.ts',
      env: { UWS_USE_FALLBACK: '1', SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir },
      ready: /cannot start: .*native uWebSockets\.js build did not load.*SERVICE_ALLOW_FALLBACK_HTTP=1/,
    });
    assert.deepEqual(await child.exited, { code: 2, signal: null });
    assert.doesNotMatch(child.output(), /listening on/);
  } finally {
    removeDir(dataDir);
  }
});

test('with SERVICE_ALLOW_FALLBACK_HTTP=1 it serves, and /health reports native_http false', async () => {
  const service = await spawnService({ UWS_USE_FALLBACK: '1', SERVICE_ALLOW_FALLBACK_HTTP: '1' });
  try {
    const health = await service.client.get('/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.result.native_http, false);
    const created = await service.client.post('/persons', { handles: [{ type: 'username', value: 'fallback' }] });
    assert.equal(created.status, 201, created.text);
    assert.equal((await service.client.get(`/persons/${created.body.result.person_id}`)).status, 200);
  } finally {
    await service.stop();
    removeDir(service.dataDir);
  }
});
