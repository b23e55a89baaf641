// The cloud identities' pure core: connections, events of confirmed changes, snapshot summaries, and the
// seed's billing rule to the letter (distinct connections per class, strictly inside the window).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { billableCounts, monthWindow, type CloudConnection, type CloudSnapshot } from '../../src/domain/cloud.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { given, refused, when } from '../support/domain.js';

const connection = (id: string, region = 'europe-belgium'): CloudConnection => ({
  connection_id: id,
  name: id,
  type: 'aws',
  region,
  config: { account_id: '123456789012' },
  credentials: { sealed: 'aes-256-gcm', box: 'xx' },
  created: '2026-01-01T00:00:00.000Z',
});
const snap = (connection_id: string, at_ms: number, counts: Partial<CloudSnapshot> = {}, region = 'europe-belgium'): CloudSnapshot => ({
  connection_id,
  region,
  at_ms,
  user_identities: 1,
  non_human_identities: 1,
  credentials: 1,
  ...counts,
});
const FEB = Date.UTC(2026, 1, 1);
const MAR = Date.UTC(2026, 2, 1);

test('a month window runs from its first instant to the next month, in RFC 3339 with nanoseconds', () => {
  const w = monthWindow(Date.UTC(2026, 11, 1));
  assert.equal(w.window_start, '2026-12-01T00:00:00.000000000Z');
  assert.equal(w.window_end, '2027-01-01T00:00:00.000000000Z');
});

test('the counts are distinct connections per class, strictly after the start and strictly before the end', () => {
  const rows = [
    snap('a', FEB), // exactly on the start: not counted
    snap('b', MAR), // exactly on the end: not counted
    snap('c', FEB + 1),
    snap('c', FEB + 2), // the same connection again: counted once
    snap('d', MAR - 1, { user_identities: 0, credentials: 0 }), // no users or credentials found: no rows of those classes
    snap('e', FEB + 5, {}, 'us-iowa'), // another region
  ];
  assert.deepEqual(billableCounts(rows, 'europe-belgium', FEB, MAR), { user_identities_count: 1, non_human_identities_count: 2, credentials_count: 1 });
  assert.deepEqual(billableCounts(rows, 'us-iowa', FEB, MAR), { user_identities_count: 1, non_human_identities_count: 1, credentials_count: 1 });
});

test('given snapshots in two regions, when counted, then each region emits the previous and the current month, and the rows are kept', () => {
  const state = given({ t: 'CloudConnectionSet', connection: connection('a') }, { t: 'CloudConnectionSet', connection: connection('b', 'us-iowa') }, { t: 'CloudSnapshotRecorded', snapshot: snap('a', FEB + 10) }, { t: 'CloudSnapshotRecorded', snapshot: snap('b', FEB - 10, {}, 'us-iowa') });
  const { decision, after } = when(state, { kind: 'CountBillableIdentities', now_ms: FEB + 3600_000, computed_at: '2026-02-01T01:00:00.000000Z' });
  // The counts are int64 in the event, so decimal strings in its JSON form.
  assert.deepEqual(
    decision.events.map((e) => [e.name, e.body['region'], e.body['window_start'], e.body['non_human_identities_count']]),
    [
      ['BillableProtectedIdentitiesCounted_v1', 'europe-belgium', '2026-01-01T00:00:00.000000000Z', '0'],
      ['BillableProtectedIdentitiesCounted_v1', 'europe-belgium', '2026-02-01T00:00:00.000000000Z', '1'],
      ['BillableProtectedIdentitiesCounted_v1', 'us-iowa', '2026-01-01T00:00:00.000000000Z', '1'],
      ['BillableProtectedIdentitiesCounted_v1', 'us-iowa', '2026-02-01T00:00:00.000000000Z', '0'],
    ],
  );
  assert.equal(decision.events[0]?.body['org_id'], state.id);
  assert.equal(after.billing_rows.size, 4);
  // The rows survive a snapshot of the state.
  assert.deepEqual([...fromSnapshot(toSnapshot(after)).billing_rows.values()], [...after.billing_rows.values()]);
});

test('an organization without snapshot data emits nothing', () => {
  const { decision } = when(given({ t: 'CloudConnectionSet', connection: connection('a') }), { kind: 'CountBillableIdentities', now_ms: FEB, computed_at: 'x' });
  assert.deepEqual(decision.events, []);
});

test('summaries from before the previous month are dropped when a new one is recorded', () => {
  const state = given({ t: 'CloudConnectionSet', connection: connection('a') }, { t: 'CloudSnapshotRecorded', snapshot: snap('a', Date.UTC(2025, 11, 31)) }, { t: 'CloudSnapshotRecorded', snapshot: snap('a', Date.UTC(2026, 0, 2)) });
  const { after } = when(state, { kind: 'RecordCloudSnapshot', snapshot: snap('a', FEB + 1) });
  assert.deepEqual(after.cloud_snapshots.map((s) => s.at_ms), [Date.UTC(2026, 0, 2), FEB + 1]);
});

test('a change event or a snapshot of a connection that does not exist is refused', () => {
  const state = given();
  refused(state, { kind: 'RecordCloudChange', connection_id: 'nope', event: { name: 'AWSIAMRoleDeleted_v1', body: {} } }, 'ERR_NOT_FOUND', 'nope');
  refused(state, { kind: 'RecordCloudSnapshot', snapshot: snap('nope', FEB) }, 'ERR_NOT_FOUND', 'nope');
});

test('connection views never hold the credentials', () => {
  const { decision } = when(given(), { kind: 'CreateCloudConnection', connection: { ...connection('a'), created: undefined } as never });
  assert.ok(!('credentials' in (decision.reply as object)));
});
