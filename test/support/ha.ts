// Service processes of one region sharing a JetStream cluster (SERVICE_COMMIT=quorum), and what the HA tests ask of
// them: /health, a person created without following redirects (the status says who answered), every person stored.
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { Agent, fetch } from 'undici';
import { freePort } from './free-port.js';
import type { NatsServer } from './nats.js';
import { spawnService, type ServiceProcess } from './process.js';
import { ROOT_KEY, ROOT_ORG } from './server.js';

export const HA_REGION = 'europe-belgium';
const agent = new Agent({ keepAliveTimeout: 1000 });
const HEADERS = { 'Service-OrgID': ROOT_ORG, 'Service-API-Key': ROOT_KEY, 'Content-Type': 'application/json' };

/** Starts process `name` of the region on its own data dir under `dir`, and adds it to `running`. */
export async function startHaProcess(name: string, nats: NatsServer[], dir: string, running: Array<{ kill(): Promise<unknown> }>, ttlMs: number, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const p = await spawnService({
    SERVICE_PORT: String(port),
    SERVICE_REGIONS: HA_REGION,
    SERVICE_REGION_TRANSPORT: 'jetstream',
    SERVICE_NATS_URL: nats.map((n) => n.url).join(','),
    SERVICE_NATS_REPLICAS: '3',
    SERVICE_PROCESS_NAME: name,
    SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SERVICE_LEASE_TTL: `${ttlMs}ms`,
    SERVICE_LEASE_RENEW: '400ms',
    SERVICE_NATS_PING: '500ms',
    ...env,
  }, join(dir, name));
  running.push(p);
  return p;
}

export async function health(base: string): Promise<any> {
  return ((await (await fetch(`${base}/health?org=${ROOT_ORG}`, { dispatcher: agent })).json()) as any).result;
}

/** POST /persons without following redirects: the status says who answered. */
export async function createPerson(base: string, handle: string): Promise<{ status: number; id?: string; location?: string }> {
  try {
    const res = await fetch(`${base}/persons`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ handles: [{ type: 'email_address', value: handle }] }), redirect: 'manual', dispatcher: agent });
    const body = (await res.json()) as any;
    return { status: res.status, ...(res.status === 201 ? { id: body.result.person_id } : {}), ...(res.headers.get('location') ? { location: res.headers.get('location') as string } : {}) };
  } catch {
    return { status: 0 };
  }
}

/** POST /persons through `base`, sent on once to the lease holder when `base` answers 307. */
export async function createPersonAtWriter(base: string, handle: string): Promise<{ status: number; id?: string; location?: string }> {
  const r = await createPerson(base, handle);
  return r.status === 307 && r.location ? createPerson(new URL(r.location).origin, handle) : r;
}

export async function personsAt(base: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 500) {
    const res = await fetch(`${base}/persons?limit=500&offset=${offset}`, { headers: HEADERS, dispatcher: agent });
    const page = ((await res.json()) as any).result as Array<{ person_id: string }>;
    ids.push(...page.map((p) => p.person_id));
    if (page.length < 500) return ids;
  }
}

export async function jwks(base: string): Promise<unknown> {
  return (await fetch(`${base}/.well-known/jwks.json`, { dispatcher: agent })).json();
}

/** The root organization's event head and its chain link, from a checkpoint of the process (unverified), or the status. */
export async function chainHead(base: string): Promise<{ offset: number; chain: string } | { status: number }> {
  const res = await fetch(`${base}/events/checkpoint`, { headers: HEADERS, dispatcher: agent });
  if (res.status !== 200) return { status: res.status };
  const { offset, chain } = decodeJwt(((await res.json()) as any).result.checkpoint) as { offset: number; chain: string };
  return { offset, chain };
}
