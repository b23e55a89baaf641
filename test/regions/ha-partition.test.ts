// A network cut isolating the writer from its region's nats-servers (a proxy of ours on each of its connections,
// black-holed): it stops acknowledging within the lease TTL, the standby takes over, and no organization's writes
// are ever acknowledged by both: every acknowledged write is stored once, in one order, at the new writer.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { freePort } from '../support/free-port.js';
import { natsAvailable, startNatsCluster, startProxy, type NatsServer, type Proxy } from '../support/nats.js';
import { spawnService, type ServiceProcess } from '../support/process.js';
import { waitFor } from '../support/regions.js';
import { removeDir, ROOT_KEY, ROOT_ORG, tempDir } from '../support/server.js';

const dir = tempDir('identity-ha-cut-');
const running: Array<{ kill(): Promise<unknown> }> = [];
after(async () => {
  for (const p of running.reverse()) await p.kill().catch(() => {});
  removeDir(dir);
});

const TTL_MS = 2000;
const agent = new Agent({ keepAliveTimeout: 1000 });
const HEADERS = { 'Service-OrgID': ROOT_ORG, 'Service-API-Key': ROOT_KEY, 'Content-Type': 'application/json' };

async function startProcess(name: string, urls: string[], ttlMs = TTL_MS): Promise<ServiceProcess> {
  const port = await freePort();
  const p = await spawnService({ SERVICE_PORT: String(port), SERVICE_REGIONS: 'europe-belgium', SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_URL: urls.join(','), SERVICE_NATS_REPLICAS: '3', SERVICE_PROCESS_NAME: name, SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`, SERVICE_LEASE_TTL: `${ttlMs}ms`, SERVICE_LEASE_RENEW: '400ms', SERVICE_NATS_PING: '500ms' }, join(dir, name));
  running.push(p);
  return p;
}

const health = async (base: string): Promise<any> => ((await (await fetch(`${base}/health?org=${ROOT_ORG}`, { dispatcher: agent })).json()) as any).result;

async function createPerson(base: string, handle: string): Promise<{ status: number; id?: string }> {
  try {
    const res = await fetch(`${base}/persons`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ handles: [{ type: 'email_address', value: handle }] }), redirect: 'manual', dispatcher: agent, signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as any;
    return res.status === 201 ? { status: 201, id: body.result.person_id } : { status: res.status };
  } catch {
    return { status: 0 };
  }
}

test('a writer cut off from its nats-servers stops acknowledging within the lease TTL; no write is acknowledged twice', { skip: natsAvailable ? false : 'nats-server is not on PATH', timeout: 180_000 }, async () => {
  const nats: NatsServer[] = await startNatsCluster('europe-belgium', dir);
  for (const n of nats) running.push({ kill: () => n.kill() });
  // The first process reaches every server through a proxy of ours; it starts first, so it takes the lease.
  const proxies: Proxy[] = await Promise.all(nats.map((n) => startProxy(n.plan.port)));
  for (const p of proxies) running.push({ kill: () => p.close() });
  const cutOff = await startProcess('a', proxies.map((p) => `nats://127.0.0.1:${p.port}`));
  await waitFor(async () => (await health(cutOff.base)).lease.writing, 20_000, 'a to write the root organization');
  const other = await startProcess('b', nats.map((n) => n.url));

  // Writes to both processes all along: b's are sent on to a (307) until a is cut off, then b writes itself.
  const acked: Array<{ id: string; by: string; at: number }> = [];
  let stop = false;
  let n = 0;
  const client = async (base: string, by: string) => {
    while (!stop) {
      const r = await createPerson(base, `cut-${n++}@example.com`);
      if (r.status === 201) acked.push({ id: r.id as string, by, at: performance.now() });
      else await new Promise((res) => setTimeout(res, 20));
    }
  };
  const clients = [client(cutOff.base, 'a'), client(other.base, 'b'), client(cutOff.base, 'a')];
  await waitFor(() => acked.length >= 50, 30_000, '50 acknowledged writes');
  for (const p of proxies) p.setMode('blackhole');
  const cutAt = performance.now();
  await waitFor(() => acked.some((w) => w.by === 'b' && w.at > cutAt), TTL_MS + 20_000, 'b to acknowledge writes after the cut');
  await new Promise((r) => setTimeout(r, 1000));
  stop = true;
  await Promise.all(clients);

  const lateByA = acked.filter((w) => w.by === 'a' && w.at > cutAt + TTL_MS);
  assert.deepEqual(lateByA, [], 'the cut-off writer acknowledged nothing later than the lease TTL after the cut');
  const stored = [] as string[];
  for (let offset = 0; ; offset += 500) {
    const page = ((await (await fetch(`${other.base}/persons?limit=500&offset=${offset}`, { headers: HEADERS, dispatcher: agent })).json()) as any).result as Array<{ person_id: string }>;
    stored.push(...page.map((p) => p.person_id));
    if (page.length < 500) break;
  }
  assert.equal(new Set(stored).size, stored.length, 'no person twice');
  for (const w of acked) assert.equal(stored.filter((id) => id === w.id).length, 1, `write acknowledged by ${w.by} stored once`);
  assert.equal((await health(other.base)).lease.writing, true);
});

test('a clean stop of the writer hands its lease back: the standby writes well before the lease TTL', { skip: natsAvailable ? false : 'nats-server is not on PATH', timeout: 120_000 }, async () => {
  const TTL = 20_000;
  const nats = await startNatsCluster('europe-belgium', join(dir, 'stop'));
  for (const n of nats) running.push({ kill: () => n.kill() });
  const urls = nats.map((n) => n.url);
  const writer = await startProcess('stop-a', urls, TTL);
  await waitFor(async () => (await health(writer.base)).lease.writing, 20_000, 'stop-a to write');
  const standby = await startProcess('stop-b', urls, TTL);
  assert.equal((await createPerson(writer.base, 'before-stop@example.com')).status, 201);
  await writer.stop();
  const stoppedAt = performance.now();
  let served = false;
  while (!served && performance.now() - stoppedAt < TTL) {
    served = (await createPerson(standby.base, `after-stop-${performance.now()}@example.com`)).status === 201;
    if (!served) await new Promise((r) => setTimeout(r, 50));
  }
  const tookMs = performance.now() - stoppedAt;
  assert.ok(served && tookMs < TTL / 2, `the standby wrote ${Math.round(tookMs)} ms after the writer's clean stop (lease TTL ${TTL} ms)`);
});
