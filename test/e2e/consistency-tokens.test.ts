// Consistency tokens end to end, over three in-process regions: a 408's token later reports the write committed
// and, once the cut link is healed, applied everywhere; forged, truncated and foreign tokens are refused; reads
// carrying a token wait for the serving region (here the origin, at once; and a replica's applied offset, which
// waits for the heal or answers 408).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Metrics } from '../../src/lib/metrics.js';
import { replicaReads } from '../../src/regions/read-wait.js';
import { allRegions, caughtUp, setLink, startRegionServer, waitFor } from '../support/regions.js';
import { email, removeDir, ROOT_ORG, type TestServer } from '../support/server.js';
import { refusal, Subscriber } from '../support/ws.js';

let server: TestServer;
before(async () => {
  server = await startRegionServer();
  await waitFor(() => caughtUp(server.base), 30_000, 'the links to stream');
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const TOKEN = 'service-consistency-token';

async function status(token: string, query = '', headers: Record<string, string> = {}) {
  return server.client.get(`/consistency/${encodeURIComponent(token)}${query}`, headers);
}

test('a 408 answers a token that reports the write committed, then applied by every region once the link heals', async () => {
  assert.equal((await setLink(server.base, 'asia-japan', { link: 'cut' })).status, 200);
  try {
    const slow = await server.client.put('/organizations/attributes/end_user_read_write', { step: 'after a 408' }, allRegions(1));
    assert.equal(slow.status, 408);
    const token = slow.headers.get(TOKEN);
    assert.ok(token, 'the 408 carries a consistency token');

    await waitFor(async () => (await status(token)).body.result.regions[1].applied === true, 30_000, 'us-iowa to apply the write');
    const now = await status(token);
    assert.equal(now.status, 200);
    assert.deepEqual(now.body.result, {
      offset: now.body.result.offset,
      committed: true,
      regions: [
        { name: 'europe-belgium', applied: true },
        { name: 'us-iowa', applied: true },
        { name: 'asia-japan', applied: false },
      ],
    });
    assert.equal(now.body.result.offset, server.service.registry.get(ROOT_ORG)?.state.offset);
    // Waiting for all regions while the link is cut: 408 again.
    assert.equal((await status(token, '?wait=all_regions', { 'Service-Required-Consistency-Timeout': '1' })).status, 408);
    assert.equal((await status(token, '?wait=local_region')).status, 200);
  } finally {
    assert.equal((await setLink(server.base, 'asia-japan', { link: 'up' })).status, 200);
  }
  const written = await server.client.patch('/organizations/attributes/end_user_read_write', { step: 'healed' });
  const token = written.headers.get(TOKEN) as string;
  const healed = await status(token, '?wait=all_regions', { 'Service-Required-Consistency-Timeout': '60' });
  assert.equal(healed.status, 200);
  assert.ok(healed.body.result.regions.every((r: { applied: boolean }) => r.applied), JSON.stringify(healed.body.result));
  assert.deepEqual(server.service.regions.replica('asia-japan')?.state(ROOT_ORG)?.attributes.get('end_user_read_write'), { step: 'healed' });
});

test('forged, truncated, malformed and other-organization tokens are a 400, wherever they are presented', async () => {
  const created = await server.client.post('/persons', email('tokens@example.com'));
  assert.equal(created.status, 201);
  const token = created.headers.get(TOKEN) as string;
  const person = created.body.result.person_id as string;
  const [body, mac] = token.split('.') as [string, string];
  const other = await server.client.post('/organizations/suborganizations', { sub_org_name: 'token-other' });
  const tenant = server.client.as(other.body.result.id, other.body.result.api_key);
  const foreign = (await tenant.post('/groups', { name: 'theirs' })).headers.get(TOKEN) as string;
  assert.ok(foreign);
  // The same mark under another key: the body of one token with the MAC of another.
  const bad: Array<[string, string]> = [
    [`${body}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`, 'not issued by this service'],
    [token.slice(0, -4), 'not issued by this service'],
    [body, 'malformed'],
    [`${Buffer.from(`999:${ROOT_ORG}`).toString('base64url')}.${mac}`, 'not issued by this service'],
    [foreign, 'another organization'],
  ];
  for (const [value, why] of bad) {
    const asked = await status(value);
    assert.equal(asked.status, 400, `${value}: ${asked.text}`);
    assert.match(asked.body.errors[0].message, new RegExp(why));
    const read = await server.client.get(`/persons/${person}`, { 'Service-Consistency-Token': value });
    assert.equal(read.status, 400, `read with ${value}: ${read.text}`);
    assert.match(read.body.errors[0].message, /Service-Consistency-Token/);
    const ws = await refusal(server.base, { query: { consistency_token: value } });
    assert.equal(ws.status, 400);
  }
  // The genuine token is good everywhere: on the origin a read with it answers at once.
  const read = await server.client.get(`/persons/${person}`, { 'Service-Consistency-Token': token });
  assert.equal(read.status, 200);
  assert.equal(read.body.result.person_id, person);
  const validated = await server.client.as('', '').post('/token/validate', { token: 'not-a-token' }, { 'Service-Consistency-Token': token });
  assert.equal(validated.status, 200);
  const sub = await Subscriber.open(server.base, { query: { consistency_token: token, from: '1' } });
  await sub.close();
  // Mint-token records the token: it answers one too, past the person's creation.
  const minted = await server.client.post(`/persons/${person}/mint-token`);
  assert.equal(minted.status, 201);
  const after = await status(minted.headers.get(TOKEN) as string);
  assert.equal(after.status, 200);
  assert.ok(after.body.result.offset > (await status(token)).body.result.offset);
});

test("a read with a token ahead of a replica's applied offset waits for it, or answers 408 past the timeout", async () => {
  const link = server.service.regions.link('us-iowa');
  assert.ok(link);
  const reads = replicaReads(link, new Metrics().histogram('read_wait_seconds', 'test'));
  assert.equal((await setLink(server.base, 'us-iowa', { link: 'cut' })).status, 200);
  let healed = false;
  try {
    const written = await server.client.put('/organizations/attributes/end_user_read_only', { seen: 'in us-iowa' });
    assert.equal(written.status, 204);
    const token = written.headers.get(TOKEN) as string;
    const { offset } = (await status(token)).body.result;
    await assert.rejects(reads.wait(ROOT_ORG, offset, 300), (e: { status?: number; message?: string }) => e.status === 408 && /us-iowa/.test(e.message ?? ''));

    const waiting = reads.wait(ROOT_ORG, offset, 60_000).then(() => server.service.regions.replica('us-iowa')?.state(ROOT_ORG)?.attributes.get('end_user_read_only'));
    assert.equal((await setLink(server.base, 'us-iowa', { link: 'up' })).status, 200);
    healed = true;
    assert.deepEqual(await waiting, { seen: 'in us-iowa' }, 'the replica answers the written value once it applied it');
  } finally {
    if (!healed) await setLink(server.base, 'us-iowa', { link: 'up' });
  }
});
