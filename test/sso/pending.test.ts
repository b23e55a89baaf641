// The SSO sign-ins in flight over a real LMDB store in a temporary directory and a manual clock: single use,
// expiry, the bounds per organization and per address, sealing at rest, and a restart in between.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createManualClock } from '../../src/lib/manual-clock.js';
import { createPendingFlows, PENDING_FLOW_FORMAT, type PendingFlow, type PendingLimits } from '../../src/sso/pending.js';
import { createSecretSealer } from '../../src/sso/secrets.js';
import { STATE_TTL_MS } from '../../src/sso/state-cookie.js';
import { createKeyedRecords } from '../../src/wal/keyed-records.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
const stores: Store[] = [];
after(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) removeDir(d);
});

const sealer = createSecretSealer(randomBytes(32));
const flow = (state: string, expires: number, org = 'o'): PendingFlow => ({ state, org, client_id: 'c', redirect_uri: 'https://app.example/cb', nonce: 'the-nonce', code_verifier: 'the-verifier', expires });

function setup(limits: PendingLimits = { perOrg: 100, perAddress: 100 }) {
  const dir = tempDir();
  dirs.push(dir);
  const store = openStore(dir, 'local', true);
  stores.push(store);
  const clock = createManualClock();
  const open = () => createPendingFlows({ clock, records: createKeyedRecords(store.ssoPending, PENDING_FLOW_FORMAT), sealer, limits });
  return { clock, store, open, flows: open() };
}

test('given a pending flow, when it is taken twice, then the second take is a replay naming its organization', async () => {
  const { clock, flows } = setup();
  assert.equal(await flows.add(flow('s1', clock.nowMs() + STATE_TTL_MS), '10.0.0.1'), undefined);
  const first = await flows.take('s1');
  assert.equal(first.kind, 'flow');
  assert.deepEqual(await flows.take('s1'), { kind: 'used', org: 'o', client_id: 'c' });
  assert.deepEqual(await flows.take('never'), { kind: 'unknown' });
});

test('given a pending flow, when its 10 minutes pass on the clock, then it is gone, its timer and its record with it', async () => {
  const { clock, flows, store } = setup();
  await flows.add(flow('s1', clock.nowMs() + STATE_TTL_MS), '10.0.0.1');
  clock.advance(STATE_TTL_MS - 1);
  assert.equal(flows.size(), 1);
  clock.advance(1);
  assert.equal(flows.size(), 0);
  assert.equal(clock.pending(), 0);
  assert.deepEqual(await flows.take('s1'), { kind: 'unknown' });
  await store.ssoPending.flushed;
  assert.equal(store.ssoPending.get('s1'), undefined);
});

test('the bounds are per organization and per organization and address: one full organization refuses nobody else', async () => {
  const { clock, flows } = setup({ perOrg: 3, perAddress: 2 });
  const exp = clock.nowMs() + 1000;
  assert.equal(await flows.add(flow('a', exp), '10.0.0.1'), undefined);
  assert.equal(await flows.add(flow('b', exp), '10.0.0.1'), undefined);
  assert.equal(await flows.add(flow('c', exp), '10.0.0.1'), 'address');
  assert.equal(await flows.add(flow('c', exp, 'other'), '10.0.0.1'), undefined, 'the same address, another organization');
  assert.equal(await flows.add(flow('d', exp), '10.0.0.2'), undefined);
  assert.equal(await flows.add(flow('e', exp), '10.0.0.3'), 'organization');
  assert.equal(await flows.add(flow('e', exp, 'other'), '10.0.0.3'), undefined);
  clock.advance(1000);
  assert.equal(await flows.add(flow('e', clock.nowMs() + 1000), '10.0.0.1'), undefined);
});

test('a flow outlives a restart, sealed at rest; a used one stays used; one that lapsed meanwhile is swept', async () => {
  const { clock, flows, store, open } = setup();
  await flows.add(flow('kept', clock.nowMs() + STATE_TTL_MS), '10.0.0.1');
  await flows.add(flow('used', clock.nowMs() + STATE_TTL_MS), '10.0.0.1');
  await flows.add(flow('lapsing', clock.nowMs() + 1000), '10.0.0.1');
  await flows.take('used');
  const raw = store.ssoPending.getBinary('kept') as Buffer;
  assert.equal(raw.includes('the-verifier'), false);
  assert.equal(raw.includes('the-nonce'), false);
  flows.clear();

  clock.advance(1000);
  const restarted = open();
  assert.equal(restarted.size(), 2);
  const kept = await restarted.take('kept');
  assert.equal(kept.kind, 'flow');
  assert.equal(kept.kind === 'flow' && kept.flow.code_verifier, 'the-verifier');
  assert.deepEqual(await restarted.take('used'), { kind: 'used', org: 'o', client_id: 'c' });
  assert.deepEqual(await restarted.take('lapsing'), { kind: 'unknown' });
  restarted.clear();
});
