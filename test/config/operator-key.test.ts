// SERVICE_OPERATOR_KEY guards operator endpoints like the root API key guards the root organization, so it
// is held to the same minimum: the service refuses to start with a shorter one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnNode } from '../support/process.js';
import { removeDir, tempDir } from '../support/server.js';

test('a SERVICE_OPERATOR_KEY under 16 characters stops the start with exit status 2', async () => {
  const dir = tempDir('identity-operator-key-');
  try {
    const child = await spawnNode({ script: 'src/main.ts', env: { SERVICE_PORT: '0', SERVICE_DATA_DIR: dir, SERVICE_OPERATOR_KEY: 'short-key' }, ready: /cannot start: |listening on/, timeoutMs: 30_000 });
    if (/listening on/.test(child.output())) await child.kill('SIGKILL');
    assert.match(child.output(), /cannot start: SERVICE_OPERATOR_KEY must be 16-512 visible ASCII characters/);
    assert.deepEqual(await child.exited, { code: 2, signal: null });
  } finally {
    removeDir(dir);
  }
});
