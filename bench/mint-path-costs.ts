// What the service does per POST /persons/{id}/mint-token beyond the durable floor (bench/minimal-mint-server.ts
// with MINIMAL_DURABLE=gather: uWS, the same signing, one 478-byte record per token through the same WAL store and
// the actor's batching), stage by stage, in process: each stage calls the service's own functions on a running
// service's own organization, person, keys and store. CPU µs per call, the best of --rounds, so that the figures
// hold on a busy machine. Beside the stages, the whole issuing path in process (pipeline.issue on the real actor,
// 50 mints at a time, sync commits) against the floor's sign-and-record, which says what the stages leave out.
//   npm run bench -- mint-path-costs [--rounds 5] [--calls 50000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { applyEntry } from '../src/domain/apply.js';
import type { TokenRecord } from '../src/domain/commands.js';
import { decide } from '../src/domain/decide.js';
import type { DecideContext } from '../src/domain/decision.js';
import { requirePerson } from '../src/domain/lookup.js';
import { groupsClaimName, tokenLifetime } from '../src/domain/org-config.js';
import type { OrgState } from '../src/domain/state.js';
import { isEventMessageName } from '../src/events/catalog.js';
import { createChainer, ZERO_CHAIN } from '../src/events/chain.js';
import { createEventCodec } from '../src/events/codec.js';
import { createEventStamper } from '../src/events/stamp.js';
import { createAuthContext } from '../src/http/auth.js';
import { copyFields } from '../src/http/framing.js';
import { buildRequest, compileRoute, routeHeaders } from '../src/http/request.js';
import { envelope } from '../src/http/respond.js';
import { tokenRoutes } from '../src/http/handlers/tokens.js';
import type { HandlerDeps } from '../src/http/handlers/deps.js';
import { systemClock } from '../src/lib/clock.js';
import { createIdSource } from '../src/lib/ids.js';
import { Metrics } from '../src/lib/metrics.js';
import { hashKey } from '../src/org/registry.js';
import { createConsistencyTokens } from '../src/regions/consistency-token.js';
import { recordingWrites, localOnly } from '../src/regions/consistency.js';
import { startService, type Service } from '../src/service.js';
import { identityClaims } from '../src/tokens/claims.js';
import { createTokenIssuer } from '../src/tokens/sign.js';
import { createSigner } from '../src/tokens/signing-threads.js';
import { createTokenTemplates } from '../src/tokens/token-template.js';
import { createWal } from '../src/wal/log.js';
import { openTempStore } from './lib/temp-store.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { createDurableRecords, MINT_RECORD_BYTES } from './lib/durable-records.js';
import { cpuPerCall, cpuPerItem } from './lib/process-cpu.js';
import { environment, environmentLine, formatTable, writeResults } from './lib/report.js';

const USAGE = `usage: npm run bench -- mint-path-costs [--rounds 5] [--calls 50000]`;

const ORG = 'bench-org';
const KEY = 'bench-api-key-0123456789abcdef';
/** What the floor's server pays for the same request, measured pinned on a quiet machine (bench/mint.ts --pin-only). */
const GAP_US = 79.6 - 57.9;
/** mints in flight at once in the whole-path figures: the mint benchmark's commits carry about this many */
const AT_ONCE = 50;

/** CPU µs per call of an asynchronous f over n calls, AT_ONCE in flight, the best of `rounds` (round 0 warms up). */
async function perAsyncCall(n: number, rounds: number, f: (i: number) => Promise<unknown>): Promise<number> {
  let k = 0;
  return cpuPerItem(n, rounds, async () => {
    for (let b = 0; b < n / AT_ONCE; b++) {
      const all: Array<Promise<unknown>> = [];
      for (let i = 0; i < AT_ONCE; i++) all.push(f(k++));
      await Promise.all(all);
    }
  });
}

/** CPU µs per token of committing n tokens' records in batches of 50 through Wal.append (nosync: the flush is the same for both shapes). */
async function perAppend(n: number, rounds: number, shape: 'floor' | 'service', entry: Buffer, event: Buffer): Promise<number> {
  const temp = openTempStore('mint-path-costs-', false);
  const wal = createWal(temp.store, () => {});
  const floor = Buffer.alloc(MINT_RECORD_BYTES, 0x5a);
  let offset = 0;
  try {
    return await cpuPerItem(n, rounds, async () => {
      for (let b = 0; b < n / 50; b++) {
        const writes = [];
        for (let i = 0; i < 50; i++) {
          offset++;
          writes.push(shape === 'floor' ? { org: ORG, offset, record: floor, events: [] } : { org: ORG, offset, record: entry, events: [{ offset, record: event }] });
        }
        await wal.append(writes);
      }
    });
  } finally {
    await temp.close();
  }
}

interface Stage {
  stage: string;
  us: number;
  /** not added to the total: a figure for comparison */
  aside?: true;
}

/** The service as the mint benchmark runs it: default durability (sync) and signing threads. */
const benchConfig = (dataDir: string) => loadConfig({ SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_ROOT_ORG_ID: ORG, SERVICE_ROOT_API_KEY: KEY });

async function createPersons(service: Service, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`http://127.0.0.1:${service.port}/persons`, {
      method: 'POST',
      headers: { 'Service-OrgID': ORG, 'Service-API-Key': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ handles: [{ type: 'email_address', value: `bench-${i}@example.com` }] }),
    });
    if (res.status !== 201) throw new Error(`creating person ${i}: ${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { result: { person_id: string } }).result.person_id);
  }
  return ids;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { rounds: { type: 'string', default: '5' }, calls: { type: 'string', default: '50000' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const rounds = Math.floor(numberFlag('rounds', values.rounds, 1, USAGE));
  const n = Math.floor(numberFlag('calls', values.calls, 1000, USAGE) / AT_ONCE) * AT_ONCE;
  const env = environment();
  const dataDir = mkdtempSync(join(tmpdir(), 'mint-path-costs-svc-'));
  const config = benchConfig(dataDir);
  const service = await startService(config, { log: () => {}, warn: () => {} });
  // The floor's signer: as many signing threads as the service's.
  const signer = createSigner(config.signingThreads);
  const floorRecords = createDurableRecords('gather');
  try {
    const persons = await createPersons(service, 64);
    const actor = service.registry.get(ORG);
    if (!actor) throw new Error(`organization ${ORG} not found`);
    const personOf = (i: number) => persons[i & 63] as string;
    // A person ID as a request brings it: a new string each time, whose hash nothing has cached yet.
    const fresh = (id: string) => (' ' + id).slice(1);
    const stages: Stage[] = [];
    const add = (stage: string, us: number, aside?: true) => void stages.push({ stage, us, ...(aside && { aside }) });

    // ── The whole issuing path in process, first, while the organization's state is the actor's own. ──
    const pipeline = service.tokens.pipeline;
    const issueWhole = await perAsyncCall(n, rounds, (i) => pipeline.issue(actor, { method: 'api', person_id: fresh(personOf(i)), consistency: { level: 'local_region', timeoutMs: 30_000 } }));
    // The floor's sign-and-record (bench/minimal-mint-server.ts's mint), with the service's keys and signing threads.
    const floorIssuer = createTokenIssuer({ keys: service.tokens.keys, issuer: service.issuer, ttl: 3600, clock: systemClock, signer });
    const floorClaims = (id: string) => ({ iss: '', aud: 'org', oid: 'org', sub: id, person_id: id, iat: 0, exp: 0, jti: '', first_token: false, authenticated_methods: ['api'], region: 'europe-belgium' });
    const floorWhole = await perAsyncCall(n, rounds, async (i) => {
      const issued = floorIssuer.issue(floorClaims(personOf(i)));
      const recorded = floorRecords.record();
      recorded.then(undefined, () => {});
      await issued.token;
      await recorded;
    });

    // The actor alone: RecordToken through execute (decide, stamp, chain, encode, apply, the sync append, the commit
    // bus's subscribers, the promise hops) against the floor's record through the same queue and Wal.append.
    const ids = createIdSource();
    const record = (i: number): TokenRecord => ({ person_id: personOf(i), token_id: ids.uuid(), mint_token_api: true, first_token: false, issued_at: '2026-11-25T16:00:00Z', expires_at: '2026-11-25T17:00:00Z', authentications: [] });
    const actorWhole = await perAsyncCall(n, rounds, (i) => actor.execute({ kind: 'RecordToken', token: record(i) }));
    const floorRecord = await perAsyncCall(n, rounds, () => floorRecords.record());

    // ── The front, before the handler ──
    const routes = tokenRoutes({ keys: service.tokens.keys, pipeline, validator: service.tokens.validator, issuer: () => service.issuer, handlers: undefined as unknown as HandlerDeps });
    const mintRoute = routes.find((r) => r.path === '/persons/{person_id}/mint-token');
    if (!mintRoute) throw new Error('no mint-token route');
    const compiled = compileRoute(mintRoute);
    const wanted = new Set(routeHeaders(mintRoute));
    // What wrk sends, as uWS's forEach hands it over; a stand-in for uWS's own header iteration, which the floor skips.
    const fields: Array<[string, string]> = [['host', '127.0.0.1'], ['service-orgid', ORG], ['service-api-key', KEY], ['content-length', '0']];
    const forEach = (src: Array<[string, string]>, cb: (k: string, v: string) => void) => {
      for (const [k, v] of src) cb(k, v);
    };
    add('front: copy the route\'s header fields (copyFields; uWS forEach stood in for)', cpuPerCall(n, rounds, () => copyFields(fields, forEach, wanted, {})));
    const headers: Record<string, string> = {};
    copyFields(fields, forEach, wanted, headers);
    const authCtx = createAuthContext(service.registry, { operatorKey: undefined, checkOperatorKey: () => false });
    add('front: API-key authentication and organization lookup', cpuPerCall(n, rounds, () => void compiled.authenticator.authenticate(headers, authCtx, '')));
    const copied = (i: number) => ({ params: [personOf(i)], query: '', headers, ip: '' });
    const build = cpuPerCall(n, rounds, (i) => void buildRequest(compiled, copied(i), undefined, authCtx));
    add('front: the rest of the request (path params, consistency headers; buildRequest less authentication)', Math.max(0, build - (stages.at(-1) as Stage).us));

    // ── The issuing pipeline, before the signature (mintByApi's own steps, rebuilt from the same functions) ──
    const templates = createTokenTemplates(() => {});
    const state = actor.state;
    add('pipeline: person lookup and claims assembly (config, requirePerson, templates, identityClaims)', cpuPerCall(n, rounds, (i) => {
      const config = state.config;
      const groups = groupsClaimName(config);
      void tokenLifetime(config, 3600);
      const person = requirePerson(state, personOf(i));
      void identityClaims({ org: actor.id, person, authenticated_methods: ['api'], first_token: false, prev_token_id: person.last_token_id, template_claims: templates.claims(actor, person, groups), custom_claims: undefined, groups_claim_name: groups, anonymous: undefined });
    }));
    // Read on every mint (the token's prev_token_id) and kept for the person while the token commits; the
    // bookkeeping inside signAndRecord (set, get, delete) is not callable alone, so its read stands for it.
    add("pipeline: the person's previous token (pipeline.previousToken: the pending tokens, then the state)", cpuPerCall(n, rounds, (i) => void pipeline.previousToken(actor, fresh(personOf(i)))));
    const person0 = requirePerson(state, personOf(0));
    const claims = identityClaims({ org: actor.id, person: person0, authenticated_methods: ['api'], first_token: false, prev_token_id: person0.last_token_id, template_claims: undefined, custom_claims: undefined, groups_claim_name: groupsClaimName(state.config), anonymous: undefined });
    const inline = createTokenIssuer({ keys: service.tokens.keys, issuer: service.issuer, ttl: 3600, clock: systemClock });
    add("signing: the service's claims against the floor's (inline ES256; the floor signs too)", Math.max(0, cpuPerCall(n, rounds, () => void inline.issue(claims)) - cpuPerCall(n, rounds, (i) => void inline.issue(floorClaims(personOf(i))))));

    // ── The actor's commit: decide, stamp, chain, encode, apply ──
    const ctx: DecideContext = { nowMs: Date.now(), uuid: () => ids.uuid(), secret: () => ids.secret(), hashKey, regions: ['europe-belgium'], isEventMessageName };
    add('actor: decide RecordToken', cpuPerCall(n, rounds, (i) => void decide(state, { kind: 'RecordToken', token: record(i) }, ctx)));
    const d = decide(state, { kind: 'RecordToken', token: record(0) }, ctx);
    const stamp = createEventStamper(ids);
    const origin = { organization_id: state.id, root_organization_id: state.root_id };
    const nowNs = systemClock.nowNs();
    add('actor: build and stamp the TokenMinted event (metadata, event_id)', cpuPerCall(n, rounds, () => void stamp(origin, d.events[0] as never, nowNs)));
    const event = stamp(origin, d.events[0] as never, nowNs);
    const chain = createChainer(createEventCodec());
    let link = chain(ZERO_CHAIN, event);
    add("actor: the event's protobuf and its chain link (SHA-256)", cpuPerCall(n, rounds, () => void (link = chain(link.chain, event))));
    const wal = service.wal;
    const entry = { at: ctx.nowMs, changes: d.changes, ev: state.event_offset + 1 };
    add('actor: msgpack of the WAL entry (encodeEntry)', cpuPerCall(n, rounds, () => void wal.encodeEntry(entry)));
    add("actor: the event record, its link and protobuf bytes (encodeEvent)", cpuPerCall(n, rounds, () => void wal.encodeEvent(event, link.chain, link.wire)));
    const entryBytes = wal.encodeEntry(entry);
    const eventBytes = wal.encodeEvent(event, link.chain, link.wire);
    // Applied to a copy's worth of state: the same person map, offsets put back after, so the service's state stays as it was.
    const offsets = { offset: state.offset, ev: state.event_offset };
    add('actor: apply the entry (applyEntry)', cpuPerCall(n, rounds, () => void applyEntry(state as OrgState, { offset: offsets.offset, changes: d.changes, ev: offsets.ev })));
    const floorPut = await perAppend(n, rounds, 'floor', entryBytes, eventBytes);
    const servicePut = await perAppend(n, rounds, 'service', entryBytes, eventBytes);
    add(`store: two LMDB puts (${entryBytes.length} + ${eventBytes.length} B) against the floor's one (${MINT_RECORD_BYTES} B), batches of 50`, Math.max(0, servicePut - floorPut));

    // ── The answer ──
    const waiter = recordingWrites(localOnly);
    add('answer: the consistency wait (local_region: the written mark, reached at once)', cpuPerCall(n, rounds, () => void waiter.wait(ORG, 1, { level: 'local_region', timeoutMs: 30_000 })));
    const token = (await inline.issue(claims).token) as string;
    const minted = { status: 201, result: token, resultNeedsNoEscape: true as const };
    add("answer: JSON envelope (the floor's JSON.stringify subtracted)", Math.max(0, cpuPerCall(n, rounds, () => void envelope(minted)) - cpuPerCall(n, rounds, () => void JSON.stringify({ result: token }))));
    const tokens = createConsistencyTokens(Buffer.alloc(32, 1));
    add('answer: Service-Consistency-Token', cpuPerCall(n, rounds, (i) => void tokens.mint(ORG, i)));
    const metrics = new Metrics();
    const latency = metrics.histogram('h', 'h').bind({ route: mintRoute.path, method: 'post' });
    const requests = metrics.counter('c', 'c').bind({ route: mintRoute.path, method: 'post', status: '201' });
    add('answer: request metrics (a bound counter and latency histogram, as Front.count)', cpuPerCall(n, rounds, () => {
      requests.inc();
      latency.observe((performance.now() - 1) / 1000);
    }));

    const counted = stages.filter((s) => !s.aside);
    const total = counted.reduce((s, p) => s + p.us, 0);
    const wholeGap = issueWhole - floorWhole;
    console.log(`what POST /persons/{id}/mint-token does beyond the durable floor, CPU µs a mint (best of ${rounds} rounds of ${n})`);
    console.log(formatTable([{ title: 'stage', value: (p: Stage) => p.stage }, { title: 'µs', value: (p) => p.us.toFixed(2) }], [...stages, { stage: 'total of the stages', us: total }]));
    console.log(`whole issuing path in process, ${AT_ONCE} at a time, sync commits: pipeline.issue ${issueWhole.toFixed(2)} µs, the floor's sign-and-record ${floorWhole.toFixed(2)} µs: ${wholeGap.toFixed(2)} µs more`);
    console.log(`  (the front's stages, ${stages.filter((s) => s.stage.startsWith('front') || s.stage.startsWith('answer')).reduce((a, s) => a + s.us, 0).toFixed(2)} µs, are outside it; the rest of the stages sum to ${stages.filter((s) => !s.stage.startsWith('front') && !s.stage.startsWith('answer')).reduce((a, s) => a + s.us, 0).toFixed(2)} µs)`);
    const actorStages = stages.filter((s) => s.stage.startsWith('actor') || s.stage.startsWith('store')).reduce((a, s) => a + s.us, 0);
    console.log(`the actor alone, ${AT_ONCE} at a time, sync commits: execute(RecordToken) ${actorWhole.toFixed(2)} µs, the floor's record ${floorRecord.toFixed(2)} µs: ${(actorWhole - floorRecord).toFixed(2)} µs more, of which the actor's and store's stages above are ${actorStages.toFixed(2)} µs`);
    console.log(`  (the rest, ${(actorWhole - floorRecord - actorStages).toFixed(2)} µs, is the commit bus's subscribers, the promise hops and the batch's own work; sync commits make it the noisiest figure here)`);
    console.log(`for scale: the service's server spends about ${GAP_US.toFixed(1)} µs a mint more than the floor's (pinned, quiet machine: 79.6 against 57.9)`);
    console.log(environmentLine(env));
    console.log(`written to ${writeResults('mint-path-costs', env, { rounds, calls: n, stages, total_us: total, gap_us: GAP_US, whole: { service_us: issueWhole, floor_us: floorWhole, actor_us: actorWhole, floor_record_us: floorRecord, at_once: AT_ONCE } })}`);
  } finally {
    await floorRecords.close();
    await signer.close();
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main);
