// WS /events: authenticates and parses the subscription at the upgrade (a refusal is an HTTP error with the
// envelope, as the same call over HTTP would get), then adapts the uWebSockets.js socket to the event stream.
import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, WebSocket, WebSocketBehavior, us_socket_context_t } from 'uWebSockets.js';
import { EVENT_MESSAGE_NAMES } from '../events/catalog.js';
import type { EventLog } from '../events/log.js';
import type { EventStream, Sink, StreamFormat, Subscription, SubscriptionRequest } from '../events/stream.js';
import { ServiceError, badRequest } from '../errors.js';
import type { Registry } from '../org/registry.js';
import { errorBody } from './respond.js';
import { queryOf, uws } from './uws.js';

export interface EventSocketDeps {
  registry: Registry;
  stream: EventStream;
  log: EventLog;
}

interface SocketData {
  request: SubscriptionRequest;
  subscription?: Subscription;
}

const ORG_ID = /^[A-Za-z0-9_-]{1,64}$/;
const QUERY_PARAMS = new Set(['org_id', 'api_key', 'types', 'from', 'format']);
const KNOWN_EVENTS = new Set(EVENT_MESSAGE_NAMES);

/** The subscription a request asks for, or the ServiceError the same call would get over HTTP. */
export function parseSubscription(registry: Registry, headers: Record<string, string>, rawQuery: string): SubscriptionRequest {
  const query = new URLSearchParams(rawQuery);
  for (const name of query.keys()) if (!QUERY_PARAMS.has(name)) throw badRequest(`${name}: unknown query parameter`);
  // Browsers cannot set headers on a WebSocket, so the credentials may come in the query instead.
  const orgId = headers['service-orgid'] ?? query.get('org_id') ?? undefined;
  if (orgId === undefined || orgId === '') throw badRequest('Service-OrgID header (or org_id query parameter) is required');
  if (!ORG_ID.test(orgId)) throw badRequest('Service-OrgID: must be 1-64 characters of A-Z a-z 0-9 _ -');
  const auth = registry.authenticate(orgId, headers['service-api-key'] ?? query.get('api_key') ?? undefined);
  if (!auth.ok) throw auth.error;

  let types: Set<string> | undefined;
  const rawTypes = query.get('types');
  if (rawTypes !== null) {
    types = new Set(rawTypes.split(',').map((t) => t.trim()).filter((t) => t !== ''));
    if (types.size === 0) throw badRequest('types: must name at least one event, e.g. PersonCreated_v1');
    for (const t of types) if (!KNOWN_EVENTS.has(t)) throw badRequest(`types: unknown event "${t.slice(0, 100)}"`);
  }

  let from: number | undefined;
  const rawFrom = query.get('from');
  if (rawFrom !== null) {
    from = /^\d{1,16}$/.test(rawFrom) ? Number(rawFrom) : NaN;
    if (!Number.isSafeInteger(from) || from < 1) throw badRequest(`from: must be an event offset, an integer from 1, got "${rawFrom.slice(0, 40)}"`);
  }

  const format = query.get('format') ?? 'json';
  if (format !== 'json' && format !== 'protobuf') throw badRequest(`format: must be json or protobuf, got "${format.slice(0, 40)}"`);
  return { org: orgId, types, from, format: format as StreamFormat };
}

function refuse(res: HttpResponse, error: ServiceError): void {
  res.cork(() => {
    res.writeStatus(`${error.status} ${STATUS_CODES[error.status] ?? ''}`);
    res.writeHeader('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(error.headers ?? {})) res.writeHeader(k, v);
    res.end(errorBody(error));
  });
}

function sinkOf(ws: WebSocket<SocketData>): Sink {
  return {
    send: (frame, binary) => void ws.send(frame, binary, false),
    buffered: () => ws.getBufferedAmount(),
    cork: (fn) => void ws.cork(fn),
    close: (code, reason) => ws.end(code, reason),
  };
}

export function eventSocketBehavior(deps: EventSocketDeps): WebSocketBehavior<SocketData> {
  return {
    // The stream bounds each subscriber's buffer itself and cuts a slow one off with a close code; uWS's own
    // limit would silently drop frames instead, so it is off (0).
    maxBackpressure: 0,
    maxPayloadLength: 4 * 1024,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    compression: uws.DISABLED,

    upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t) {
      // Everything is read from req now: it is invalid once this handler returns.
      const headers: Record<string, string> = {};
      for (const name of ['service-orgid', 'service-api-key']) {
        const v = req.getHeader(name);
        if (v !== '') headers[name] = v;
      }
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      let request: SubscriptionRequest;
      try {
        request = parseSubscription(deps.registry, headers, queryOf(req));
      } catch (error) {
        if (error instanceof ServiceError) return refuse(res, error);
        throw error;
      }
      const head = deps.log.head(request.org);
      res.cork(() => {
        res.writeStatus('101 Switching Protocols');
        // What the log holds right now: a client asking for an older `from` learns here what it missed.
        res.writeHeader('Service-Events-Oldest-Offset', String(deps.log.oldest(request.org)));
        res.writeHeader('Service-Events-Head-Offset', String(head));
        res.upgrade<SocketData>({ request }, key, protocol, extensions, context);
      });
    },

    open(ws) {
      const data = ws.getUserData();
      data.subscription = deps.stream.subscribe(data.request, sinkOf(ws));
    },

    drain(ws) {
      ws.getUserData().subscription?.drained();
    },

    close(ws) {
      ws.getUserData().subscription?.closed();
    },
  };
}
