// npm run events: the project's own subscriber prints the stream's frames, and shows a refusal as the service wrote it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { spawnNode } from '../support/process.js';
import { email, removeDir, ROOT_KEY, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

test('--from 1 replays the events already committed, one JSON line each, then waits for live ones', async () => {
  const created = await server.client.post('/persons', email('ada@example.com'));
  assert.equal(created.status, 201);
  const subscriber = await spawnNode({
    script: 'scripts/events.ts',
    args: ['--url', server.base, '--org', ROOT_ORG, '--key', ROOT_KEY, '--from', '1'],
    ready: /^\{"offset":1,.*\}$/m,
  });
  try {
    const frame = JSON.parse(subscriber.ready[0]);
    assert.equal(frame.event.event_metadata.event_type, 'PersonCreated');
    assert.equal(frame.event.person_id, created.body.result.person_id);
  } finally {
    await subscriber.kill();
  }
});

test('a refused subscription exits with status 1 and prints the envelope', async () => {
  const subscriber = await spawnNode({
    script: 'scripts/events.ts',
    args: ['--url', server.base, '--org', ROOT_ORG, '--key', 'not-the-key-0123456789', '--from', '1'],
    ready: /^refused: 401 .*the API key is not valid/m,
  });
  assert.equal((await subscriber.exited).code, 1);
});
