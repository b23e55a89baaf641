// The fan-out on a real LMDB event log, with in-memory sockets: each event encoded once per format per commit
// however many subscribers, live limits applied per subscriber, catch-up paced by the socket's buffer.
import assert from 'node:assert/strict';
import { after, beforeEach, test } from 'node:test';
import { createEventLog, type EventLog } from '../../src/events/log.js';
import { CLOSE_KEY_ROTATED, CLOSE_SLOW_CONSUMER, createEventStream, type EventStream, type Sink } from '../../src/events/stream.js';
import { createWal, type Wal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { removeDir, tempDir } from '../support/server.js';
import { range } from '../support/ws.js';

/** Topics the in-memory sockets joined, as uWebSockets.js keeps them: a closed socket leaves all of its topics. */
const topics = new Map<string, Set<MemorySink>>();
let broadcasts = 0;
let sends = 0;

/** An in-memory socket: records frames; its unsent bytes are whatever the test says. */
class MemorySink implements Sink {
  frames: Array<{ offset: number; name: string }> = [];
  unsent = 0;
  closedWith: { code: number; reason: string } | undefined;
  constructor(private readonly onClose: () => void = () => {}) {}
  send(frame: Uint8Array, binary: boolean): void {
    sends++;
    this.receive(frame, binary);
  }
  private receive(frame: Uint8Array, binary: boolean): void {
    assert.equal(this.closedWith, undefined, 'no frame after close');
    const text = binary ? JSON.stringify({ offset: frame[0], event: { event_metadata: { event_name: 'binary' } } }) : Buffer.from(frame).toString();
    const parsed = JSON.parse(text) as { offset: number; event: { event_metadata: { event_name: string } } };
    this.frames.push({ offset: parsed.offset, name: parsed.event.event_metadata.event_name });
  }
  buffered = () => this.unsent;
  cork = (fn: () => void) => fn();
  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
    for (const members of topics.values()) members.delete(this);
    this.onClose();
  }
  join(topic: string): void {
    let members = topics.get(topic);
    if (!members) topics.set(topic, (members = new Set()));
    members.add(this);
  }
  leave(topic: string): void {
    topics.get(topic)?.delete(this);
  }
  broadcast(topic: string, frame: Uint8Array, binary: boolean): void {
    broadcasts++;
    for (const sink of topics.get(topic) ?? []) sink.receive(frame, binary);
  }
}

const dirs: string[] = [];
let store: Store;
let wal: Wal;
let log: EventLog;
let head = 0;
let encodes = 0;
let stream: EventStream;

const event = (offset: number, name = 'PersonCreated_v1') => ({ offset, event: { event_metadata: { event_name: name }, n: offset } });

/** Writes events to the log, moves the durable head, and publishes them: what the stream's commit-bus subscription does. */
async function commit(names: string[]): Promise<void> {
  const events = names.map((name, i) => event(head + 1 + i, name));
  await wal.append([{ org: 'a', offset: head + 1, record: wal.encodeEntry({ at: 0, changes: [], ev: head + names.length }), events: events.map((e) => ({ offset: e.offset, record: wal.encodeEvent(e.event) })) }]);
  head += names.length;
  stream.publish('a', events);
}

const tick = () => new Promise((r) => setImmediate(r));

beforeEach(() => {
  const dir = tempDir('event-stream-');
  dirs.push(dir);
  store = openStore(dir, 'local', false);
  wal = createWal(store, () => {});
  head = 0;
  encodes = 0;
  topics.clear();
  broadcasts = 0;
  sends = 0;
  log = createEventLog({ wal, head: () => head, organizations: () => ['a'], retention: { kind: 'count', count: 1e6 }, nowMs: Date.now, warn: assert.fail });
  stream = createEventStream({
    log,
    maxBuffer: 1000,
    warn: assert.fail,
    encodeProtobufFrame: (offset) => {
      encodes++;
      return Uint8Array.of(offset);
    },
  });
});
after(() => {
  for (const dir of dirs) removeDir(dir);
});

test('each event of a commit is encoded once per format, however many subscribers get it', async () => {
  const sinks = range(1, 20).map(() => new MemorySink());
  sinks.forEach((sink, i) => stream.subscribe({ org: 'a', types: undefined, from: undefined, format: i % 2 ? 'protobuf' : 'json' }, sink));
  await commit(['PersonCreated_v1', 'PersonDeleted_v1', 'PersonCreated_v1']);
  assert.equal(encodes, 3, 'three protobuf encodings for ten protobuf subscribers');
  assert.equal(broadcasts, 6, 'each frame broadcast once per format to the subscribers that share it');
  assert.equal(sends, 0);
  for (const sink of sinks) assert.deepEqual(sink.frames.map((f) => f.offset), [1, 2, 3]);
  await store.close();
});

test('a live subscriber whose unsent bytes would pass the limit is closed with 4008 and the first offset it was not sent', async () => {
  const fast = new MemorySink();
  const slow = new MemorySink(() => sub.closed());
  stream.subscribe({ org: 'a', types: undefined, from: undefined, format: 'json' }, fast);
  const sub = stream.subscribe({ org: 'a', types: undefined, from: undefined, format: 'json' }, slow);
  await commit(['PersonCreated_v1', 'PersonCreated_v1']);
  slow.unsent = 960;
  await commit(['PersonCreated_v1', 'PersonCreated_v1']);
  assert.deepEqual(slow.closedWith, { code: CLOSE_SLOW_CONSUMER, reason: 'slow consumer; resume with from=3' });
  assert.deepEqual(slow.frames.map((f) => f.offset), [1, 2]);
  assert.equal(stream.count(), 1);
  await commit(['PersonCreated_v1']);
  assert.deepEqual(fast.frames.map((f) => f.offset), [1, 2, 3, 4, 5]);
  await store.close();
});

test('a replaying subscriber pauses while its socket is full, resumes on drain, and turns live without gap or duplicate', async () => {
  await commit(range(1, 600).map(() => 'PersonCreated_v1'));
  const sink = new MemorySink();
  sink.unsent = 1_000_000;
  const sub = stream.subscribe({ org: 'a', types: undefined, from: 1, format: 'json' }, sink);
  for (let i = 0; i < 5; i++) await tick();
  // One batch went out, then the full buffer paused it.
  assert.equal(sink.frames.length, 256);
  await commit(['PersonDeleted_v1']);
  assert.equal(sink.frames.length, 256, 'a replaying subscriber gets live events from the log, not from publish');
  sink.unsent = 0;
  sub.drained();
  for (let i = 0; i < 10; i++) await tick();
  await commit(['PersonDeleted_v1']);
  assert.deepEqual(sink.frames.map((f) => f.offset), range(1, 602));
  assert.equal(sink.closedWith, undefined);
  await store.close();
});

test('types filters both the replay and the live part', async () => {
  await commit(['PersonCreated_v1', 'PersonDeleted_v1', 'GdprConsentsChanged_v1']);
  const sink = new MemorySink();
  stream.subscribe({ org: 'a', types: new Set(['PersonDeleted_v1', 'GdprConsentsChanged_v1']), from: 1, format: 'json' }, sink);
  await tick();
  await commit(['PersonDeleted_v1', 'PersonCreated_v1']);
  assert.deepEqual(sink.frames, [
    { offset: 2, name: 'PersonDeleted_v1' },
    { offset: 3, name: 'GdprConsentsChanged_v1' },
    { offset: 4, name: 'PersonDeleted_v1' },
  ]);
  await store.close();
});

test('a commit record is published, and one that rotated the key closes the organization\'s subscribers after its events', async () => {
  const sink = new MemorySink(() => sub.closed());
  const sub = stream.subscribe({ org: 'a', types: undefined, from: undefined, format: 'json' }, sink);
  const write = async (names: string[]) => {
    const events = names.map((name, i) => event(head + 1 + i, name));
    await wal.append([{ org: 'a', offset: head + 1, record: wal.encodeEntry({ at: 0, changes: [], ev: head + names.length }), events: events.map((e) => ({ offset: e.offset, record: wal.encodeEvent(e.event) })) }]);
    head += names.length;
    return events;
  };
  stream.committed({ org: 'a', events: await write(['PersonCreated_v1']), keyRotated: false });
  assert.equal(sink.closedWith, undefined);
  stream.committed({ org: 'a', events: await write(['PersonDeleted_v1']), keyRotated: true });
  assert.deepEqual(sink.frames.map((f) => f.offset), [1, 2], 'the rotating commit\'s own events are sent first');
  assert.deepEqual(sink.closedWith, { code: CLOSE_KEY_ROTATED, reason: 'API key rotated; resume with from=3' });
  assert.equal(stream.count(), 0);
  await store.close();
});

test('a live subscriber whose queue cannot take a whole commit is served alone up to its bound, then rejoins the broadcast', async () => {
  const busy = new MemorySink();
  const other = new MemorySink();
  stream.subscribe({ org: 'a', types: undefined, from: undefined, format: 'json' }, busy);
  stream.subscribe({ org: 'a', types: undefined, from: undefined, format: 'json' }, other);
  busy.unsent = 900;
  await commit(['PersonCreated_v1', 'PersonCreated_v1']);
  assert.equal(sends, 2, 'the busy one got the commit frame by frame');
  assert.equal(broadcasts, 2, 'the other one by broadcast');
  busy.unsent = 0;
  await commit(['PersonDeleted_v1']);
  assert.equal(sends, 2);
  assert.equal(broadcasts, 3, 'both by one broadcast again');
  for (const sink of [busy, other]) assert.deepEqual(sink.frames.map((f) => f.offset), [1, 2, 3]);
  assert.equal(busy.closedWith, undefined);
  await store.close();
});

test('subscribers with different filters get their own frames, each once', async () => {
  const all = new MemorySink();
  const deleted = new MemorySink();
  const deleted2 = new MemorySink();
  stream.subscribe({ org: 'a', types: undefined, from: undefined, format: 'json' }, all);
  stream.subscribe({ org: 'a', types: new Set(['PersonDeleted_v1']), from: undefined, format: 'json' }, deleted);
  stream.subscribe({ org: 'a', types: new Set(['PersonDeleted_v1']), from: undefined, format: 'json' }, deleted2);
  await commit(['PersonCreated_v1', 'PersonDeleted_v1']);
  assert.deepEqual(all.frames.map((f) => f.offset), [1, 2]);
  assert.deepEqual(deleted.frames.map((f) => f.offset), [2]);
  assert.deepEqual(deleted2.frames.map((f) => f.offset), [2]);
  assert.equal(broadcasts, 3);
  await store.close();
});
