// What the tamper-evident chain and the consistency token add to one write, in process, by part: the event's
// protobuf encoding (the bytes it is chained by), the link's SHA-256, what the event's record costs to lay out and
// put as the link and those bytes against the msgpack record a log without a chain writes (less: a negative
// figure), and the Service-Consistency-Token of the answer. CPU µs per event, the best of --rounds, so that the
// figures hold on a busy machine; against them, what one mint-token costs the server (the mint benchmark).
//   npm run bench -- chain-costs [--rounds 5] [--events 100000]
import { parseArgs } from 'node:util';
import { createEventCodec } from '../src/events/codec.js';
import type { EventJson } from '../src/events/event-json.js';
import { createLinker, ZERO_CHAIN } from '../src/events/chain.js';
import { createConsistencyTokens } from '../src/regions/consistency-token.js';
import { encodeRecord } from '../src/wal/codec.js';
import { encodeEventRecord } from '../src/wal/event-record.js';
import { openTempStore } from './lib/temp-store.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { cpuPerCall, cpuPerItem } from './lib/process-cpu.js';
import { environment, environmentLine, formatTable, writeResults } from './lib/report.js';

const USAGE = `usage: npm run bench -- chain-costs [--rounds 5] [--events 100000]`;

/** A TokenMinted_v1 as mint-token emits it: the write the chain's cost matters most to. */
const EVENT = {
  event_metadata: { is_test_event: false, event_id: '0190a0b1-0000-7000-8000-000000000001', timestamp: '2026-11-25T16:00:00.123456789Z', source: 'Cloud', event_type: 'TokenMinted', event_name: 'TokenMinted_v1', event_version: 1, organization_id: '0190a0b1-aaaa-7000-8000-000000000000', root_organization_id: '0190a0b1-aaaa-7000-8000-000000000000' },
  analytics_metadata: { analytics_correlation_id: '0190a0b1-0000-7000-8000-000000000002' },
  token_id: '0190a0b1-0000-7000-8000-000000000003',
  person_id: 'pid:0190a0b1-0000-7000-8000-000000000004',
  mint_token_api: true,
  issued_at: '2026-11-25T16:00:00.123456789Z',
  expires_at: '2026-11-25T17:00:00.123456789Z',
  first_token: false,
  authentications: [],
} as unknown as EventJson;

/** CPU µs per event of committing n events in batches of 50 (the mint benchmark's batch size), each `record`. */
async function perPut(n: number, rounds: number, record: Buffer): Promise<number> {
  const temp = openTempStore('chain-costs-', false);
  const store = temp.store;
  let offset = 0;
  try {
    return await cpuPerItem(n, rounds, async () => {
      for (let b = 0; b < n / 50; b++) {
        await store.root.batch(() => {
          for (let i = 0; i < 50; i++) {
            offset++;
            void store.events.put(['org', offset], record);
          }
        });
      }
    });
  } finally {
    await temp.close();
  }
}

interface Part {
  part: string;
  us: number;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { rounds: { type: 'string', default: '5' }, events: { type: 'string', default: '100000' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const rounds = Math.floor(numberFlag('rounds', values.rounds, 1, USAGE));
  const n = Math.floor(numberFlag('events', values.events, 1000, USAGE));
  const env = environment();
  const codec = createEventCodec();
  const bytes = codec.encodeEvent('TokenMinted_v1', EVENT);
  const link = createLinker();
  let head: Buffer = ZERO_CHAIN;
  const tokens = createConsistencyTokens(Buffer.alloc(32, 1));
  const wire = { name: 'TokenMinted_v1', bytes };
  const unchained = encodeRecord(EVENT);
  const chained = encodeEventRecord(EVENT, ZERO_CHAIN, wire);
  const put = await perPut(n, rounds, unchained);
  const putChained = await perPut(n, rounds, chained);
  const parts: Part[] = [
    { part: 'protobuf encoding of the event (the bytes it is chained by)', us: cpuPerCall(n, rounds, () => void codec.encodeEvent('TokenMinted_v1', EVENT)) },
    { part: `SHA-256 link over the previous link and ${bytes.byteLength} event bytes`, us: cpuPerCall(n, rounds, () => void (head = link(head, bytes))) },
    { part: `the event's record, the link and those bytes (${chained.byteLength} B) against msgpack (${unchained.byteLength} B): laying it out`, us: cpuPerCall(n, rounds, () => void encodeEventRecord(EVENT, head, wire)) - cpuPerCall(n, rounds, () => void encodeRecord(EVENT)) },
    { part: "the event's record: its LMDB put, in a batch of 50", us: putChained - put },
    // One organization, as in the mint benchmark: its tag and the token's prefix are cached after the first mint.
    { part: 'Service-Consistency-Token of the answer (AES, 16 offsets a call)', us: cpuPerCall(n, rounds, (i) => void tokens.mint('0190a0b1-aaaa-7000-8000-000000000000', i)) },
  ];
  const total = parts.reduce((s, p) => s + p.us, 0);
  console.log(`what the chain and the consistency token add to one TokenMinted write, CPU µs (best of ${rounds} rounds of ${n})`);
  console.log(formatTable([{ title: 'part', value: (p: Part) => p.part }, { title: 'µs', value: (p) => p.us.toFixed(2) }], [...parts, { part: 'total', us: total }]));
  console.log(`for scale: the event's own LMDB put costs ${put.toFixed(2)} µs here; one mint-token costs its server about 80–90 µs of CPU (npm run bench -- mint)`);
  console.log(environmentLine(env));
  console.log(`written to ${writeResults('chain-costs', env, { rounds, events: n, event_bytes: bytes.byteLength, event_put_us: put, parts, total_us: total })}`);
}

runIfMain(import.meta.url, main);
