// The HTTP front on uWebSockets.js: routing with path parameters, body reading with a size limit,
// the route's authenticator, validation, the envelope, CORS and request metrics. Handlers never touch sockets.
import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocketBehavior, us_listen_socket } from 'uWebSockets.js';
import { ServiceError, toServiceError } from '../errors.js';
import type { BoundCounter, BoundHistogram, Counter, Histogram, Metrics } from '../lib/metrics.js';
import type { Registry } from '../org/registry.js';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE, createCorsPolicy, type CorsPolicy } from '../browser/cors.js';
import { authenticatorOf, createAuthContext, orgOf, type AuthContext } from './auth.js';
import { addressList } from '../lib/address-list.js';
import { createClientIp, type ClientIp } from './client-ip.js';
import { CONSISTENCY_TOKEN_HEADER } from '../regions/consistency-token.js';
import { readAfter, type FrontConsistency } from './consistency.js';
import { copyFields, FramingError } from './framing.js';
import { buildRequest, compileRoute, corsOf, routeHeaders, wantsClient, type Copied, type RouteParts } from './request.js';
import { errorBody, envelope, oauthErrorBody } from './respond.js';
import { isMutating, type Method, type Request, type Response, type Route } from './route.js';
import { eachField, pathOf, queryOf, uws } from './uws.js';

export interface FrontOptions {
  bodyLimit: number;
  corsOrigins: readonly string[];
  /** SERVICE_TRUSTED_PROXIES: peers whose X-Forwarded-For names the client; empty: the peer is the client */
  trustedProxies?: readonly string[];
  /** origin patterns an organization allows itself (host or *.host); none by default */
  corsOrgOrigins?: (orgId: string) => readonly string[];
  /** whether a host matches one of those patterns; required with corsOrgOrigins */
  corsHostAllows?: (patterns: readonly string[], host: string) => boolean;
  /** whether some organization's patterns admit a host: a preflight (which names no organization) is answered then */
  corsAnyOrgAllows?: (host: string) => boolean;
  operatorKey: string | undefined;
  checkOperatorKey(presented: string): boolean;
  log(message: string): void;
  /** consistency tokens: answered by writes, waited for by reads; without it the header is ignored */
  consistency?: FrontConsistency;
}


interface Compiled extends RouteParts {
  /** header names copied out of uWS for this route */
  headers: readonly string[];
  /** the authenticator's fallback headers: looked up by name only when its `unless` header was not sent */
  fallback: { unless: string; headers: readonly string[] } | undefined;
  wanted: ReadonlySet<string>;
  /** a write: its headers are always read field by field, so that a repeated or empty one is seen */
  strict: boolean;
  client: boolean;
  /** browsers may call it cross-origin */
  cors: boolean;
  /** the route's request metrics, bound once so that no label text is built per request */
  latency: BoundHistogram;
  requests: Map<number, BoundCounter>;
}

/** One request: everything copied out of uWS's request before the first await, which invalidates it. */
class Exchange implements Copied {
  /** set once answered or aborted: nothing more may be written to res */
  done = false;
  /** whether onAborted is registered; it must be before uWS's callback returns without an answer */
  watched = false;
  /** the organization the request was authenticated for, once known: per-organization CORS origins */
  orgId: string | undefined;
  /** the request as built, once it is: what it wrote is answered as a consistency token */
  request: Request | undefined;
  /** what finish settled to answer, written under cork by Front.write */
  status = 0;
  body: string | Uint8Array | undefined;
  contentType = '';
  answerHeaders: Record<string, string> | undefined;
  consistencyToken: string | undefined;
  /** a framing refusal: the connection closes after the answer */
  close = false;
  constructor(
    readonly res: HttpResponse,
    readonly method: string,
    readonly url: string,
    readonly compiled: Compiled | undefined,
    readonly params: readonly string[],
    readonly query: string,
    readonly headers: Record<string, string>,
    readonly ip: string,
    readonly started: number,
  ) {}

  watch(): void {
    if (this.watched) return;
    this.watched = true;
    this.res.onAborted(() => {
      this.done = true;
    });
  }
}

/** The TemplatedApp method that registers a route of each HTTP method (DELETE's is `del`). */
const UWS_METHODS = { get: 'get', post: 'post', put: 'put', patch: 'patch', delete: 'del' } as const satisfies Record<Method, keyof TemplatedApp>;

const NO_PARAMS: readonly string[] = [];
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;
/** Every write's answer names this header: as bytes, uWS takes it as they are instead of encoding a string each time. */
const CONSISTENCY_TOKEN_NAME = Buffer.from(CONSISTENCY_TOKEN_HEADER, 'latin1');

const statusLines = new Map<number, string>();
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) statusLines.set(status, (line = `${status} ${STATUS_CODES[status] ?? ''}`));
  return line;
}

/**
 * The headers a read looks up by name (all but the authenticator's fallback ones, looked up after them when needed),
 * and every header a pass over all fields keeps.
 */
function byNameAndWanted(r: Route): Pick<Compiled, 'headers' | 'fallback' | 'wanted'> {
  const all = routeHeaders(r);
  const fallback = authenticatorOf(r.auth).fallback;
  const later = new Set(fallback?.headers);
  return { headers: all.filter((h) => !later.has(h)), fallback: fallback && { unless: fallback.unless, headers: [...later] }, wanted: new Set(all) };
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as PromiseLike<unknown>).then === 'function';
}

export class Front {
  readonly app: TemplatedApp;
  private readonly auth: AuthContext;
  private readonly options: FrontOptions;
  private readonly cors: CorsPolicy;
  private readonly requests: Counter;
  private readonly latency: Histogram;
  private readonly clientIp: ClientIp;
  private listenSocket: us_listen_socket | undefined;
  /** the exchange whose answer res.cork is writing; one callback for every answer instead of a closure each */
  private corked: Exchange | undefined;
  private readonly writeCorked = (): void => this.write(this.corked as Exchange);

  constructor(registry: Registry, metrics: Metrics, options: FrontOptions) {
    this.app = uws.App();
    this.auth = createAuthContext(registry, options);
    this.options = options;
    this.clientIp = createClientIp(options.trustedProxies?.length ? addressList(options.trustedProxies) : undefined);
    this.cors = createCorsPolicy({
      origins: options.corsOrigins,
      ...(options.corsOrgOrigins && { orgOrigins: options.corsOrgOrigins }),
      ...(options.corsHostAllows && { hostAllows: options.corsHostAllows }),
      ...(options.corsAnyOrgAllows && { anyOrgAllows: options.corsAnyOrgAllows }),
    });
    this.requests = metrics.counter('http_requests_total', 'HTTP requests by route, method and status');
    this.latency = metrics.histogram('http_request_duration_seconds', 'HTTP request latency by route and method');
  }

  /** Registers routes grouped by path; a path's other methods answer 405 and unknown paths 404. */
  mount(routes: readonly Route[]): void {
    const byPath = new Map<string, Map<string, Compiled>>();
    for (const r of routes) {
      const compiled: Compiled = {
        ...compileRoute(r),
        ...byNameAndWanted(r),
        strict: isMutating(r.method),
        client: wantsClient(r),
        cors: corsOf(r),
        latency: this.latency.bind({ route: r.path, method: r.method }),
        requests: new Map(),
      };
      const methods = byPath.get(r.path) ?? new Map<string, Compiled>();
      if (methods.has(r.method)) throw new Error(`route ${r.method} ${r.path} declared twice`);
      methods.set(r.method, compiled);
      byPath.set(r.path, methods);
    }
    for (const [path, methods] of byPath) {
      const pattern = path.replace(/\{([^}]+)\}/g, ':$1');
      const allow = [...methods.keys()].map((m) => m.toUpperCase()).join(', ');
      // Each declared method is a uWS route of its own: uWS's router, which prefers it to `any` whatever the order,
      // picks the handler, so a request never asks for its method or looks it up. `any` takes the rest: preflights, 405.
      for (const compiled of methods.values()) {
        const method = compiled.route.method;
        this.app[UWS_METHODS[method]](pattern, (res, req) => this.serve(res, req, method, compiled));
      }
      this.app.any(pattern, (res, req) => {
        // The native build reports the method in lower case, the pure-Node fallback in upper case.
        const method = req.getMethod().toLowerCase();
        if (method === 'options') return this.preflight(res, req, methods);
        const x = new Exchange(res, method, pathOf(req), undefined, NO_PARAMS, '', NO_HEADERS, '', performance.now());
        this.finish(x, new ServiceError('ERR_METHOD_NOT_ALLOWED', `method ${method.toUpperCase()} is not allowed on ${path}; allowed: ${allow}`, { headers: { Allow: allow } }));
      });
    }
    this.app.any('/*', (res, req) => {
      const x = new Exchange(res, req.getMethod().toLowerCase(), pathOf(req), undefined, NO_PARAMS, '', NO_HEADERS, '', performance.now());
      this.finish(x, new ServiceError('ERR_NOT_FOUND', `no route for ${x.method.toUpperCase()} ${x.url}`));
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

  private serve(res: HttpResponse, req: HttpRequest, method: string, compiled: Compiled): void {
    let headers: Record<string, string> | undefined;
    let refused: unknown;
    if (!compiled.strict) {
      headers = {};
      for (const name of compiled.headers) {
        const v = req.getHeader(name);
        if (v !== '') headers[name] = v;
      }
      const fallback = compiled.fallback;
      if (fallback !== undefined && headers[fallback.unless] === undefined) {
        for (const name of fallback.headers) {
          const v = req.getHeader(name);
          if (v !== '') headers[name] = v;
        }
      }
    }
    // A body, or a write: one pass over every field (uWS's getHeader sees only the first of repeated ones).
    // A read without a body keeps the cheaper lookups by name.
    // X-Forwarded-For too: a proxy such as HAProxy adds its own field after the client's, and getHeader sees the first.
    if (headers === undefined || headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined || headers['x-forwarded-for'] !== undefined) {
      headers = {};
      try {
        copyFields(req, eachField, compiled.wanted, headers);
      } catch (error) {
        refused = error;
      }
    }
    const count = compiled.paramNames.length;
    const params = count === 0 ? NO_PARAMS : new Array<string>(count);
    for (let i = 0; i < count; i++) (params as string[])[i] = req.getParameter(i) ?? '';
    const ip = compiled.client ? this.clientIp.of(Buffer.from(res.getRemoteAddressAsText()).toString(), headers['x-forwarded-for']) : '';
    const x = new Exchange(res, method, pathOf(req), compiled, params, queryOf(req), headers, ip, performance.now());
    if (refused !== undefined) return this.finish(x, refused);

    const length = headers['content-length'];
    if (headers['transfer-encoding'] === undefined && (length === undefined || length === '' || Number(length) === 0)) {
      // No body to wait for: answer now, still inside uWS's callback when the handler is synchronous.
      return this.run(x, undefined);
    }
    x.watch();
    const limit = Math.min(compiled.route.bodyLimit ?? Infinity, this.options.bodyLimit);
    if (Number(length ?? 0) > limit) return this.finish(x, this.tooLarge(limit));
    this.readBody(x, res, limit);
  }

  /**
   * Reads the body, then runs the request. Apart from serve, so that a request without a body (most of them)
   * builds neither this closure nor the scope it keeps.
   */
  private readBody(x: Exchange, res: HttpResponse, limit: number): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let rejected = false;
    res.onData((chunk, isLast) => {
      if (rejected) return;
      size += chunk.byteLength;
      if (size > limit) {
        rejected = true;
        return this.finish(x, this.tooLarge(limit));
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      this.run(x, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
  }

  private tooLarge(limit: number): ServiceError {
    return new ServiceError('ERR_TOO_LARGE', `request body is larger than ${limit} bytes`);
  }

  /** Builds the request and calls the handler; a synchronous answer is written at once. */
  private run(x: Exchange, raw: Buffer | undefined): void {
    const compiled = x.compiled as Compiled;
    let outcome: Response | PromiseLike<Response>;
    try {
      const request = buildRequest(compiled, x, raw, this.auth);
      outcome = request instanceof Promise ? request.then((r) => this.handle(x, compiled, this.admit(x, r))) : this.handle(x, compiled, this.admit(x, request));
    } catch (error) {
      return this.finish(x, error);
    }
    if (!isThenable(outcome)) return this.finish(x, outcome);
    x.watch();
    outcome.then(
      (response) => this.finish(x, response),
      (error: unknown) => this.finish(x, error),
    );
  }

  /**
   * Notes the request's organization for its CORS headers, and refuses a cross-origin request that the
   * organization's own origins do not admit before the handler changes anything.
   */
  private admit(x: Exchange, request: Request): Request {
    const org = orgOf(request.principal);
    if (org === undefined) return request;
    x.orgId = org.id;
    const origin = x.headers['origin'];
    if (origin && x.compiled?.cors && this.cors.refuses(origin, org.id)) throw new ServiceError('ERR_FORBIDDEN', `cross-origin requests from ${origin} are not allowed for this organization`);
    return request;
  }

  /** Runs the handler, once a consistency token the request carries has been applied here. */
  private handle(x: Exchange, compiled: Compiled, request: Request): Response | PromiseLike<Response> {
    x.request = request;
    const ready = this.options.consistency ? readAfter(this.options.consistency, request) : undefined;
    return ready ? ready.then(() => compiled.route.handler(request)) : compiled.route.handler(request);
  }

  private preflight(res: HttpResponse, req: HttpRequest, methods: Map<string, Compiled>): void {
    const origin = req.getHeader('origin');
    const wanted = req.getHeader('access-control-request-method').toLowerCase();
    const target = methods.get(wanted);
    res.cork(() => {
      if (target && target.cors && this.cors.preflight(origin)) {
        const allowed = [...methods].filter(([, c]) => c.cors).map(([m]) => m.toUpperCase()).join(', ');
        res.writeStatus('204 No Content');
        res.writeHeader('Access-Control-Allow-Origin', origin);
        res.writeHeader('Access-Control-Allow-Methods', allowed);
        res.writeHeader('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
        res.writeHeader('Access-Control-Max-Age', CORS_MAX_AGE);
        res.writeHeader('Vary', 'Origin');
        res.endWithoutBody();
      } else {
        res.writeStatus('403 Forbidden').end(errorBody(new ServiceError('ERR_FORBIDDEN', 'cross-origin request not allowed')));
      }
    });
  }


  private count(x: Exchange, status: number): void {
    const seconds = (performance.now() - x.started) / 1000;
    const compiled = x.compiled;
    if (!compiled) {
      this.requests.inc({ route: 'unmatched', method: x.method, status: String(status) });
      this.latency.observe(seconds, { route: 'unmatched', method: x.method });
      return;
    }
    let requests = compiled.requests.get(status);
    if (!requests) compiled.requests.set(status, (requests = this.requests.bind({ route: compiled.route.path, method: compiled.route.method, status: String(status) })));
    requests.inc();
    compiled.latency.observe(seconds);
  }

  private finish(x: Exchange, outcome: Response | unknown): void {
    let status: number;
    let body: string | Uint8Array | undefined;
    let contentType = 'application/json';
    let headers: Record<string, string> | undefined;
    if (isResponse(outcome)) {
      status = outcome.status;
      headers = outcome.headers;
      if (outcome.bytes !== undefined) {
        body = outcome.bytes;
        contentType = outcome.contentType ?? 'application/octet-stream';
      } else if (outcome.text !== undefined) {
        body = outcome.text;
        contentType = outcome.contentType ?? 'text/plain; charset=utf-8';
      } else if (outcome.document !== undefined) body = JSON.stringify(outcome.document);
      else if (status !== 204) body = envelope(outcome);
    } else {
      const error = toServiceError(outcome);
      if (error.status >= 500) this.options.log(`${x.method.toUpperCase()} ${x.url}: ${String((error.cause as Error | undefined)?.stack ?? error.message)}`);
      status = error.status;
      headers = error.headers;
      // A write sent to a process that does not hold the organization's lease: the same request, at the holder.
      if (error.code === 'ERR_TEMPORARY_REDIRECT' && headers?.['Location']) headers = { ...headers, Location: `${headers['Location'].replace(/\/$/, '')}${x.url}${x.query ? `?${x.query}` : ''}` };
      body = x.compiled?.route.errorFormat === 'oauth' ? oauthErrorBody(error) : errorBody(error);
    }
    const written = x.request?.consistency.written;
    // Written beside the others rather than merged into a copy of them: a write's answer builds no object for it.
    const consistencyToken = written !== undefined && this.options.consistency && (status < 300 || status === 408) ? this.options.consistency.tokens.mint(written.org, written.offset) : undefined;
    this.count(x, status);
    if (x.done) return;
    x.done = true;
    x.status = status;
    x.body = body;
    x.contentType = contentType;
    x.answerHeaders = headers;
    x.consistencyToken = consistencyToken;
    x.close = outcome instanceof FramingError;
    this.corked = x;
    try {
      x.res.cork(this.writeCorked);
    } finally {
      this.corked = undefined;
    }
  }

  /** Writes the answer of the exchange being corked (cork calls it at once, so one slot serves every request). */
  private write(x: Exchange): void {
    const { status, body, contentType, answerHeaders: headers, consistencyToken, close } = x;
    const res = x.res;
    const origin = x.headers['origin'];
    res.writeStatus(statusLine(status));
    if (body !== undefined) res.writeHeader('Content-Type', contentType);
    if (headers) for (const k in headers) res.writeHeader(k, headers[k] as string);
    if (consistencyToken !== undefined) res.writeHeader(CONSISTENCY_TOKEN_NAME, consistencyToken);
    if (origin && x.compiled?.cors && this.cors.allows(origin, x.orgId)) {
      res.writeHeader('Access-Control-Allow-Origin', origin);
      res.writeHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
      res.writeHeader('Vary', 'Origin');
    }
    if (body === undefined) res.endWithoutBody();
    // After a framing refusal the rest of the connection's bytes cannot be told apart: close it
    // (uWS writes the Connection: close header).
    else res.end(body, close);
  }
}

function isResponse(x: unknown): x is Response {
  return typeof x === 'object' && x !== null && !(x instanceof Error) && typeof (x as Response).status === 'number';
}
