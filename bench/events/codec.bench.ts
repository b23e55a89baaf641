// Measures event encoding and decoding against JSON text as a yardstick; prints a table, writes bench/results/*.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Bench } from 'tinybench';
import { createEventCodec } from '../../src/events/codec.js';
import { eventMetadata, rfc3339Nanos } from '../../src/events/metadata.js';
import { randomEvent } from '../../src/events/random.js';
import { validateEvent } from '../../src/events/validate.js';
import { seededRng } from '../../test/support/seeded-rng.js';

const codec = createEventCodec();
const metadata = eventMetadata({
  type: 'TokenMinted',
  version: 1,
  source: 'Cloud',
  organization_id: 'org-1',
  root_organization_id: 'org-1',
  is_test_event: false,
  event_id: '0195f3a2-0000-7000-8000-000000000001',
  timestamp: rfc3339Nanos(1_795_453_200_123_456_789n),
});
const tokenMinted = randomEvent('TokenMinted_v1', metadata, seededRng(1));
const gateRequest = randomEvent('GateRequestHandled_v1', { ...metadata, event_type: 'GateRequestHandled', event_name: 'GateRequestHandled_v1' }, seededRng(2));
const tokenBytes = codec.encodeEvent('TokenMinted_v1', tokenMinted);
const gateBytes = codec.encodeEvent('GateRequestHandled_v1', gateRequest);
const tokenText = JSON.stringify(tokenMinted);
const frame = codec.encodeStreamFrame(1, 'TokenMinted_v1', tokenMinted);

const bench = new Bench({ name: 'events codec', time: 1000 });
bench
  .add('encode TokenMinted_v1', () => void codec.encodeEvent('TokenMinted_v1', tokenMinted))
  .add('decode TokenMinted_v1', () => void codec.decodeEvent('TokenMinted_v1', tokenBytes))
  .add('validate TokenMinted_v1', () => void validateEvent('TokenMinted_v1', tokenMinted))
  .add('encode GateRequestHandled_v1', () => void codec.encodeEvent('GateRequestHandled_v1', gateRequest))
  .add('decode GateRequestHandled_v1', () => void codec.decodeEvent('GateRequestHandled_v1', gateBytes))
  .add('encode stream frame', () => void codec.encodeStreamFrame(1, 'TokenMinted_v1', tokenMinted))
  .add('decode stream frame', () => void codec.decodeStreamFrame(frame))
  .add('JSON.stringify TokenMinted_v1', () => void JSON.stringify(tokenMinted))
  .add('JSON.parse TokenMinted_v1', () => void JSON.parse(tokenText));

await bench.run();
const table = bench.table();
console.table(table);
console.log(`TokenMinted_v1: ${tokenBytes.length} bytes as protobuf, ${Buffer.byteLength(tokenText)} as JSON`);
const dir = new URL('../results/', import.meta.url);
mkdirSync(dir, { recursive: true });
const file = new URL(`events-codec-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, dir);
writeFileSync(file, JSON.stringify({ bench: bench.name, node: process.version, sizes: { protobuf: tokenBytes.length, json: Buffer.byteLength(tokenText) }, table }, null, 2));
