// Gate's front: node:http server, the plugin pipeline of the matched URL, forwarding, one GateRequestHandled
// per request, /metrics and /health.
import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { Metrics } from '../lib/metrics.js';
import type { GateConfig } from './config.js';
import { plainHref, redactUrl, RequestHandledLater, type PluginRecord, type QueuedEvent } from './events.js';
import { createMatcher, type Route } from './match.js';
import { createForwarder, VIA } from './proxy.js';
import type { Decision, GateRequest, Plugin } from './plugins/types.js';
import type { HttpClient } from './round-trip.js';

export interface GateServerDeps {
  config: GateConfig;
  build: (p: GateConfig['plugins'][number]) => Plugin;
  http: HttpClient;
  metrics: Metrics;
  /** where GateRequestHandled events go (undefined: events off) */
  emit?: (event: QueuedEvent) => void;
  health: () => Record<string, unknown>;
  now?: () => number;
}

export interface GateServer {
  port: number;
  close(): Promise<void>;
}

type Answer = Extract<Decision, { action: 'answer' }>;

const wallNow = () => performance.timeOrigin + performance.now();
const ROUTE_CACHE = 4096;

function parseUrl(proto: string, host: string, rawUrl: string): URL {
  try {
    return new URL(`${proto}://${host}${rawUrl}`);
  } catch {
    return new URL(`${proto}://invalid${rawUrl.startsWith('/') ? rawUrl : '/'}`);
  }
}

/** A request as plugins see it; the URL is parsed only when something asks for it (events, a plugin). */
class Incoming implements GateRequest {
  claims?: Record<string, unknown>;
  #url: URL | undefined;
  constructor(
    readonly method: string,
    readonly proto: string,
    readonly host: string,
    readonly rawUrl: string,
    readonly headers: IncomingHttpHeaders,
    readonly ip: string,
  ) {}
  get url(): URL {
    return (this.#url ??= parseUrl(this.proto, this.host, this.rawUrl));
  }
  /** the URL as received, as URL.href writes it */
  get href(): string {
    return plainHref(this.proto, this.host, this.rawUrl) ?? this.url.href;
  }
}

export async function startGateServer(deps: GateServerDeps): Promise<GateServer> {
  const { config, metrics } = deps;
  const now = deps.now ?? wallNow;
  const match = createMatcher(config, deps.build);
  const forwarder = createForwarder(config.upstreamTimeoutMs);
  const requests = metrics.counter('gate_requests_total', 'Requests handled, by status sent to the client');
  const decisions = metrics.counter('gate_plugin_decisions_total', 'Plugin outcomes, by plugin id, type and decision');
  const pluginLatency = metrics.histogram('gate_plugin_duration_seconds', 'Time spent in each plugin, round trips included');
  const origin = deps.config.service ? { orgId: deps.config.service.orgId } : { orgId: '' };

  // Routes by (host, raw path): the URL is parsed (and normalized: case, default port, dot segments) once per
  // distinct pair; a full cache starts over rather than tracking recency.
  const routes = new Map<string, Route<Plugin>>();
  const targets = new Map<string, URL>();
  const routeOf = (host: string, rawUrl: string, proto: string): Route<Plugin> => {
    const q = rawUrl.indexOf('?');
    const key = `${host} ${q < 0 ? rawUrl : rawUrl.slice(0, q)}`;
    let route = routes.get(key);
    if (route === undefined) {
      const url = parseUrl(proto, host, rawUrl);
      route = match(url.host, url.pathname);
      if (routes.size >= ROUTE_CACHE) routes.clear();
      routes.set(key, route);
    }
    return route;
  };
  const targetOf = (target: string): URL => {
    let url = targets.get(target);
    if (url === undefined) targets.set(target, (url = new URL(target)));
    return url;
  };

  const describe = (req: IncomingMessage): Incoming => {
    const headers = req.headers;
    const host = headers.host ?? `${config.host}:${config.port}`;
    let proto = 'http';
    let ip = req.socket.remoteAddress ?? '';
    if (config.trustProxy) {
      // The peer is the one trusted proxy: the hop it appended, the rightmost, is the client it saw. Entries to
      // its left are whatever the client wrote, so trusting the leftmost let any caller choose its address.
      const xfp = headers['x-forwarded-proto'];
      if (typeof xfp === 'string') proto = xfp.slice(xfp.lastIndexOf(',') + 1).trim();
      const xff = headers['x-forwarded-for'];
      if (typeof xff === 'string') ip = xff.slice(xff.lastIndexOf(',') + 1).trim() || ip;
    }
    if (ip.startsWith('::ffff:')) ip = ip.slice(7);
    // Only validate-jwt's forward_person_id may set it: a caller's own would be taken upstream for a verified person.
    delete headers['service-personid'];
    // req.headers is our own copy already (Node builds it per request): plugins rewrite it in place.
    return new Incoming(req.method ?? 'GET', proto, host, req.url ?? '/', headers, ip);
  };

  const failed = (p: Plugin, error: unknown): Answer => ({
    action: 'answer',
    status: 502,
    body: JSON.stringify({ errors: [{ httpcode: 502, message: `${p.config.type}: ${(error as Error).message}` }] }),
    metadata: { decision: 'error', reason: (error as Error).message },
  });

  /** Records a plugin's decision; the answer when it answers, undefined when the chain goes on. */
  const settle = (p: Plugin, trips: PluginRecord['trips'], start: number, d: Decision, records: PluginRecord[]): Answer | undefined => {
    const end = now();
    records.push({ index: p.config.index, id: p.config.id, type: p.config.type, start, end, metadata: d.metadata, trips });
    decisions.inc({ plugin_id: p.config.id, plugin_type: p.config.type, decision: d.action === 'continue' ? 'continue' : String(d.status) });
    pluginLatency.observe((end - start) / 1000, { plugin_type: p.config.type });
    return d.action === 'answer' ? d : undefined;
  };

  /** The plugins from `from` on, in order: synchronous while their decisions are (cache hits), a promise from the first that is not. */
  const runPlugins = (plugins: Plugin[], g: GateRequest, records: PluginRecord[], from = 0): Answer | undefined | Promise<Answer | undefined> => {
    for (let i = from; i < plugins.length; i++) {
      const p = plugins[i]!;
      const caller = deps.http.caller();
      const start = now();
      let d: Decision | Promise<Decision>;
      try {
        d = p.handle(g, caller);
      } catch (error) {
        d = failed(p, error);
      }
      if (d instanceof Promise) {
        return d.then(
          (x) => settle(p, caller.trips, start, x, records) ?? runPlugins(plugins, g, records, i + 1),
          (error: unknown) => settle(p, caller.trips, start, failed(p, error), records),
        );
      }
      const answer = settle(p, caller.trips, start, d, records);
      if (answer !== undefined) return answer;
    }
    return undefined;
  };

  // One bound series per status seen, so that counting a request writes no label text.
  const byStatus = new Map<number, { inc(): void }>();
  const finish = (g: Incoming, start: number, status: number, requestLength: number, responseLength: number, records: PluginRecord[]) => {
    let counter = byStatus.get(status);
    if (counter === undefined) byStatus.set(status, (counter = requests.bind({ status: String(status) })));
    counter.inc();
    if (deps.emit === undefined || !config.events.requestHandled) return;
    const header = g.headers['x-correlation-id'];
    // The event's JSON (and the URL's parsing) waits for its batch to be sent.
    deps.emit(
      new RequestHandledLater(
        origin,
        {
          correlationId: typeof header === 'string' && /^[0-9a-f-]{36}$/i.test(header) ? header : randomUUID(),
          ip: g.ip,
          start,
          end: now(),
          method: g.method,
          status,
          requestLength,
          responseLength,
          plugins: records,
        },
        () => (config.events.redactQuery.length === 0 ? g.href : redactUrl(g.url, config.events.redactQuery)),
      ),
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

  const answerPlugin = (req: IncomingMessage, res: ServerResponse, g: Incoming, start: number, d: Answer, records: PluginRecord[], counted: { n: number }) => {
    const body = d.body ?? '';
    res.writeHead(d.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), via: VIA, ...d.headers });
    res.end(body);
    // The body is drained (and counted) so that the connection can be kept alive.
    let once = false;
    const done = () => {
      if (once) return;
      once = true;
      finish(g, start, d.status, counted.n, Buffer.byteLength(body), records);
    };
    // A body-less request may have ended while the plugins ran.
    if (req.readableEnded || req.destroyed) done();
    req.on('end', done);
    req.on('close', done);
    req.resume();
  };

  const forward = (req: IncomingMessage, res: ServerResponse, g: Incoming, start: number, target: string | undefined, records: PluginRecord[], counted: { n: number }) => {
    if (target === undefined) {
      const body = JSON.stringify({ errors: [{ httpcode: 404, message: 'no gate.urls pattern matches and there is no gate.default.target' }] });
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), via: VIA });
      res.end(body);
      req.resume();
      finish(g, start, 404, counted.n, Buffer.byteLength(body), records);
      return;
    }
    forwarder.forward(req, res, { target: targetOf(target), method: g.method, path: g.rawUrl, headers: g.headers, clientIp: g.ip, proto: g.proto, host: g.host }, (r) => finish(g, start, r.status, counted.n, r.responseLength, records));
  };

  const fail = (res: ServerResponse) => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      handleRequest(req, res);
    } catch {
      fail(res);
    }
  };

  const handleRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (own(req, res)) return;
    const start = now();
    const g = describe(req);
    // Body bytes, counted as they pass (only requests that have a body need the listener).
    // The listener is paused at once: the body waits until the upstream takes it (plugins run on headers alone).
    const counted = { n: 0 };
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) {
      req.on('data', (c: Buffer) => (counted.n += c.length));
      req.pause();
    }
    const route = routeOf(g.host, g.rawUrl, g.proto);
    const records: PluginRecord[] = [];
    if (route.plugins.length === 0) {
      forward(req, res, g, start, route.target, records, counted);
      return;
    }
    const next = (d: Answer | undefined) => (d !== undefined ? answerPlugin(req, res, g, start, d, records, counted) : forward(req, res, g, start, route.target, records, counted));
    const d = runPlugins(route.plugins, g, records);
    if (!(d instanceof Promise)) return next(d);
    d.then(next).catch(() => fail(res));
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const start = now();
    socket.on('error', () => socket.destroy());
    const g = describe(req);
    const route = routeOf(g.host, g.rawUrl, g.proto);
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
    const r = await forwarder.upgrade(req, socket, head, { target: targetOf(route.target), method: g.method, path: g.rawUrl, headers: g.headers, clientIp: g.ip, proto: g.proto, host: g.host });
    finish(g, start, r.status, 0, r.responseLength, records);
  };

  const server = http.createServer({ keepAliveTimeout: 65_000 }, onRequest);
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
