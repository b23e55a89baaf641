// The tamper-evident event chain: each organization's events are linked by SHA-256 over the previous link and
// the event's encoded protobuf bytes, so altering, dropping or reordering any retained event changes every
// link from it on, and a signed checkpoint of one link vouches for everything before it.
import { hash } from 'node:crypto';
import type { WireEvent } from '../wal/event-record.js';
import type { EventCodec } from './codec.js';
import type { EventJson } from './event-json.js';

/** The link before an organization's first event. */
export const ZERO_CHAIN: Buffer = Buffer.alloc(32);

/** SHA-256(previous link ‖ event bytes). */
export function nextChain(previous: Uint8Array, eventBytes: Uint8Array): Buffer {
  return linkWith(Buffer.allocUnsafe(previous.byteLength + eventBytes.byteLength), previous, eventBytes);
}

/**
 * nextChain over `scratch` (large enough for both parts). One-shot hash() over one buffer: createHash() builds
 * a Hash object and its native handle per call, which cost several times the hashing of a few hundred bytes.
 * The digest comes back as 'binary' (latin1) text, one character a byte, and is copied into a Buffer: on Node 20
 * hash()'s 'buffer' output takes a slower path, about twice the cost of the whole call this way.
 */
function linkWith(scratch: Buffer, previous: Uint8Array, eventBytes: Uint8Array): Buffer {
  scratch.set(previous, 0);
  scratch.set(eventBytes, previous.byteLength);
  return Buffer.from(hash('sha256', scratch.subarray(0, previous.byteLength + eventBytes.byteLength), 'binary'), 'latin1');
}

/** nextChain with a buffer of its own reused from call to call (each caller is one thread, one call at a time). */
export function createLinker(): (previous: Uint8Array, eventBytes: Uint8Array) => Buffer {
  let scratch = Buffer.allocUnsafe(4096);
  return (previous, eventBytes) => {
    const size = previous.byteLength + eventBytes.byteLength;
    if (size > scratch.byteLength) scratch = Buffer.allocUnsafe(Math.max(size, scratch.byteLength * 2));
    return linkWith(scratch, previous, eventBytes);
  };
}

export function eventNameOf(event: Record<string, unknown>): string {
  return (event['event_metadata'] as { event_name?: string } | undefined)?.event_name ?? '';
}

/** An event's link and, where its record is to keep them (wire), the protobuf bytes the link was computed over. */
export interface ChainLink {
  chain: Buffer;
  wire?: WireEvent;
}

/** Links events as emitted (their JSON form): the bytes hashed are the ones a protobuf subscriber receives. */
export type Chainer = (previous: Uint8Array, event: Record<string, unknown>) => ChainLink;

/**
 * Events whose records keep the protobuf bytes they are chained by: those whose JSON form as emitted comes back
 * exactly (fields, values and their order) from those bytes, checked for each emitter by
 * test/e2e/event-emission.test.ts. Any other event's record keeps its JSON form (msgpack), as emitters may
 * leave out fields that protobuf gives back as defaults ('' or []) or write 64-bit counts as numbers.
 */
export const KEPT_AS_PROTOBUF: ReadonlySet<string> = new Set([
  'TokenMinted_v1',
  'AnonymousTokenMinted_v1',
  'PersonCreated_v1',
  'AnonymousPersonCreated_v1',
  'PersonDeleted_v1',
  'GdprConsentsChanged_v1',
  'SuborganizationCreated_v1',
  'SuborganizationCreated_InRegion_v1',
]);

export function createChainer(codec: Pick<EventCodec, 'encodeEvent'>): Chainer {
  const link = createLinker();
  return (previous, event) => {
    const name = eventNameOf(event);
    const bytes = protobufOf(codec, event, name);
    if (bytes === undefined) return { chain: link(previous, jsonBytes(event)) };
    const chain = link(previous, bytes);
    return KEPT_AS_PROTOBUF.has(name) ? { chain, wire: { name, bytes } } : { chain };
  };
}

/**
 * The bytes an event is chained by: its protobuf encoding. An event without one (never expected: events are
 * validated when emitted) is chained by its JSON text rather than failing the write that emitted it.
 */
export function chainBytes(codec: Pick<EventCodec, 'encodeEvent'>, event: Record<string, unknown>): Uint8Array {
  return protobufOf(codec, event, eventNameOf(event)) ?? jsonBytes(event);
}

/** The event's protobuf encoding, or undefined when it has none. */
function protobufOf(codec: Pick<EventCodec, 'encodeEvent'>, event: Record<string, unknown>, name: string): Uint8Array | undefined {
  try {
    return codec.encodeEvent(name, event as EventJson);
  } catch {
    return undefined;
  }
}

const jsonBytes = (event: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify(event));

/** What filling in missing links needs of the log. */
export interface ChainStore {
  lastChainOffset(org: string): number | undefined;
  chainAt(org: string, offset: number): Buffer | undefined;
  events(org: string, from: number, limit: number): Array<{ offset: number; event: unknown }>;
  putChains(org: string, links: Array<{ offset: number; chain: Buffer }>): Promise<void>;
}

/**
 * Computes and stores the links a data dir written before the chain existed lacks, up to `head` (the last
 * durable event). Where the oldest retained event was not the first, the chain starts from zero at it: what
 * was pruned before the upgrade cannot be vouched for. Resolves to the number of links stored.
 */
export async function fillChains(store: ChainStore, chainer: Chainer, org: string, head: number): Promise<number> {
  const last = store.lastChainOffset(org) ?? 0;
  if (last >= head) return 0;
  let previous: Buffer = last > 0 ? (store.chainAt(org, last) ?? ZERO_CHAIN) : ZERO_CHAIN;
  let from = last + 1;
  let stored = 0;
  for (;;) {
    const batch = store.events(org, from, 1000).filter((e) => e.offset <= head);
    if (batch.length === 0) break;
    const links = batch.map((e) => ({ offset: e.offset, chain: (previous = chainer(previous, e.event as Record<string, unknown>).chain) }));
    await store.putChains(org, links);
    stored += links.length;
    from = (batch.at(-1) as { offset: number }).offset + 1;
  }
  // Everything was pruned: the head's link is where the chain goes on from.
  if (stored === 0) await store.putChains(org, [{ offset: head, chain: previous }]);
  return stored;
}

/** One retained event as a verifier sees it: its bytes (undefined when they could not be read) and claimed link. */
export interface ChainedItem {
  offset: number;
  bytes: Uint8Array | undefined;
  chain: Uint8Array | undefined;
}

/**
 * Recomputes the chain over `items` from `anchor` (the link before the first item) and answers the first
 * offset whose recomputed link differs from the claimed one, or whose event is missing or unreadable;
 * undefined when every link agrees. `links` receives each recomputed link, for comparing checkpoints.
 */
export function firstDifference(anchor: Uint8Array, items: Iterable<ChainedItem>, links?: Map<number, Buffer>): number | undefined {
  const next = createLinker();
  let previous: Uint8Array = anchor;
  let expected: number | undefined;
  for (const item of items) {
    if (expected !== undefined && item.offset !== expected) return expected;
    expected = item.offset + 1;
    if (item.bytes === undefined || item.chain === undefined) return item.offset;
    const link = next(previous, item.bytes);
    links?.set(item.offset, link);
    if (!link.equals(item.chain)) return item.offset;
    previous = link;
  }
  return undefined;
}
