// Generated from the shipped events.proto: every event message is emitted once through the service (the
// organization's actor, as every emitter's events are: stamped, chained, logged, streamed) with each of its
// 64-bit integers, nested ones included, given as a JSON number, the way a careless emitter or a client's report
// would give it. What WS /events hands out, live and on catch-up from the log, must hold each of them as proto3's
// JSON form has it: a decimal string. A Gate's report over HTTP is checked the same way.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import protobuf from 'protobufjs';
import { EVENT_MESSAGE_NAMES } from '../../src/events/catalog.js';
import { validateEvent } from '../../src/events/validate.js';
import { sampleGateHeartbeat } from '../support/routes.js';
import { ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber, type JsonFrame } from '../support/ws.js';

const PROTO = fileURLToPath(new URL('../../src/events/events.proto', import.meta.url));
// keepCase: the seed's snake_case names, as the JSON form has them (protobufjs would make them camelCase).
const root = new protobuf.Root().loadSync(PROTO, { keepCase: true });
const SIXTY_FOUR = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED = new Set(['uint64', 'fixed64']);

/** Every message of the package that is an event: its name ends in _v<version> (StreamFrame and the parts do not). */
const eventTypes = root.lookup('events') as protobuf.Namespace;
const EVENTS = eventTypes.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type && /_v\d+$/.test(n.name)).map((t) => t.name);

/** A distinct value per field, past 2^32 so that no 32-bit shortcut passes, within 2^53 so a number can hold it. */
let next = 2 ** 40;

/**
 * A body holding only the 64-bit integers of the type, as JSON numbers, and the messages that lead to one; with
 * the decimal string each must come back as, by path. undefined when the type has none.
 */
function numbersOf(type: protobuf.Type, path: string, expected: Map<string, string>): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    if (field.name === 'event_metadata') continue; // stamped by the service
    field.resolve();
    const at = `${path}.${field.name}`;
    let value: unknown;
    if (SIXTY_FOUR.has(field.type)) {
      const n = UNSIGNED.has(field.type) ? ++next : -++next;
      value = n;
      expected.set(field.repeated ? `${at}[0]` : at, String(n));
    } else if (field.resolvedType instanceof protobuf.Type && field.resolvedType.fullName.startsWith('.events.')) {
      value = numbersOf(field.resolvedType, field.repeated ? `${at}[0]` : at, expected);
    }
    if (value !== undefined) body[field.name] = field.repeated ? [value] : value;
  }
  return Object.keys(body).length > 0 ? body : undefined;
}

/** Every 64-bit integer the JSON holds, by path, walking it along the message type. */
function sixtyFoursIn(type: protobuf.Type, json: Record<string, unknown>, path: string, out: Map<string, unknown>): Map<string, unknown> {
  for (const field of type.fieldsArray) {
    field.resolve();
    const value = json[field.name];
    if (value === undefined || value === null) continue;
    const items = field.repeated ? (value as unknown[]).map((v, i) => [v, `${path}.${field.name}[${i}]`] as const) : [[value, `${path}.${field.name}`] as const];
    for (const [v, at] of items) {
      if (SIXTY_FOUR.has(field.type)) out.set(at, v);
      else if (field.resolvedType instanceof protobuf.Type && typeof v === 'object' && v !== null) sixtyFoursIn(field.resolvedType, v as Record<string, unknown>, at, out);
    }
  }
  return out;
}

/** Problems with the 64-bit integers of one streamed event: any that is not a decimal string, or not the value given. */
function problems(frame: JsonFrame, expected: ReadonlyMap<string, string>): string[] {
  const name = frame.event.event_metadata.event_name as string;
  const found = sixtyFoursIn(root.lookupType(`events.${name}`), frame.event, name, new Map());
  const out: string[] = [];
  for (const [at, v] of found) if (typeof v !== 'string' || !/^-?\d+$/.test(v)) out.push(`${at}: ${JSON.stringify(v)} is not a decimal string`);
  for (const [at, want] of expected) if (found.get(at) !== want) out.push(`${at}: ${JSON.stringify(found.get(at))}, expected "${want}"`);
  return out;
}

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

test('the generated list is every event message the service knows', () => {
  assert.deepEqual([...EVENTS].sort(), [...EVENT_MESSAGE_NAMES].sort());
});

test('every event type, emitted with its 64-bit integers as JSON numbers, streams them as decimal strings, live and from the log', async () => {
  const expected = new Map<string, Map<string, string>>();
  const events = EVENTS.map((name) => {
    const paths = new Map<string, string>([[`${name}.event_metadata.event_version`, name.replace(/^.*_v/, '')]]);
    const body = numbersOf(root.lookupType(`events.${name}`), name, paths) ?? {};
    expected.set(name, paths);
    assert.equal(validateEvent(name, { event_metadata: {}, ...body }), null, `${name}: the generated body is valid`);
    return { name, body, event_id: randomUUID() };
  });
  assert.ok([...expected.values()].some((p) => p.has('BillableProtectedIdentitiesCounted_v1.user_identities_count')), 'the billing counts are among them');

  const live = await Subscriber.open(server.base);
  try {
    const actor = server.service.registry.get(ROOT_ORG);
    assert.ok(actor);
    const first = actor.state.event_offset + 1;
    await actor.execute({ kind: 'EmitTestEvents', events });
    await live.waitForCount(events.length);
    const fromLog = await Subscriber.open(server.base, { query: { from: String(first) } });
    try {
      await fromLog.waitForCount(events.length);
      for (const [how, frames] of [['live', live.frames], ['from the log', fromLog.frames]] as const) {
        assert.deepEqual(frames.map((f) => f.event.event_metadata.event_name), EVENTS, how);
        const found = frames.flatMap((f) => problems(f, expected.get(f.event.event_metadata.event_name) as Map<string, string>));
        assert.deepEqual(found, [], `${how}:\n${found.join('\n')}`);
      }
    } finally {
      await fromLog.close();
    }
  } finally {
    await live.close();
  }
});

test("a Gate's report with a 64-bit integer as a JSON number streams it as a decimal string", async () => {
  const live = await Subscriber.open(server.base);
  try {
    const heartbeat = { ...sampleGateHeartbeat(), sequence: 9_007_199_254_740_991 };
    const r = await server.client.post('/gate/events', [heartbeat]);
    assert.equal(r.status, 202, r.text);
    await live.waitForCount(1);
    const frame = live.frames[0] as JsonFrame;
    assert.deepEqual(problems(frame, new Map([['GateHeartbeat_v1.sequence', '9007199254740991']])), []);
  } finally {
    await live.close();
  }
});
