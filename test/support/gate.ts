// Gate in tests: an echo upstream, a fault proxy of our own between Gate and the service, and Gate itself
// started in process (or as a child process) with a generated configuration.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import http, { type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { WebSocketServer } from 'ws';
import { buildConfig } from '../../src/gate/config.js';
import { startGate, type Gate } from '../../src/gate/gate.js';
import { spawnNode, type NodeProcess } from './process.js';
import { ROOT_KEY, ROOT_ORG, tempDir } from './server.js';

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** body bytes the upstream read */
  bodyLength: number;
}

export interface EchoUpstream {
  base: string;
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

/**
 * Answers every request with JSON {method, url, headers, body_length}; `/slow` answers after ?ms= (default 5 s);
 * `/bytes?n=` answers n bytes; WebSocket upgrades on `/ws` echo each message.
 */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let bodyLength = 0;
    req.on('data', (c: Buffer) => (bodyLength += c.length));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyLength });
      const url = new URL(req.url ?? '/', 'http://x');
      const answer = () => {
        if (url.pathname === '/bytes') {
          const n = Number(url.searchParams.get('n') ?? '0');
          res.writeHead(200, { 'content-type': 'application/octet-stream', connection: 'keep-alive', 'keep-alive': 'timeout=5', 'x-upstream': 'echo' });
          res.end(Buffer.alloc(n, 97));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'echo' });
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body_length: bodyLength }));
      };
      if (url.pathname === '/slow') setTimeout(answer, Number(url.searchParams.get('ms') ?? '5000')).unref();
      else answer();
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyLength: 0 });
    wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data, binary) => ws.send(data, { binary })));
  });
  const port = await listen(server);
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    seen,
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await closeServer(server);
    },
  };
}

export type FaultMode = 'pass' | 'refuse' | 'drop-answer';

export interface Passed {
  path: string;
  /** the JSON body, when there was one */
  body: any;
  outcome: FaultMode;
}

export interface FaultProxy {
  base: string;
  mode: FaultMode;
  /** every request that reached the proxy, with what was done to it */
  log: Passed[];
  /** the heartbeats' sequence numbers by outcome */
  heartbeats(outcome: FaultMode): number[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the service: `pass` relays, `refuse` cuts the connection without forwarding,
 * `drop-answer` forwards (the service commits) and then cuts the connection before the answer arrives.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const sockets = new Set<Socket>();
  const t = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const proxy: FaultProxy = {
    base: '',
    mode: 'pass',
    log: [],
    heartbeats(outcome) {
      return this.log
        .filter((p) => p.outcome === outcome && Array.isArray(p.body))
        .flatMap((p) => (p.body as any[]).filter((e) => e?.event_metadata?.event_name === 'GateHeartbeat_v1').map((e) => Number(e.sequence)));
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await closeServer(server);
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        body = undefined;
      }
      const outcome = proxy.mode;
      proxy.log.push({ path: req.url ?? '', body, outcome });
      if (outcome === 'refuse') {
        req.socket.destroy();
        return;
      }
      const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers, agent }, (ur) => {
        const parts: Buffer[] = [];
        ur.on('data', (c: Buffer) => parts.push(c));
        ur.on('end', () => {
          if (outcome === 'drop-answer') {
            req.socket.destroy();
            return;
          }
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          res.end(Buffer.concat(parts));
        });
      });
      up.on('error', () => req.socket.destroy());
      up.end(raw);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(server);
  proxy.base = `http://127.0.0.1:${port}`;
  return proxy;
}

/** A Gate configuration document: port 0, the given service (the fault proxy or the service itself), fast timers. */
export function gateDoc(serviceBase: string | undefined, gate: Record<string, unknown>): Record<string, unknown> {
  return {
    gate: {
      port: 0,
      host: '127.0.0.1',
      ...(serviceBase !== undefined ? { service: { base_url: serviceBase, org_id: ROOT_ORG, api_key: ROOT_KEY } } : {}),
      ...gate,
      events: { batch: { max_delay: '20ms' }, ...(gate['events'] as object | undefined) },
    },
  };
}

export async function startTestGate(doc: Record<string, unknown>): Promise<Gate & { base: string }> {
  const gate = await startGate(buildConfig(doc), { warn: () => {} });
  return Object.assign(gate, { base: `http://127.0.0.1:${gate.port}` });
}

/** Gate as an operator runs it: `src/gate/main.ts --config <generated yaml>`, ready once it logs its port. */
export async function spawnGate(doc: Record<string, unknown>): Promise<{ proc: NodeProcess; base: string }> {
  const dir = tempDir('gate-');
  const file = join(dir, 'gate.yaml');
  writeFileSync(file, stringify(doc));
  const proc = await spawnNode({ script: 'src/gate/main.ts', args: ['--config', file], ready: /gate listening on [^:]+:(\d+)/ });
  return { proc, base: `http://127.0.0.1:${proc.ready[1]}` };
}

/** Polls until pred holds (checked every 20 ms), failing after timeoutMs. */
export async function eventually(pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
