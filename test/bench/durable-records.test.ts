// The minimal mint server's durable variant (the floor of the mint benchmark): its records, their batching, its answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createDurableRecords } from '../../bench/lib/durable-records.js';
import { startServer } from '../../bench/lib/server-process.js';

test('given records asked for in one turn, when gathered as the actor gathers, then they share one commit and all resolve', async () => {
  const records = createDurableRecords('gather');
  try {
    await Promise.all(Array.from({ length: 100 }, () => records.record()));
    assert.equal(records.records, 100);
    assert.equal(records.appends, 1);
    // A record asked for after a quiet spell commits on its own.
    await records.record();
    assert.deepEqual([records.records, records.appends], [101, 2]);
  } finally {
    await records.close();
  }
});

test('given records grouped by turn, then each is its own append and all resolve', async () => {
  const records = createDurableRecords('turn');
  try {
    await Promise.all(Array.from({ length: 20 }, () => records.record()));
    assert.deepEqual([records.records, records.appends], [20, 20]);
  } finally {
    await records.close();
  }
});

test('given the durable minimal mint server, when tokens are minted, then each is answered with a token for its person and has its record', async () => {
  const server = await startServer('bench/minimal-mint-server.ts', { env: { MINIMAL_DURABLE: 'gather', SERVICE_SIGNING_THREADS: '0' } });
  try {
    const ids = Array.from({ length: 10 }, (_, i) => `01938f6e-7d3c-7000-8000-${String(i).padStart(12, '0')}`);
    const answers = await Promise.all(ids.map((id) => fetch(`${server.url}/persons/${id}/mint-token`, { method: 'POST' })));
    for (const [i, res] of answers.entries()) {
      assert.equal(res.status, 201);
      assert.equal(decodeJwt(((await res.json()) as { result: string }).result).sub, ids[i]);
    }
  } finally {
    await server.stop();
  }
  assert.match(server.output(), /10 durable records in \d+ appends/);
});

test('given an unknown MINIMAL_DURABLE, then the server does not start', async () => {
  await assert.rejects(startServer('bench/minimal-mint-server.ts', { env: { MINIMAL_DURABLE: 'sometimes' } }), /MINIMAL_DURABLE must be one of gather, turn/);
});
