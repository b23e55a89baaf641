// Billing counts with a manual clock, snapshots taken through real moto connections: a snapshot exactly on a
// window bound is not counted, the previous month's window after a roll-over, the reader's latest row per
// region summed across two regions, the hourly timer on the injected clock, and the counts after a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock, type ManualClock } from '../../src/lib/manual-clock.js';
import { findMotoServer, MOTO_MISSING, startMoto, type Moto } from '../support/moto.js';
import { loggedEvents, removeDir, ROOT_ORG, startTestServer, tempDir, type TestServer } from '../support/server.js';

const trust = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }] });
const FEB = Date.UTC(2026, 1, 1);
const ENV = { SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_REGIONS: 'europe-belgium,us-iowa', SERVICE_CLOUD_SNAPSHOT_INTERVAL: '0', SERVICE_BILLING_INTERVAL: '3600' };

const skip = findMotoServer() ? false : MOTO_MISSING;

describe('billing counts on a manual clock', { skip }, () => {
  let moto: Moto;
  let server: TestServer;
  let clock: ManualClock;
  const dataDir = tempDir();
  const conns: string[] = [];

  const billingEvents = () => loggedEvents(server, 'BillableProtectedIdentitiesCounted_v1');
  const snapshot = async (id: string) => {
    const r = await server.client.post(`/cloud/connections/${id}/snapshots`);
    assert.equal(r.status, 201, r.text);
    return r.body.result;
  };
  const stats = async (month: string) => {
    const r = await server.client.get(`/stats/billing?month=${month}`);
    assert.equal(r.status, 200, r.text);
    return r.body.result;
  };
  const moveTo = (ms: number) => clock.advance(ms - clock.nowMs());

  before(async () => {
    moto = await startMoto();
    clock = createManualClock(Date.UTC(2026, 0, 15, 12));
    server = await startTestServer(ENV, { clock }, dataDir);
    for (const [account, region] of [['111111111111', 'europe-belgium'], ['222222222222', 'us-iowa']] as const) {
      const r = await server.client.post('/cloud/connections', { name: account, type: 'aws', region, config: { account_id: account, endpoint: moto.url }, credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 's' } });
      assert.equal(r.status, 201, r.text);
      conns.push(r.body.result.connection_id);
      assert.equal((await server.client.post(`/cloud/connections/${r.body.result.connection_id}/aws/roles`, { role_name: 'billed', assume_role_policy_doc: trust })).status, 201);
    }
  });
  after(async () => {
    await server?.stop();
    await moto?.stop();
    removeDir(dataDir);
  });

  test('a snapshot exactly on the month bound counts in neither month; one a millisecond later does', async () => {
    await snapshot(conns[0]!); // 2026-01-15T12:00Z, europe-belgium
    moveTo(FEB);
    const onBound = await snapshot(conns[0]!);
    assert.equal(onBound.snapshot_timestamp, '2026-02-01T00:00:00.000Z');
    assert.ok((await server.service.cloud.billing.count()) > 0);
    const feb = await stats('2026-02');
    assert.deepEqual(feb.regions.map((r: { region: string; non_human_identities_count: number }) => [r.region, r.non_human_identities_count]), [['europe-belgium', 0]]);
    const jan = await stats('2026-01');
    assert.equal(jan.window_start, '2026-01-01T00:00:00.000000000Z');
    assert.equal(jan.window_end, '2026-02-01T00:00:00.000000000Z');
    assert.equal(jan.total.non_human_identities_count, 1);

    clock.advance(1);
    await snapshot(conns[0]!);
    await server.service.cloud.billing.count();
    assert.equal((await stats('2026-02')).total.non_human_identities_count, 1);
  });

  test('the reader keeps the latest row per region and window and sums across regions', async () => {
    await snapshot(conns[1]!); // us-iowa
    await server.service.cloud.billing.count();
    await server.service.cloud.billing.count();
    const feb = await stats('2026-02');
    assert.deepEqual(feb.regions.map((r: { region: string }) => r.region), ['europe-belgium', 'us-iowa']);
    assert.equal(feb.total.non_human_identities_count, 2);
    assert.equal(feb.total.user_identities_count, 0);
    assert.equal(feb.identities.non_human_identities, 2);
    for (const r of feb.regions) assert.match(r.computed_at, /^2026-02-01T00:00:00\.001000Z$/);
    const last = billingEvents().slice(-4);
    assert.deepEqual(last.map((e) => [e['region'], e['window_start']]), [
      ['europe-belgium', '2026-01-01T00:00:00.000000000Z'],
      ['europe-belgium', '2026-02-01T00:00:00.000000000Z'],
      ['us-iowa', '2026-01-01T00:00:00.000000000Z'],
      ['us-iowa', '2026-02-01T00:00:00.000000000Z'],
    ]);
    assert.equal(last[0]!['org_id'], ROOT_ORG);
    assert.equal((last[0]!['event_metadata'] as { source: string }).source, 'Cloud');
  });

  test('the hourly count runs on the injected clock, and after the month rolls over the previous month is counted again', async () => {
    const before = billingEvents().length;
    moveTo(Date.UTC(2026, 2, 1, 0, 30));
    // The interval fired while the clock moved; its count runs on the actors, so wait for its events.
    for (let i = 0; i < 200 && billingEvents().length === before; i++) await new Promise((r) => setTimeout(r, 25));
    const march = billingEvents().slice(before);
    assert.ok(march.length >= 4, `expected a count after the clock moved, got ${march.length} events`);
    assert.ok(march.some((e) => e['window_start'] === '2026-02-01T00:00:00.000000000Z' && e['window_end'] === '2026-03-01T00:00:00.000000000Z'));
    await server.service.cloud.billing.count();
    const feb = await stats('2026-02');
    assert.equal(feb.total.non_human_identities_count, 2, 'February still counts its snapshots from March');
    assert.equal((await stats('2026-03')).total.non_human_identities_count, 0);
    assert.deepEqual((await stats('2026-01')).regions, [], "January's rows are dropped once it is two months back");
  });

  test('the counts survive a restart', async () => {
    const before = await stats('2026-02');
    await server.stop();
    clock = createManualClock(clock.nowMs());
    server = await startTestServer(ENV, { clock }, dataDir);
    assert.deepEqual(await stats('2026-02'), before);
    await server.service.cloud.billing.count();
    assert.equal((await stats('2026-02')).total.non_human_identities_count, 2);
  });

  test('every SERVICE_CLOUD_SNAPSHOT_INTERVAL seconds of the injected clock, each connection is inventoried', async () => {
    const start = Date.UTC(2026, 3, 10);
    const own = createManualClock(start);
    const dir = tempDir();
    const other = await startTestServer({ ...ENV, SERVICE_CLOUD_SNAPSHOT_INTERVAL: '600', SERVICE_BILLING_INTERVAL: '0' }, { clock: own }, dir);
    try {
      const r = await other.client.post('/cloud/connections', { name: 'periodic', type: 'aws', config: { account_id: '333333333333', endpoint: moto.url }, credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 's' } });
      assert.equal(r.status, 201, r.text);
      const state = () => other.service.registry.get(ROOT_ORG)!.state;
      own.advance(599_999);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(state().cloud_snapshots.length, 0, 'nothing before the interval');
      own.advance(1);
      for (let i = 0; i < 400 && state().cloud_snapshots.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.deepEqual(state().cloud_snapshots.map((s) => [s.connection_id, s.at_ms]), [[r.body.result.connection_id, start + 600_000]]);
    } finally {
      await other.stop();
      removeDir(dir);
    }
  });

  test('a month that is not one is refused', async () => {
    const r = await server.client.get('/stats/billing?month=2026-13');
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0].message, /month/);
  });
});
