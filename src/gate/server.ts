// Gate's front: node:http server, the plugin pipeline of the matched URL, forwarding, one GateRequestHandled
// per request, /metrics and /health.
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { Metrics } from '../lib/metrics.js';
import type { GateConfig } from './config.js';
import { redactUrl, requestHandled, type GateEvent, type PluginRecord } from './events.js';
import { createMatcher } from './match.js';
import { createForwarder, VIA } from './proxy.js';
import type { Decision, GateRequest, Plugin } from './plugins/types.js';
import type { HttpClient } from './round-trip.js';

export interface GateServerDeps {
  config: GateConfig;
  build: (p: GateConfig['plugins'][number]) => Plugin;
  http: HttpClient;
  metrics: Metrics;
  /** where GateRequestHandled events go (undefined: events off) */
  emit?: (event: GateEvent) => void;
  health: () => Record<string, unknown>;
  now?: () => number;
}

export interface GateServer {
  port: number;
  close(): Promise<void>;
}

type Answer = Extract<Decision, { action: 'answer' }>;

const wallNow = () => performance.timeOrigin + performance.now();

export async function startGateServer(deps: GateServerDeps): Promise<GateServer> {
  const { config, metrics } = deps;
  const now = deps.now ?? wallNow;
  const match = createMatcher(config, deps.build);
  const forwarder = createForwarder(config.upstreamTimeoutMs);
  const requests = metrics.counter('gate_requests_total', 'Requests handled, by status sent to the client');
  const decisions = metrics.counter('gate_plugin_decisions_total', 'Plugin outcomes, by plugin id, type and decision');
  const pluginLatency = metrics.histogram('gate_plugin_duration_seconds', 'Time spent in each plugin, round trips included');
  const origin = deps.config.service ? { orgId: deps.config.service.orgId } : { orgId: '' };

  const describe = (req: IncomingMessage): GateRequest => {
    const host = req.headers.host ?? `${config.host}:${config.port}`;
    const xfp = req.headers['x-forwarded-proto'];
    const proto = config.trustProxy && typeof xfp === 'string' ? xfp.split(',')[0]!.trim() : 'http';
    let ip = req.socket.remoteAddress ?? '';
    const xff = req.headers['x-forwarded-for'];
    if (config.trustProxy && typeof xff === 'string') ip = xff.split(',')[0]!.trim();
    let url: URL;
    try {
      url = new URL(`${proto}://${host}${req.url ?? '/'}`);
    } catch {
      url = new URL(`${proto}://invalid${(req.url ?? '/').startsWith('/') ? req.url : '/'}`);
    }
    return { method: req.method ?? 'GET', url, headers: { ...req.headers }, ip: ip.replace(/^::ffff:/, '') };
  };

  const runPlugins = async (plugins: Plugin[], g: GateRequest, records: PluginRecord[]): Promise<Answer | undefined> => {
    for (const p of plugins) {
      const caller = deps.http.caller();
      const start = now();
      let d: Decision;
      try {
        d = await p.handle(g, caller);
      } catch (error) {
        d = { action: 'answer', status: 502, body: JSON.stringify({ errors: [{ httpcode: 502, message: `${p.config.type}: ${(error as Error).message}` }] }), metadata: { decision: 'error', reason: (error as Error).message } };
      }
      const end = now();
      records.push({ index: p.config.index, id: p.config.id, type: p.config.type, start, end, metadata: d.metadata, trips: caller.trips });
      decisions.inc({ plugin_id: p.config.id, plugin_type: p.config.type, decision: d.action === 'continue' ? 'continue' : String(d.status) });
      pluginLatency.observe((end - start) / 1000, { plugin_type: p.config.type });
      if (d.action === 'answer') return d;
    }
    return undefined;
  };

  const finish = (g: GateRequest, start: number, status: number, requestLength: number, responseLength: number, records: PluginRecord[]) => {
    requests.inc({ status: String(status) });
    if (deps.emit === undefined || !config.events.requestHandled) return;
    const header = g.headers['x-correlation-id'];
    deps.emit(
      requestHandled(origin, {
        correlationId: typeof header === 'string' && /^[0-9a-f-]{36}$/i.test(header) ? header : randomUUID(),
        ip: g.ip,
        start,
        end: now(),
        method: g.method,
        url: redactUrl(g.url, config.events.redactQuery),
        status,
        requestLength,
        responseLength,
        plugins: records,
      }),
    );
  };

  const own = (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && req.method === 'GET') {
      const body = metrics.render();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(body);
      return true;
    }
    if (path === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', ...deps.health() }));
      return true;
    }
    return false;
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    if (own(req, res)) return;
    const start = now();
    const g = describe(req);
    let requestLength = 0;
    req.on('data', (c: Buffer) => (requestLength += c.length));
    // Plugins run on headers alone: hold the body until the upstream takes it.
    req.pause();
    const route = match(g.url.host, g.url.pathname);
    const records: PluginRecord[] = [];
    const d = await runPlugins(route.plugins, g, records);
    if (d !== undefined) {
      const body = d.body ?? '';
      res.writeHead(d.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), via: VIA, ...d.headers });
      res.end(body);
      // The body is drained (and counted) so that the connection can be kept alive.
      let once = false;
      const done = () => {
        if (once) return;
        once = true;
        finish(g, start, d.status, requestLength, Buffer.byteLength(body), records);
      };
      // A body-less request may have ended while the plugins ran.
      if (req.readableEnded || req.destroyed) done();
      req.on('end', done);
      req.on('close', done);
      req.resume();
      return;
    }
    if (route.target === undefined) {
      const body = JSON.stringify({ errors: [{ httpcode: 404, message: 'no gate.urls pattern matches and there is no gate.default.target' }] });
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), via: VIA });
      res.end(body);
      req.resume();
      finish(g, start, 404, requestLength, Buffer.byteLength(body), records);
      return;
    }
    const r = await forwarder.forward(req, res, { target: new URL(route.target), method: g.method, path: req.url ?? '/', headers: g.headers, clientIp: g.ip, proto: g.url.protocol.slice(0, -1), host: g.url.host });
    finish(g, start, r.status, requestLength, r.responseLength, records);
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const start = now();
    socket.on('error', () => socket.destroy());
    const g = describe(req);
    const route = match(g.url.host, g.url.pathname);
    const records: PluginRecord[] = [];
    const d = await runPlugins(route.plugins, g, records);
    if (d !== undefined || route.target === undefined) {
      const status = d?.status ?? 404;
      const body = d?.body ?? '';
      let text = `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\nvia: ${VIA}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
      for (const [k, v] of Object.entries(d?.headers ?? {})) text += `${k}: ${v}\r\n`;
      socket.end(`${text}\r\n${body}`);
      finish(g, start, status, 0, Buffer.byteLength(body), records);
      return;
    }
    const r = await forwarder.upgrade(req, socket, head, { target: new URL(route.target), method: g.method, path: req.url ?? '/', headers: g.headers, clientIp: g.ip, proto: g.url.protocol.slice(0, -1), host: g.url.host });
    finish(g, start, r.status, 0, r.responseLength, records);
  };

  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    onRequest(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    onUpgrade(req, socket, head).catch(() => socket.destroy());
  });
  server.on('clientError', (_e, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      forwarder.close();
    },
  };
}
