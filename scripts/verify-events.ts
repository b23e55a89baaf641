// Verifies an organization's event chain: recomputes every link from the events themselves and compares it with
// the stored (or streamed) links and with a checkpoint. Offline on a stopped data dir, or online against a
// running service (the checkpoint's signature then checked against its JWKS). Exit 0: all agree; 1: they
// differ, with "first differing offset N"; 2: the check could not be made.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compactVerify, createRemoteJWKSet } from 'jose';
import protobuf from 'protobufjs';
import WebSocket from 'ws';
import { ZERO_CHAIN, chainBytes, firstDifference, type ChainedItem } from '../src/events/chain.js';
import { createEventCodec } from '../src/events/codec.js';
import { CHECKPOINT_TYP, checkpointMetaKey, decodeCheckpoint, type CheckpointClaims } from '../src/tokens/checkpoint.js';
import { decodeEventRecord } from '../src/wal/event-record.js';
import { createWal } from '../src/wal/log.js';
import { openStore } from '../src/wal/store.js';

const USAGE = `usage: npm run verify-events -- --data-dir DIR --org ORG_ID [--from N]      (a stopped service's data dir)
       npm run verify-events -- --url URL --org ORG_ID --api-key KEY [--from N]  (a running service)`;

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    url: { type: 'string' },
    org: { type: 'string' },
    'api-key': { type: 'string' },
    from: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

if (values.help) fail(USAGE, 0);
const org = values.org ?? fail(USAGE);
const from = values.from === undefined ? undefined : Number(values.from);
if (from !== undefined && (!Number.isSafeInteger(from) || from < 1)) fail(`--from: must be an event offset, an integer from 1`);

interface Verdict {
  first: number;
  last: number;
  differing: number | undefined;
  checkpoint?: CheckpointClaims;
}

/** The first differing offset over the items, the checkpoint's offset counting as one when its link disagrees. */
function judge(items: ChainedItem[], anchor: Uint8Array | undefined, checkpoint: CheckpointClaims | undefined): Verdict {
  const links = new Map<number, Buffer>();
  // Without the link below the first item (pruned before links were kept, or --from past it) the first item's
  // claimed link is taken as the anchor, and verification starts after it.
  const start = anchor === undefined ? 1 : 0;
  const head = items[0];
  if (anchor === undefined && head?.chain) links.set(head.offset, Buffer.from(head.chain));
  let differing = firstDifference(anchor ?? head?.chain ?? ZERO_CHAIN, items.slice(start), links);
  if (checkpoint !== undefined && (differing === undefined || checkpoint.offset < differing)) {
    const link = checkpoint.offset === 0 ? ZERO_CHAIN : links.get(checkpoint.offset);
    if (link !== undefined && link.toString('hex') !== checkpoint.chain) differing = checkpoint.offset;
  }
  return { first: head?.offset ?? 0, last: items.at(-1)?.offset ?? 0, differing, ...(checkpoint && { checkpoint }) };
}

async function offline(dataDir: string): Promise<Verdict> {
  const store = openStore(dataDir, 'local', false);
  try {
    const codec = createEventCodec();
    const wal = createWal(store, () => undefined, { decodeEvent: codec.decodeEvent });
    const items: ChainedItem[] = [];
    for (const { key, value } of store.events.getRange({ start: [org, from ?? 0], end: [org, Number.MAX_SAFE_INTEGER] })) {
      // The link is in the event's record, or (written before links moved there) in the chains database.
      let bytes: Uint8Array | undefined;
      let chain: Uint8Array | undefined;
      try {
        const stored = decodeEventRecord(value, codec.decodeEvent);
        // A record of protobuf bytes is hashed as stored; an older one by its event's encoding.
        bytes = stored.wire?.bytes ?? chainBytes(codec, stored.event as Record<string, unknown>);
        chain = stored.chain;
      } catch {
        bytes = undefined;
      }
      chain ??= store.chains.getBinary(key);
      items.push({ offset: key[1], bytes, chain: chain ? Buffer.from(chain) : undefined });
    }
    const first = items[0]?.offset;
    const below = first === undefined ? undefined : first === 1 ? ZERO_CHAIN : wal.chainAt(org, first - 1);
    const stored = wal.getMeta<{ checkpoint: string }>(checkpointMetaKey(org));
    return judge(items, below ? Buffer.from(below) : undefined, stored ? decodeCheckpoint(stored.checkpoint) : undefined);
  } finally {
    await store.close();
  }
}

async function online(url: string, apiKey: string): Promise<Verdict> {
  const headers = { 'Service-OrgID': org, 'Service-API-Key': apiKey };
  const res = await fetch(new URL('/events/checkpoint', url), { headers });
  if (res.status !== 200) fail(`GET /events/checkpoint answered ${res.status}: ${await res.text()}`);
  const { checkpoint } = ((await res.json()) as { result: { checkpoint: string } }).result;
  // The signature first: a checkpoint that does not verify vouches for nothing.
  const verified = await compactVerify(checkpoint, createRemoteJWKSet(new URL('/.well-known/jwks.json', url))).catch((error: unknown) => fail(`the checkpoint does not verify against the service's JWKS: ${String(error)}`, 1));
  if (verified.protectedHeader.typ !== CHECKPOINT_TYP) fail(`the checkpoint's typ is not ${CHECKPOINT_TYP}`, 1);
  const claims = JSON.parse(new TextDecoder().decode(verified.payload)) as CheckpointClaims;
  if (claims.organization_id !== org) fail(`the checkpoint names organization ${claims.organization_id}, not ${org}`, 1);
  if (claims.offset === 0) return judge([], ZERO_CHAIN, claims);

  const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../src/events/events.proto', import.meta.url)), { keepCase: true });
  const frameType = root.lookupType('events.StreamFrame');
  const target = new URL('/events', url.replace(/^http/, 'ws'));
  target.searchParams.set('from', String(from ?? 1));
  target.searchParams.set('format', 'protobuf');
  const items: ChainedItem[] = [];
  await new Promise<void>((resolve, reject) => {
    const socket = new WebSocket(target, { headers });
    const timer = setTimeout(() => reject(new Error(`the stream did not reach offset ${claims.offset} within 60 s`)), 60_000);
    const done = () => {
      clearTimeout(timer);
      socket.close();
      resolve();
    };
    socket.on('unexpected-response', (_req, r) => reject(new Error(`WS /events answered ${r.statusCode}`)));
    socket.on('error', reject);
    socket.on('upgrade', (r) => {
      // Everything up to the checkpoint was pruned, or --from is past it: there is nothing to stream.
      if (Number(r.headers['service-events-oldest-offset']) > claims.offset || (from ?? 1) > claims.offset) done();
    });
    socket.on('message', (data: Buffer) => {
      const frame = frameType.decode(data) as unknown as { offset: unknown; event: Uint8Array; chain: Uint8Array };
      const offset = Number(String(frame.offset));
      if (offset > claims.offset) return done();
      items.push({ offset, bytes: frame.event, chain: frame.chain.length > 0 ? frame.chain : undefined });
      if (offset === claims.offset) done();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const first = items[0]?.offset;
  return judge(items, first === 1 ? ZERO_CHAIN : undefined, claims);
}

const verdict = values['data-dir'] !== undefined ? await offline(values['data-dir']) : values.url !== undefined && values['api-key'] !== undefined ? await online(values.url, values['api-key']) : fail(USAGE);
const range = verdict.last === 0 ? 'no events' : `events ${verdict.first}-${verdict.last}`;
const against = verdict.checkpoint ? `; checkpoint at offset ${verdict.checkpoint.offset} issued ${verdict.checkpoint.issued_at}` : '; no checkpoint stored';
if (verdict.differing !== undefined) {
  console.log(`first differing offset ${verdict.differing}`);
  process.exit(1);
}
console.log(`chain verified: ${range} of ${org}${against}`);
