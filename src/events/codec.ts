// Binary protobuf encoding of events and stream frames, from and to their JSON form, using the shipped events.proto.
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Type } from 'protobufjs';
import { EVENT_MESSAGE_NAMES } from './catalog.js';
import { VALUE_FIELDS, type EventJson } from './event-json.js';
import { createFastEncoder } from './fast-encode.js';
import { jsonToWire } from './json-to-wire.js';
import { validateEvent } from './validate.js';
import { wireToJson } from './wire-to-json.js';

export interface DecodedStreamFrame {
  readonly offset: number;
  readonly event_name: string;
  readonly event: EventJson;
  /** the frame's link of the organization's event chain; absent when the frame carries none */
  readonly chain?: Uint8Array;
}

export interface EventCodec {
  /** Throws EventShapeError when `json` is not a valid JSON form of the message. */
  encodeEvent(messageName: string, json: EventJson): Uint8Array;
  /** Throws when the bytes are not a well-formed message. */
  decodeEvent(messageName: string, bytes: Uint8Array): EventJson;
  encodeStreamFrame(offset: number, eventName: string, json: EventJson, chain?: Uint8Array): Uint8Array;
  /** Frames an event already encoded (for example as kept in the event log) without decoding it. */
  encodeStreamFrameBytes(offset: number, eventName: string, eventBytes: Uint8Array, chain?: Uint8Array): Uint8Array;
  decodeStreamFrame(bytes: Uint8Array): DecodedStreamFrame;
  validateEvent(messageName: string, json: unknown): string | null;
}

export interface EventCodecOptions {
  /** Defaults to the events.proto next to this module. */
  readonly protoPath?: string;
}

const DEFAULT_PROTO_PATH = fileURLToPath(new URL('./events.proto', import.meta.url));

function checkOffset(offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`stream offset must be a non-negative safe integer: ${offset}`);
}

export function createEventCodec(options: EventCodecOptions = {}): EventCodec {
  // keepCase: the JSON form and the wire objects use the seed's snake_case names, not protobufjs's camelCase.
  const root = new protobuf.Root().loadSync(options.protoPath ?? DEFAULT_PROTO_PATH, { keepCase: true });
  const value = root.lookupType('google.protobuf.Value');
  for (const name of Object.values(VALUE_FIELDS)) {
    if (value.fields[name] === undefined) throw new Error(`protobufjs google.protobuf.Value has no field ${name}`);
  }
  const types: ReadonlyMap<string, Type> = new Map(EVENT_MESSAGE_NAMES.map((name) => [name, root.lookupType(`events.${name}`)]));
  const frameType = root.lookupType('events.StreamFrame');
  // The encoders compiled from the catalog match the shipped events.proto (test/events/fast-encode.test.ts); another
  // .proto is encoded by protobufjs alone.
  const fast = options.protoPath === undefined || options.protoPath === DEFAULT_PROTO_PATH ? createFastEncoder(EVENT_MESSAGE_NAMES) : undefined;

  function typeOf(messageName: string): Type {
    const type = types.get(messageName);
    if (type === undefined) throw new RangeError(`not an event message: ${messageName}`);
    return type;
  }

  function encodeEvent(messageName: string, json: EventJson): Uint8Array {
    // The fast path knows only event messages, so what it encodes needs no lookup of the type. What it declines (a misfit
    // among them) goes the slow way, which throws the EventShapeError naming it, or the RangeError of an unknown name.
    return fast?.(messageName, json) ?? typeOf(messageName).encode(jsonToWire(messageName, json)).finish();
  }

  function decodeEvent(messageName: string, bytes: Uint8Array): EventJson {
    return wireToJson(messageName, typeOf(messageName).decode(bytes));
  }

  function encodeStreamFrameBytes(offset: number, eventName: string, eventBytes: Uint8Array, chain?: Uint8Array): Uint8Array {
    checkOffset(offset);
    typeOf(eventName);
    return frameType.encode(chain === undefined ? { offset, event_name: eventName, event: eventBytes } : { offset, event_name: eventName, event: eventBytes, chain }).finish();
  }

  function encodeStreamFrame(offset: number, eventName: string, json: EventJson, chain?: Uint8Array): Uint8Array {
    return encodeStreamFrameBytes(offset, eventName, encodeEvent(eventName, json), chain);
  }

  function decodeStreamFrame(bytes: Uint8Array): DecodedStreamFrame {
    const frame = frameType.decode(bytes) as unknown as { offset: unknown; event_name: string; event: Uint8Array; chain: Uint8Array };
    // offset is a uint64 (a long.js Long once large); past 2^53 it is refused rather than rounded.
    const offset = Number(String(frame.offset));
    checkOffset(offset);
    const decoded = { offset, event_name: frame.event_name, event: decodeEvent(frame.event_name, frame.event) };
    return frame.chain?.length ? { ...decoded, chain: frame.chain } : decoded;
  }

  return { encodeEvent, decodeEvent, encodeStreamFrame, encodeStreamFrameBytes, decodeStreamFrame, validateEvent };
}
