// Starts the real service on a loopback port with a fresh data dir, and a small client for it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { loadConfig } from '../../src/config.js';
import { startService, type Service, type ServiceOptions } from '../../src/service.js';

export const ROOT_ORG = 'root-org';
export const ROOT_KEY = 'root-key-0123456789abcdef';

export interface TestServer {
  service: Service;
  base: string;
  dataDir: string;
  client: Client;
  stop(): Promise<void>;
}

/** An organization's logged events (the JSON form), oldest first; `name` keeps only those of that event name. */
export function loggedEvents(server: TestServer, name?: string, org = ROOT_ORG): Array<Record<string, unknown>> {
  const all = server.service.events.log.read(org, 1, 100_000).map((e) => e.event);
  return name === undefined ? all : all.filter((e) => metadataOf(e).event_name === name);
}

/** How many of an organization's logged events come from the given source (Cloud, SDK, Gate). */
export function loggedFrom(server: TestServer, source: string, org = ROOT_ORG): number {
  return loggedEvents(server, undefined, org).filter((e) => metadataOf(e).source === source).length;
}

const metadataOf = (event: Record<string, unknown>) => event['event_metadata'] as { event_name: string; source: string };

export function tempDir(prefix = 'identity-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestServer(env: Record<string, string> = {}, options: ServiceOptions = {}, dataDir = tempDir()): Promise<TestServer> {
  const config = loadConfig({
    SERVICE_PORT: '0',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_ROOT_ORG_ID: ROOT_ORG,
    SERVICE_ROOT_API_KEY: ROOT_KEY,
    ...env,
  });
  const service = await startService(config, { log: () => {}, warn: () => {}, ...options });
  const base = `http://127.0.0.1:${service.port}`;
  // The test's own connection pool, closed with the server so that no idle keep-alive socket holds the runner.
  const agent = new Agent({ keepAliveTimeout: 1000 });
  return {
    service,
    base,
    dataDir,
    client: new Client(base, ROOT_ORG, ROOT_KEY, agent),
    async stop() {
      await agent.close();
      await service.stop();
    },
  };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: { get(name: string): string | null };
  text: string;
}

export class Client {
  constructor(
    readonly base: string,
    readonly orgId: string,
    readonly apiKey: string,
    readonly agent: Agent = new Agent({ keepAliveTimeout: 1000 }),
  ) {}

  as(orgId: string, apiKey: string): Client {
    return new Client(this.base, orgId, apiKey, this.agent);
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
    const h: Record<string, string> = { 'Service-OrgID': this.orgId, 'Service-API-Key': this.apiKey, ...headers };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['Content-Type'] ??= 'application/json';
    }
    for (const [k, v] of Object.entries(h)) if (v === '') delete h[k];
    const res = await fetch(this.base + path, payload === undefined ? { method, headers: h, dispatcher: this.agent } : { method, headers: h, body: payload, dispatcher: this.agent });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, body, headers);
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PUT', path, body, headers);
  }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PATCH', path, body, headers);
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('DELETE', path, undefined, headers);
  }
}

export const email = (value: string) => ({ handles: [{ type: 'email_address', value }] });
