// The delivery machine on its own, driven by a scripted driver: the states one delivery passes through, the
// retry limit, the order of deliveries, and a stop that aborts the attempt in flight. Its back-off runs on a
// manual clock, so the waits pass when the test moves time on, not by sleeping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createManualClock, type ManualClock } from '../../src/lib/manual-clock.js';
import { startDelivery, type AttemptResult, type DeliveryDriver, type DeliveryItem } from '../../src/webhooks/delivery-machine.js';

interface Script {
  items: DeliveryItem[];
  /** answers per attempt, in order; 'hang' never settles until aborted */
  answers: Array<AttemptResult | 'hang'>;
  limit: number;
}

function scripted(script: Script) {
  const log: string[] = [];
  const aborted: number[] = [];
  const driver: DeliveryDriver = {
    limit: script.limit,
    pauseMs: 1,
    hasWork: () => script.items.length > 0,
    next: () => script.items[0],
    attempt(item, attempt, signal) {
      log.push(`attempt ${item.offset}#${attempt}`);
      const answer = script.answers.shift() ?? { ok: true };
      if (answer !== 'hang') return Promise.resolve(answer);
      return new Promise((resolve) => signal.addEventListener('abort', () => (aborted.push(item.offset), resolve({ ok: false, error: 'aborted' }))));
    },
    delivered(item, attempts) {
      log.push(`delivered ${item.offset} after ${attempts}`);
      script.items.shift();
    },
    async bury(item, attempts, lastError) {
      log.push(`dead ${item.offset} after ${attempts}: ${lastError}`);
      script.items.shift();
    },
    retryDelayMs: (failures) => 1000 * failures,
    failed: (error) => assert.fail(String(error)),
  };
  return { driver, log, aborted };
}

const item = (offset: number): DeliveryItem => ({ offset, event_name: 'PersonCreated_v1', event: {}, source: 'log' });
const fail = (error: string): AttemptResult => ({ ok: false, error });

/** Lets the driver's promises settle, then moves the clock to its next timer, until the actor is in `state`. */
async function settle(actor: ReturnType<typeof startDelivery>, clock: ManualClock, state: string): Promise<void> {
  for (let turns = 0; actor.getSnapshot().value !== state; turns++) {
    assert.ok(turns < 1000, `still ${String(actor.getSnapshot().value)}`);
    await new Promise((r) => setImmediate(r));
    if (actor.getSnapshot().value !== state) clock.next();
  }
}

test('pending → in_flight → retry_wait → in_flight → delivered, then the next one, then idle', async () => {
  const { driver, log } = scripted({ items: [item(1), item(2)], answers: [fail('500'), fail('timeout'), { ok: true }, { ok: true }], limit: 5 });
  const states: string[] = [];
  const clock = createManualClock();
  const actor = startDelivery(driver, clock);
  actor.subscribe((s) => states.push(String(s.value)));
  await settle(actor, clock, 'idle');
  actor.stop();
  assert.deepEqual(log, ['attempt 1#1', 'attempt 1#2', 'attempt 1#3', 'delivered 1 after 3', 'attempt 2#1', 'delivered 2 after 1']);
  assert.ok(states.includes('retry_wait'));
  assert.equal(states.at(-1), 'idle');
  assert.equal(clock.monoMs(), 1000 + 2000, 'the two back-offs, and nothing else, took time');
});

test('after the limit the delivery is dead with the last error, and the next one goes on', async () => {
  const { driver, log } = scripted({ items: [item(7), item(8)], answers: [fail('a'), fail('b'), fail('c')], limit: 3 });
  const clock = createManualClock();
  const actor = startDelivery(driver, clock);
  await settle(actor, clock, 'idle');
  actor.stop();
  assert.deepEqual(log, ['attempt 7#1', 'attempt 7#2', 'attempt 7#3', 'dead 7 after 3: c', 'attempt 8#1', 'delivered 8 after 1']);
});

test('work arriving while idle starts a delivery; stop aborts the attempt in flight', async () => {
  const script: Script = { items: [], answers: ['hang'], limit: 3 };
  const { driver, aborted } = scripted(script);
  const clock = createManualClock();
  const actor = startDelivery(driver, clock);
  assert.equal(actor.getSnapshot().value, 'idle');
  script.items.push(item(4));
  actor.send({ type: 'work' });
  await settle(actor, clock, 'in_flight');
  actor.stop();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(aborted, [4]);
});
