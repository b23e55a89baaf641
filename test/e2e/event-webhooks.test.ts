// Event webhooks end to end: a real service, real receivers on loopback that verify every delivery token against
// the published key set, and the event log as the truth the deliveries must match: in order, at least once,
// retried with back-off, dead-lettered after the limit, resumed after SIGKILL, stopped by deleting the webhook.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newOrg, type Org } from '../support/auth.js';
import { eventId, startEventReceiver, type EventDelivery, type EventReceiver } from '../support/event-receiver.js';
import { expectError, expectNoContent, expectResult } from '../support/expect.js';
import { spawnService, type ServiceProcess } from '../support/process.js';
import { ROOT_ORG, email, startTestServer, type Client, type TestServer } from '../support/server.js';
import { waitFor } from '../support/regions.js';
import { Subscriber } from '../support/ws.js';

const FAST = { SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_WEBHOOK_RETRY_BASE_MS: '20', SERVICE_WEBHOOK_RETRY_MAX_MS: '80', SERVICE_WEBHOOK_RETRY_LIMIT: '4' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// A call timeout no answer of a busy machine's receiver comes near, so that only a hang times out.
const HANG_TIMEOUT = '3s';

async function addWebhook(admin: Client, url: string, triggers: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const id = expectResult(await admin.post('/organizations/webhooks', { name: 'events', target_url: url, ...extra }), 201).id as string;
  for (const name of triggers) assert.equal((await admin.post(`/organizations/webhooks/${id}/triggers`, { trigger_type: 'event', trigger_name: name })).status, 201);
  return id;
}

const person = async (admin: Client, address: string): Promise<string> => expectResult(await admin.post('/persons', email(address)), 201).person_id;
const handleOf = (d: EventDelivery | undefined): string => d?.trigger_content['handles']?.[0]?.value ?? '';
const metric = (text: string, line: RegExp) => Number(text.match(line)?.[1] ?? NaN);

describe('event webhooks on one server', () => {
  let server: TestServer;
  const receivers: EventReceiver[] = [];
  const receiver = async (org: Org) => {
    const r = await startEventReceiver({ orgId: org.id, jwksUrl: () => `${server.base}/organizations/webhooks/verification-jwks` });
    receivers.push(r);
    return r;
  };
  const logged = (org: Org) => server.service.events.log.read(org.id, 1, 10_000) as Array<{ offset: number; event: Record<string, any> }>;

  before(async () => {
    server = await startTestServer(FAST);
  });
  after(async () => {
    await server.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  test('matching events only, in offset order, from the trigger on, as the log has them, in a verified token', async () => {
    const org = await newOrg(server, 'matching');
    const r = await receiver(org);
    await person(org.admin, 'before@example.com');
    const webhook = await addWebhook(org.admin, r.url, ['PersonCreated_v1', 'PersonDeleted_v1'], { custom_headers: { 'X-Hook-Secret': ['s3cret'] } });
    const from = server.service.events.log.head(org.id);

    const p1 = await person(org.admin, 'one@example.com');
    await org.admin.post('/groups', { name: 'not-delivered' });
    expectResult(await org.admin.put(`/persons/${p1}/consent/gdpr`, { consent_levels: ['necessary'] }), 200);
    const p2 = await person(org.admin, 'two@example.com');
    expectNoContent(await org.admin.delete(`/persons/${p2}`));
    expectResult(await org.admin.post('/test-events', [{ event_name: 'PersonCreated_v1', count: 2 }, { event_name: 'AuthenticationSucceeded_v1' }]), 201);
    await person(org.admin, 'three@example.com');

    const wanted = logged(org).filter((e) => e.offset > from && ['PersonCreated_v1', 'PersonDeleted_v1'].includes(e.event['event_metadata'].event_name));
    assert.equal(wanted.length, 6);
    assert.ok(logged(org).some((e) => e.offset > from && e.event['event_metadata'].event_name === 'GdprConsentsChanged_v1'), 'a non-matching event was logged');
    await r.waitUntil(() => r.deliveries().length >= wanted.length, `${wanted.length} deliveries`);
    await sleep(100);

    assert.deepEqual(r.calls.map((c) => c.rejected ?? null), wanted.map(() => null), 'every token verified');
    assert.equal(r.calls.length, wanted.length, 'one call per matching event, nothing else');
    assert.deepEqual(r.deliveries().map((d) => d.trigger_content), wanted.map((e) => e.event));
    for (const [i, d] of r.deliveries().entries()) {
      const event = (wanted[i] as (typeof wanted)[0]).event;
      assert.equal(d.trigger_type, 'event');
      assert.equal(d.trigger_name, event['event_metadata'].event_name);
      assert.equal(d.sub, event['person_id'] || org.id);
      assert.equal(d.aud, org.id);
      assert.equal(d.iss, server.service.issuer);
      assert.equal(d.webhook_id, webhook);
      assert.equal(d.exp, d.iat + 300);
      const headers = (r.calls[i] as (typeof r.calls)[0]).headers;
      assert.equal(headers['content-type'], 'application/jwt');
      assert.equal(headers['x-hook-secret'], 's3cret');
    }
    assert.equal(r.deliveries()[0]?.sub, p1);
    assert.ok(!r.deliveries().some((d) => handleOf(d) === 'before@example.com'), 'an event from before the trigger was delivered');
  });

  test('a receiver that answers 500, then times out, then 200: delivered once it succeeds, in order, nothing lost', async () => {
    const org = await newOrg(server, 'flaky');
    const r = await receiver(org);
    r.answer = (_d, call) => (call < 2 ? 500 : call === 2 ? 'hang' : 200);
    await addWebhook(org.admin, r.url, ['PersonCreated_v1'], { timeout: HANG_TIMEOUT });
    const addresses = ['a@example.com', 'b@example.com', 'c@example.com'];
    for (const a of addresses) await person(org.admin, a);

    await r.waitUntil(() => r.deliveries().length >= 3, '3 deliveries');
    await sleep(100);
    assert.deepEqual(r.calls.map((c) => [handleOf(c.delivery), c.answer]), [
      ['a@example.com', 500],
      ['a@example.com', 500],
      ['a@example.com', 'hang'],
      ['a@example.com', 200],
      ['b@example.com', 200],
      ['c@example.com', 200],
    ]);
    const jtis = new Set(r.calls.map((c) => c.delivery?.jti));
    assert.equal(jtis.size, r.calls.length, 'every attempt is a freshly signed token');

    const text = (await server.client.get('/metrics')).text;
    assert.ok(metric(text, /^webhook_event_retries_total (\d+)$/m) >= 3);
    assert.ok(metric(text, /^webhook_call_failures_total\{trigger="PersonCreated_v1",reason="timeout"\} (\d+)$/m) >= 1);
    assert.ok(metric(text, /^webhook_call_failures_total\{trigger="PersonCreated_v1",reason="status"\} (\d+)$/m) >= 2);
    assert.ok(metric(text, /^webhook_event_deliveries_total\{outcome="delivered"\} (\d+)$/m) >= 3);
  });

  test('a receiver that always fails: a dead letter after the retry limit, later events still delivered; retry and discard', async () => {
    const org = await newOrg(server, 'dead');
    const r = await receiver(org);
    const refused = new Set(['dead@example.com']);
    r.answer = (d) => (refused.has(handleOf(d)) ? 500 : 200);
    const webhook = await addWebhook(org.admin, r.url, ['PersonCreated_v1']);
    const letters = `/organizations/webhooks/${webhook}/dead-letters`;
    for (const a of ['dead@example.com', 'next@example.com', 'last@example.com']) await person(org.admin, a);

    await r.waitUntil(() => r.deliveries().length >= 2, 'the later events');
    assert.deepEqual(r.calls.map((c) => handleOf(c.delivery)), ['dead@example.com', 'dead@example.com', 'dead@example.com', 'dead@example.com', 'next@example.com', 'last@example.com']);
    const dead = logged(org).find((e) => e.event['handles']?.[0]?.value === 'dead@example.com');
    assert.ok(dead);
    const [letter, ...none] = expectResult<any[]>(await org.admin.get(letters), 200);
    assert.deepEqual(none, []);
    assert.equal(letter.offset, dead.offset);
    assert.equal(letter.event_name, 'PersonCreated_v1');
    assert.deepEqual(letter.event, dead.event);
    assert.equal(letter.attempts, 4);
    assert.match(letter.last_error, /500/);
    assert.equal(letter.state, 'dead');
    assert.ok(!Number.isNaN(Date.parse(letter.failed_at)));

    // Another round that fails again: dead again, with the attempts of both rounds.
    const retried = expectResult(await org.admin.post(`${letters}/${dead.offset}/retry`), 202);
    assert.equal(retried.state, 'retrying');
    await r.waitUntil(() => r.calls.length >= 10, 'a second round of 4 attempts');
    await waitFor(async () => expectResult<any[]>(await org.admin.get(letters), 200)[0]?.state === 'dead', 30_000, 'the second round to end dead');
    const again = expectResult(await org.admin.get(letters), 200);
    assert.deepEqual(again.map((l: any) => [l.offset, l.state, l.attempts]), [[dead.offset, 'dead', 8]]);

    // The receiver is fixed: a retry delivers it, and the dead letter is gone.
    refused.clear();
    expectResult(await org.admin.post(`${letters}/${dead.offset}/retry`), 202);
    await r.waitUntil(() => r.deliveries().length >= 3, 'the retried dead letter');
    assert.deepEqual(r.deliveries()[2]?.trigger_content, dead.event);
    await waitFor(async () => expectResult<unknown[]>(await org.admin.get(letters), 200).length === 0, 30_000, 'the delivered dead letter to go');
    assert.deepEqual(expectResult(await org.admin.get(letters), 200), []);

    // Two more dead letters: paged, then discarded one by one.
    refused.add('x@example.com').add('y@example.com');
    await person(org.admin, 'x@example.com');
    await person(org.admin, 'y@example.com');
    await waitFor(async () => expectResult<unknown[]>(await org.admin.get(letters), 200).length >= 2, 30_000, 'two dead letters');
    const both = expectResult<any[]>(await org.admin.get(letters), 200);
    assert.equal(both.length, 2);
    assert.ok((both[0].offset as number) < both[1].offset);
    const second = await org.admin.get(`${letters}?limit=1&offset=1`);
    assert.deepEqual(expectResult(second, 200).map((l: any) => l.offset), [both[1].offset]);
    assert.deepEqual(second.body.meta.pagination, { limit: 1, offset: 1, total_count: 2 });
    const first = await org.admin.get(`${letters}?paging=cursor&limit=1`);
    assert.deepEqual(expectResult(first, 200).map((l: any) => l.offset), [both[0].offset]);
    const next = await org.admin.get(`${letters}?cursor=${encodeURIComponent(first.body.meta.cursor_pagination.next_cursor)}`);
    assert.deepEqual(expectResult(next, 200).map((l: any) => l.offset), [both[1].offset]);

    // A stored dead letter is listed from its commit on; the counters move once its flush completes.
    const counted = (text: string) => metric(text, /^webhook_event_deliveries_total\{outcome="dead_lettered"\} (\d+)$/m) >= 4 && metric(text, /^webhook_event_dead_letters (\d+)$/m) >= 2;
    let text = '';
    await waitFor(async () => counted((text = (await server.client.get('/metrics')).text)), 30_000, 'the dead letter counters').catch(() => {});
    assert.ok(counted(text), text.split('\n').filter((l) => l.startsWith('webhook_event')).join('\n'));

    for (const l of both) expectNoContent(await org.admin.delete(`${letters}/${l.offset}`));
    assert.deepEqual(expectResult(await org.admin.get(letters), 200), []);
    expectError(await org.admin.delete(`${letters}/${both[0].offset}`), 404, String(both[0].offset));
    expectError(await org.admin.post(`${letters}/${both[0].offset}/retry`), 404, String(both[0].offset));
    for (const bad of ['0', 'abc', '-1', '1.5', '99999999999999999']) expectError(await org.admin.post(`${letters}/${bad}/retry`), 400, 'offset');
    expectError(await org.admin.get('/organizations/webhooks/nope/dead-letters'), 404, 'nope');
  });

  test('deleting a webhook stops its deliveries at once', async () => {
    const org = await newOrg(server, 'deleted');
    const r = await receiver(org);
    // A failure, then a retry the receiver holds: the call in flight when the webhook is deleted is known.
    r.answer = (_d, call) => (call === 0 ? 500 : 'hang');
    const webhook = await addWebhook(org.admin, r.url, ['PersonCreated_v1'], { timeout: '20s' });
    await person(org.admin, 'retried@example.com');
    await r.waitUntil(() => r.calls.length >= 2, 'the retry');
    assert.equal((await org.admin.delete(`/organizations/webhooks/${webhook}`)).status, 204);
    // Well before the call's own 20 s timeout: the deletion aborted it.
    await r.waitUntil(() => r.calls[1]?.closedByCaller === true, 'the call in flight to be aborted', 10_000);
    await person(org.admin, 'after@example.com');
    // No retry of the aborted call (its back-off is at most 80 ms) and no delivery of the new event.
    await sleep(300);
    assert.deepEqual(r.calls.map((c) => [handleOf(c.delivery), c.answer]), [
      ['retried@example.com', 500],
      ['retried@example.com', 'hang'],
    ]);
    expectError(await org.admin.get(`/organizations/webhooks/${webhook}/dead-letters`), 404, webhook);
  });
});

describe('event webhooks and retention', () => {
  let server: TestServer;
  let r: EventReceiver;
  after(async () => {
    await server?.stop();
    await r?.close();
  });

  test('a count retention of 2 waits for the webhook, then prunes', async () => {
    server = await startTestServer({ ...FAST, SERVICE_EVENT_RETENTION: '2' });
    const org = await newOrg(server, 'retained');
    r = await startEventReceiver({ orgId: org.id, jwksUrl: () => `${server.base}/organizations/webhooks/verification-jwks` });
    let down = true;
    r.answer = () => (down ? 'hang' : 200);
    await addWebhook(org.admin, r.url, ['PersonCreated_v1'], { timeout: HANG_TIMEOUT });
    const first = server.service.events.log.head(org.id) + 1;
    for (let i = 0; i < 5; i++) await person(org.admin, `kept${i}@example.com`);
    await r.waitUntil(() => r.calls.length >= 1, 'the first call');
    await server.service.events.log.prune();
    assert.equal(server.service.events.log.oldest(org.id), first, 'the oldest undelivered event was pruned');
    down = false;
    await r.waitUntil(() => r.deliveries().length >= 5, '5 deliveries');
    assert.deepEqual(r.deliveries().map(handleOf), [0, 1, 2, 3, 4].map((i) => `kept${i}@example.com`));
    const head = server.service.events.log.head(org.id);
    await server.service.events.log.prune();
    assert.equal(server.service.events.log.oldest(org.id), head - 1, 'delivered events are pruned as usual');
  });
});

describe('stopping', () => {
  test('stop() aborts a call in flight instead of waiting for the receiver', async () => {
    const server = await startTestServer(FAST);
    const org = await newOrg(server, 'stopping');
    const r = await startEventReceiver({ orgId: org.id, jwksUrl: () => `${server.base}/organizations/webhooks/verification-jwks` });
    try {
      r.answer = () => 'hang';
      await addWebhook(org.admin, r.url, ['PersonCreated_v1'], { timeout: '20s' });
      await person(org.admin, 'slow@example.com');
      await r.waitUntil(() => r.calls.length >= 1, 'the call');
      const started = performance.now();
      await server.stop();
      // Half the call's timeout: stop() did not wait for the receiver, however busy the machine.
      assert.ok(performance.now() - started < 10_000, `stop() took ${Math.round(performance.now() - started)} ms`);
    } finally {
      await r.close();
    }
  });
});

describe('a crash', () => {
  let svc: ServiceProcess | undefined;
  let r: EventReceiver | undefined;
  after(async () => {
    await svc?.stop();
    await r?.close();
  });

  test('SIGKILL with deliveries pending: delivered after the restart, in order, none skipped', async () => {
    svc = await spawnService({ ...FAST, SERVICE_WEBHOOK_RETRY_LIMIT: '1000' });
    r = await startEventReceiver({ orgId: ROOT_ORG, jwksUrl: () => `${(svc as ServiceProcess).base}/organizations/webhooks/verification-jwks` });
    const receiver = r;
    await addWebhook(svc.client, receiver.url, ['PersonCreated_v1']);
    await person(svc.client, 'p1@example.com');
    await receiver.waitUntil(() => receiver.deliveries().length >= 1, 'the first delivery');

    receiver.answer = () => 503;
    for (const a of ['p2@example.com', 'p3@example.com', 'p4@example.com']) await person(svc.client, a);
    await receiver.waitUntil(() => receiver.calls.filter((c) => handleOf(c.delivery) === 'p2@example.com').length >= 2, 'p2 being retried');
    assert.equal((await svc.kill('SIGKILL')).signal, 'SIGKILL');
    const before = receiver.deliveries().length;

    receiver.answer = () => 200;
    svc = await svc.restart();
    await receiver.waitUntil(() => receiver.deliveries().slice(before).some((d) => handleOf(d) === 'p4@example.com'), 'p4 after the restart');
    const after = receiver.deliveries().slice(before);
    const handles = after.map(handleOf);
    const story = receiver.calls.map((c) => `${handleOf(c.delivery)}:${c.rejected ?? c.answer}`).join(' ');
    assert.ok(receiver.calls.every((c) => c.rejected === undefined), story);
    // At least once: p1 may come again if its position was not yet written; nothing may be skipped or reordered.
    assert.deepEqual(handles[0] === 'p1@example.com' ? handles.slice(1) : handles, ['p2@example.com', 'p3@example.com', 'p4@example.com'], story);

    const stream = await Subscriber.open(svc.base, { query: { from: '1', types: 'PersonCreated_v1' } });
    try {
      await stream.waitForCount(4);
      const byId = new Map(stream.frames.map((f) => [f.event.event_metadata.event_id as string, f.event]));
      for (const d of after) assert.deepEqual(d.trigger_content, byId.get(eventId(d)));
    } finally {
      await stream.close();
    }
  });
});
