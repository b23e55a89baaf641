// The HTTP front on uWebSockets.js: routing with path parameters, body reading with a size limit,
// authentication, validation, the envelope, CORS and request metrics. Handlers never touch sockets.
import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocketBehavior, us_listen_socket } from 'uWebSockets.js';
import { ServiceError, badRequest, toServiceError } from '../errors.js';
import type { BoundCounter, BoundHistogram, Counter, Histogram, Metrics } from '../lib/metrics.js';
import type { Registry } from '../org/registry.js';
import { errorBody, envelope } from './respond.js';
import { isMutating, type Consistency, type Request, type Response, type Route } from './route.js';
import { checkDepth, checkUnicode, compileValidator, type Validator } from './validate.js';
import { uws } from './uws.js';

export interface FrontOptions {
  bodyLimit: number;
  corsOrigins: readonly string[];
  operatorKey: string | undefined;
  checkOperatorKey(presented: string): boolean;
  log(message: string): void;
}

const ORG_ID = /^[A-Za-z0-9_-]{1,64}$/;
const JSON_MAX_DEPTH = 64;

interface Compiled {
  route: Route;
  paramNames: string[];
  body?: Validator;
  query?: Validator;
  /** the route's request metrics, bound once so that no label text is built per request */
  latency: BoundHistogram;
  requests: Map<number, BoundCounter>;
}

/** Everything copied out of uWS's request before the first await: it is invalid afterwards. */
interface Incoming {
  method: string;
  url: string;
  query: string;
  params: string[];
  headers: Record<string, string>;
  ip: string;
}

const READ_HEADERS = ['service-orgid', 'service-api-key', 'service-required-consistency', 'service-required-consistency-timeout', 'service-operator-key', 'content-type', 'content-length', 'origin', 'user-agent', 'access-control-request-method'];

export function parseConsistency(headers: Record<string, string>): Consistency {
  const level = headers['service-required-consistency'] || 'local_region';
  if (level !== 'local_region' && level !== 'all_regions') {
    throw badRequest(`Service-Required-Consistency: must be local_region or all_regions, got "${level}"`);
  }
  const rawTimeout = headers['service-required-consistency-timeout'];
  let timeout = 30;
  if (rawTimeout !== undefined && rawTimeout !== '') {
    if (!/^\d{1,3}$/.test(rawTimeout) || Number(rawTimeout) < 1 || Number(rawTimeout) > 120) {
      throw badRequest(`Service-Required-Consistency-Timeout: must be an integer from 1 to 120 seconds, got "${rawTimeout}"`);
    }
    timeout = Number(rawTimeout);
  }
  return { level, timeoutMs: timeout * 1000 };
}

export class Front {
  readonly app: TemplatedApp;
  private readonly registry: Registry;
  private readonly options: FrontOptions;
  private readonly metrics: Metrics;
  private readonly requests: Counter;
  private readonly latency: Histogram;
  private listenSocket: us_listen_socket | undefined;

  constructor(registry: Registry, metrics: Metrics, options: FrontOptions) {
    this.app = uws.App();
    this.registry = registry;
    this.options = options;
    this.metrics = metrics;
    this.requests = metrics.counter('http_requests_total', 'HTTP requests by route, method and status');
    this.latency = metrics.histogram('http_request_duration_seconds', 'HTTP request latency by route and method');
  }

  /** Registers routes grouped by path; a path's other methods answer 405 and unknown paths 404. */
  mount(routes: readonly Route[]): void {
    const byPath = new Map<string, Map<string, Compiled>>();
    for (const r of routes) {
      const paramNames = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
      const compiled: Compiled = { route: r, paramNames, latency: this.latency.bind({ route: r.path, method: r.method }), requests: new Map() };
      if (r.body) compiled.body = compileValidator(r.body, 'body', false);
      if (r.query) compiled.query = compileValidator(r.query, 'query', true);
      const methods = byPath.get(r.path) ?? new Map<string, Compiled>();
      if (methods.has(r.method)) throw new Error(`route ${r.method} ${r.path} declared twice`);
      methods.set(r.method, compiled);
      byPath.set(r.path, methods);
    }
    for (const [path, methods] of byPath) {
      const pattern = path.replace(/\{([^}]+)\}/g, ':$1');
      const allow = [...methods.keys()].map((m) => m.toUpperCase()).join(', ');
      const paramCount = (methods.values().next().value as Compiled).paramNames.length;
      this.app.any(pattern, (res, req) => {
        const incoming = this.copy(res, req, paramCount);
        const compiled = methods.get(incoming.method);
        if (incoming.method === 'options') return this.preflight(res, incoming, methods);
        if (!compiled) {
          const error = new ServiceError('ERR_METHOD_NOT_ALLOWED', `method ${incoming.method.toUpperCase()} is not allowed on ${path}; allowed: ${allow}`, { headers: { Allow: allow } });
          return this.finish(res, incoming, undefined, { aborted: false }, error, performance.now());
        }
        this.serve(res, incoming, compiled);
      });
    }
    this.app.any('/*', (res, req) => {
      const incoming = this.copy(res, req, 0);
      this.finish(res, incoming, undefined, { aborted: false }, new ServiceError('ERR_NOT_FOUND', `no route for ${incoming.method.toUpperCase()} ${incoming.url}`), performance.now());
    });
  }

  /** Serves WebSocket upgrades on a path; the behaviour authenticates and answers refusals itself. */
  websocket<UserData>(path: string, behavior: WebSocketBehavior<UserData>): void {
    this.app.ws<UserData>(path, behavior);
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
        this.listenSocket = socket;
        resolve(uws.us_socket_local_port(socket));
      });
    });
  }

  /** Stops listening and closes every open connection, so that keep-alive clients learn at once. */
  close(): void {
    if (this.listenSocket) uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    // Closing the listen socket alone leaves idle keep-alive connections open, which keeps the process
    // alive and clients waiting. The native build has app.close() (not in its typings); the fallback lacks it.
    (this.app as unknown as { close?(): void }).close?.();
  }

  private copy(res: HttpResponse, req: HttpRequest, paramCount: number): Incoming {
    const headers: Record<string, string> = {};
    for (const name of READ_HEADERS) {
      const v = req.getHeader(name);
      if (v !== '') headers[name] = v;
    }
    const params: string[] = [];
    for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? '');
    return {
      method: req.getMethod(),
      url: req.getUrl(),
      query: req.getQuery() ?? '',
      params,
      headers,
      ip: Buffer.from(res.getRemoteAddressAsText()).toString(),
    };
  }

  private serve(res: HttpResponse, incoming: Incoming, compiled: Compiled): void {
    const started = performance.now();
    const state = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    const declared = Number(incoming.headers['content-length'] ?? 0);
    if (declared > this.options.bodyLimit) {
      return this.finish(res, incoming, compiled, state, this.tooLarge(), started);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let rejected = false;
    res.onData((chunk, isLast) => {
      if (rejected) return;
      size += chunk.byteLength;
      if (size > this.options.bodyLimit) {
        rejected = true;
        return this.finish(res, incoming, compiled, state, this.tooLarge(), started);
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      this.handle(compiled, incoming, raw).then(
        (response) => this.finish(res, incoming, compiled, state, response, started),
        (error: unknown) => this.finish(res, incoming, compiled, state, error, started),
      );
    });
  }

  private tooLarge(): ServiceError {
    return new ServiceError('ERR_TOO_LARGE', `request body is larger than ${this.options.bodyLimit} bytes`);
  }

  private async handle(compiled: Compiled, incoming: Incoming, raw: Buffer): Promise<Response> {
    const { route } = compiled;
    const headers = incoming.headers;
    const req = {
      params: {},
      query: {},
      body: undefined,
      headers,
      ip: incoming.ip,
      origin: headers['origin'] ?? '',
      userAgent: headers['user-agent'] ?? '',
      consistency: { level: 'local_region', timeoutMs: 30_000 },
    } as unknown as Request;

    if (route.auth === 'operator') {
      if (this.options.operatorKey === undefined) throw new ServiceError('ERR_NOT_FOUND', 'operator endpoints are disabled (SERVICE_OPERATOR_KEY is not set)');
      if (!this.options.checkOperatorKey(headers['service-operator-key'] ?? '')) throw new ServiceError('ERR_UNAUTHORIZED', 'Service-Operator-Key is missing or wrong');
    } else if (route.auth !== 'none') {
      const orgId = headers['service-orgid'];
      if (orgId === undefined) throw badRequest('Service-OrgID header is required');
      if (!ORG_ID.test(orgId)) throw badRequest('Service-OrgID: must be 1-64 characters of A-Z a-z 0-9 _ -');
      if (route.auth === 'key') {
        const auth = this.registry.authenticate(orgId, headers['service-api-key']);
        if (!auth.ok) throw auth.error;
        req.org = auth.actor;
      } else {
        const actor = this.registry.get(orgId);
        if (!actor) throw new ServiceError('ERR_NOT_FOUND', `organization ${orgId} not found`);
        req.org = actor;
      }
    }

    compiled.paramNames.forEach((name, i) => {
      try {
        req.params[name] = decodeURIComponent(incoming.params[i] ?? '');
      } catch {
        throw badRequest(`${name}: malformed percent-encoding in the path`);
      }
    });
    if (compiled.query) req.query = compiled.query(Object.fromEntries(new URLSearchParams(incoming.query))) as Record<string, unknown>;
    if (isMutating(route.method)) req.consistency = parseConsistency(headers);

    // A route whose body is optional treats an empty body as no body at all.
    if (compiled.body && !(route.bodyOptional && raw.length === 0)) {
      const contentType = headers['content-type'];
      if (contentType !== undefined && !/^application\/json\s*(;|$)/i.test(contentType)) {
        throw new ServiceError('ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, got "${contentType}"`);
      }
      if (raw.length === 0) throw badRequest('body: a JSON request body is required');
      const text = raw.toString('utf8');
      checkDepth(text, JSON_MAX_DEPTH);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw badRequest(`body: malformed JSON (${(error as Error).message})`);
      }
      checkUnicode(text, parsed);
      req.body = compiled.body(parsed);
    }
    return route.handler(req);
  }

  private preflight(res: HttpResponse, incoming: Incoming, methods: Map<string, Compiled>): void {
    const origin = incoming.headers['origin'] ?? '';
    const wanted = (incoming.headers['access-control-request-method'] ?? '').toLowerCase();
    const target = methods.get(wanted);
    res.cork(() => {
      if (target && this.corsAllowed(origin, target.route)) {
        res.writeStatus('204 No Content');
        res.writeHeader('Access-Control-Allow-Origin', origin);
        res.writeHeader('Access-Control-Allow-Methods', wanted.toUpperCase());
        res.writeHeader('Access-Control-Allow-Headers', 'Content-Type, Service-OrgID');
        res.writeHeader('Access-Control-Max-Age', '600');
        res.writeHeader('Vary', 'Origin');
        res.endWithoutBody();
      } else {
        res.writeStatus('403 Forbidden').end(errorBody(new ServiceError('ERR_FORBIDDEN', 'cross-origin request not allowed')));
      }
    });
  }

  /** End-user and public routes may be called from listed origins; management routes never cross-origin. */
  private corsAllowed(origin: string, route: Route): boolean {
    return origin !== '' && (route.auth === 'none' || route.auth === 'org') && this.options.corsOrigins.includes(origin);
  }

  private count(incoming: Incoming, compiled: Compiled | undefined, status: number, started: number): void {
    const seconds = (performance.now() - started) / 1000;
    if (!compiled) {
      this.requests.inc({ route: 'unmatched', method: incoming.method, status: String(status) });
      this.latency.observe(seconds, { route: 'unmatched', method: incoming.method });
      return;
    }
    let requests = compiled.requests.get(status);
    if (!requests) compiled.requests.set(status, (requests = this.requests.bind({ route: compiled.route.path, method: compiled.route.method, status: String(status) })));
    requests.inc();
    compiled.latency.observe(seconds);
  }

  private finish(res: HttpResponse, incoming: Incoming, compiled: Compiled | undefined, state: { aborted: boolean }, outcome: Response | unknown, started: number): void {
    const route = compiled?.route;
    let status: number;
    let body: string | undefined;
    let contentType = 'application/json';
    let headers: Record<string, string> | undefined;
    if (isResponse(outcome)) {
      status = outcome.status;
      headers = outcome.headers;
      if (outcome.text !== undefined) {
        body = outcome.text;
        contentType = outcome.contentType ?? 'text/plain; charset=utf-8';
      } else if (outcome.document !== undefined) body = JSON.stringify(outcome.document);
      else if (status !== 204) body = envelope(outcome);
    } else {
      const error = toServiceError(outcome);
      if (error.status >= 500) this.options.log(`${incoming.method.toUpperCase()} ${incoming.url}: ${String((error.cause as Error | undefined)?.stack ?? error.message)}`);
      status = error.status;
      headers = error.headers;
      body = errorBody(error);
    }
    this.count(incoming, compiled, status, started);
    if (state.aborted) return;
    state.aborted = true;
    const origin = incoming.headers['origin'];
    res.cork(() => {
      res.writeStatus(`${status} ${STATUS_CODES[status] ?? ''}`);
      if (body !== undefined) res.writeHeader('Content-Type', contentType);
      if (headers) for (const [k, v] of Object.entries(headers)) res.writeHeader(k, v);
      if (origin && route && this.corsAllowed(origin, route)) {
        res.writeHeader('Access-Control-Allow-Origin', origin);
        res.writeHeader('Vary', 'Origin');
      }
      if (body === undefined) res.endWithoutBody();
      else res.end(body);
    });
  }
}

function isResponse(x: unknown): x is Response {
  return typeof x === 'object' && x !== null && !(x instanceof Error) && typeof (x as Response).status === 'number';
}
