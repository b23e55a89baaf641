// Event encoding and decoding (protobuf, src/events/codec.ts) against JSON text as a yardstick, in this process.
//   npm run bench -- codec [--duration 1]
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { createEventCodec } from '../src/events/codec.js';
import { rfc3339Nanos } from '../src/lib/time-text.js';
import { randomEvent } from '../src/events/random.js';
import { validateEvent } from '../src/events/validate.js';
import { sampleMetadata } from '../test/support/event-metadata.js';
import { seededRng } from '../test/support/seeded-rng.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { environment, environmentLine, formatTable, writeResults, type Column } from './lib/report.js';

const USAGE = `usage: npm run bench -- codec [options]   (or: npx tsx bench/codec.ts [options])
  --duration S   measured seconds per operation, after tinybench's own warm-up (default 1)`;

type TableRow = Record<string, string | number | undefined>;

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { duration: { type: 'string', default: '1' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const time = numberFlag('duration', values.duration, 0.01, USAGE) * 1000;
  const env = environment();

  const codec = createEventCodec();
  const metadata = sampleMetadata({ type: 'TokenMinted', root_organization_id: 'org-1', is_test_event: false, timestamp: rfc3339Nanos(1_795_453_200_123_456_789n) });
  const tokenMinted = randomEvent('TokenMinted_v1', metadata, seededRng(1));
  const gateRequest = randomEvent('GateRequestHandled_v1', { ...metadata, event_type: 'GateRequestHandled', event_name: 'GateRequestHandled_v1' }, seededRng(2));
  const tokenBytes = codec.encodeEvent('TokenMinted_v1', tokenMinted);
  const gateBytes = codec.encodeEvent('GateRequestHandled_v1', gateRequest);
  const tokenText = JSON.stringify(tokenMinted);
  const frame = codec.encodeStreamFrame(1, 'TokenMinted_v1', tokenMinted);

  const bench = new Bench({ name: 'events codec', time, warmupTime: Math.min(250, time) });
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
  const table = bench.table().filter((r): r is TableRow => r !== null);
  // tinybench's own columns, whatever its version names them.
  const columns: Column<TableRow>[] = Object.keys(table[0] ?? {}).map((key) => ({ title: key, value: (r) => String(r[key] ?? ''), align: key === 'Task name' ? 'left' : 'right' }));
  console.log(formatTable(columns, table));
  // Medians of operations per second, as ratios to JSON text on the same event in the same run.
  const opsPerSecond = (task: string) => {
    const result = bench.getTask(task)?.result;
    return result && 'throughput' in result ? result.throughput.p50 : NaN;
  };
  const ratios = {
    encode_over_json_stringify: opsPerSecond('encode TokenMinted_v1') / opsPerSecond('JSON.stringify TokenMinted_v1'),
    decode_over_json_parse: opsPerSecond('decode TokenMinted_v1') / opsPerSecond('JSON.parse TokenMinted_v1'),
  };
  console.log(`\nTokenMinted_v1: ${tokenBytes.length} bytes as protobuf, ${Buffer.byteLength(tokenText)} as JSON`);
  console.log(`encode / JSON.stringify, operations per second: ${ratios.encode_over_json_stringify.toFixed(2)}×`);
  console.log(`decode / JSON.parse, operations per second:     ${ratios.decode_over_json_parse.toFixed(2)}×`);
  console.log(`\n${environmentLine(env)}`);
  console.log(`written to ${writeResults('codec', env, { settings: { time_ms: time }, sizes: { protobuf: tokenBytes.length, json: Buffer.byteLength(tokenText) }, ratios, table })}`);
}

runIfMain(import.meta.url, main);
