// WS /events: authenticates and parses the subscription at the upgrade (a refusal is an HTTP error with the
// envelope, as the same call over HTTP would get), then adapts the uWebSockets.js socket to the event stream.
import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, WebSocket, WebSocketBehavior, us_socket_context_t } from 'uWebSockets.js';
import { EVENT_MESSAGE_NAMES } from '../events/catalog.js';
import type { EventLog } from '../events/log.js';
import { CLOSE_GOING_AWAY, CLOSE_KEY_ROTATED, CLOSE_SLOW_CONSUMER, type EventStream, type Sink, type StreamFormat, type Subscription, type SubscriptionRequest } from '../events/stream.js';
import { ServiceError, badRequest } from '../errors.js';
import type { Registry } from '../org/registry.js';
import { ORG_ID } from './auth.js';
import { openToken, type FrontConsistency } from './consistency.js';
import { errorResponse } from './openapi.js';
import { parseConsistency } from './request.js';
import { errorBody } from './respond.js';
import { queryOf, uws } from './uws.js';

export interface EventSocketDeps {
  registry: Registry;
  stream: EventStream;
  log: EventLog;
  /** The app's native publish: queues a frame on every socket subscribed to the topic. */
  publish(topic: string, frame: Uint8Array, binary: boolean): void;
  /** a consistency token holds the upgrade until this region has applied it */
  consistency?: FrontConsistency;
  /** checks `?access_token=` instead of an API key (the console's administrators); without it the parameter is refused */
  accessToken?(orgId: string, token: string): Promise<unknown>;
}

interface SocketData {
  request: SubscriptionRequest;
  subscription?: Subscription;
  /** an access token's check still running: the subscription starts once it passes */
  admitted?: Promise<unknown>;
  closed?: boolean;
}

/** An access token refused after the upgrade: 4001 not a valid console token, 4003 lacking console.read. */
export const CLOSE_TOKEN_REFUSED = 4001;
export const CLOSE_TOKEN_FORBIDDEN = 4003;

const KNOWN_EVENTS = new Set(EVENT_MESSAGE_NAMES);

/**
 * WS /events as an OpenAPI operation: OpenAPI has no WebSocket, so it is the upgrade request and its
 * answers, with the frames and close codes told in the description.
 */
export const EVENTS_OPERATION = {
  summary: 'Subscribe to the organization\'s events over a WebSocket',
  description:
    'Upgrade to a WebSocket. Each text frame (format=json) is {"offset", "event"} with the event in proto3 JSON; each binary frame (format=protobuf) ' +
    'is a StreamFrame message of events.proto. Events come in offset order, replay from `from` joining live delivery without a gap or a duplicate. ' +
    `Close codes: ${CLOSE_SLOW_CONSUMER} the subscriber read too slowly, ${CLOSE_KEY_ROTATED} the API key was rotated or the organization deleted, ${CLOSE_GOING_AWAY} the service is stopping. ` +
    `An access_token is checked just after the upgrade, before any event is sent: refused, the socket closes with ${CLOSE_TOKEN_REFUSED} (not a valid console access token) or ${CLOSE_TOKEN_FORBIDDEN} (its administrator lacks console.read), the reason saying why.`,
  tags: ['events'],
  operationId: 'getEventsWebSocket',
  security: [{ orgId: [], apiKey: [] }],
  parameters: [
    { name: 'types', in: 'query', required: false, schema: { type: 'string' }, description: 'comma-separated event names, e.g. PersonCreated_v1,TokenMinted_v1; default all' },
    { name: 'from', in: 'query', required: false, schema: { type: 'integer', minimum: 1 }, description: 'the first event offset to send; default: only events from now on' },
    { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'protobuf'], default: 'json' } },
    { name: 'org_id', in: 'query', required: false, schema: { type: 'string' }, description: 'instead of Service-OrgID, for clients that cannot set headers' },
    { name: 'api_key', in: 'query', required: false, schema: { type: 'string' }, description: 'instead of Service-API-Key, for clients that cannot set headers' },
    { name: 'access_token', in: 'query', required: false, schema: { type: 'string' }, description: "instead of an API key: a console access token whose administrator holds console.read (when the console is on)" },
    {
      name: 'consistency_token',
      in: 'query',
      required: false,
      schema: { type: 'string' },
      description: 'instead of the Service-Consistency-Token header: the upgrade is answered once this region has applied that write (408 past Service-Required-Consistency-Timeout)',
    },
  ],
  responses: {
    '101': {
      description: 'Switching Protocols',
      headers: {
        'Service-Events-Oldest-Offset': { schema: { type: 'integer' }, description: 'the oldest event offset still stored' },
        'Service-Events-Head-Offset': { schema: { type: 'integer' }, description: 'the newest durable event offset' },
      },
    },
    ...Object.fromEntries([400, 401, 404].map((status) => [String(status), errorResponse(status)])),
  },
};

/** The query parameters the document lists are the ones accepted. */
const QUERY_PARAMS = new Set(EVENTS_OPERATION.parameters.map((p) => p.name));

/** The subscription a request asks for, or the ServiceError the same call would get over HTTP. */
export function parseSubscription(registry: Registry, headers: Record<string, string>, rawQuery: string, tokens = false): SubscriptionRequest & { accessToken?: string } {
  const query = new URLSearchParams(rawQuery);
  for (const name of query.keys()) if (!QUERY_PARAMS.has(name)) throw badRequest(`${name}: unknown query parameter`);
  // Browsers cannot set headers on a WebSocket, so the credentials may come in the query instead.
  const orgId = headers['service-orgid'] ?? query.get('org_id') ?? undefined;
  if (orgId === undefined || orgId === '') throw badRequest('Service-OrgID header (or org_id query parameter) is required');
  if (!ORG_ID.test(orgId)) throw badRequest('Service-OrgID: must be 1-64 characters of A-Z a-z 0-9 _ -');
  const key = headers['service-api-key'] ?? query.get('api_key') ?? undefined;
  const accessToken = query.get('access_token') ?? undefined;
  if (accessToken !== undefined && !tokens) throw badRequest('access_token: console access tokens are not accepted (SERVICE_CONSOLE=0)');
  // An access token is checked by the caller, asynchronously; an API key, when given, wins as on HTTP routes.
  if (accessToken === undefined || key !== undefined) {
    const auth = registry.authenticate(orgId, key);
    if (!auth.ok) throw auth.error;
  } else if (!registry.get(orgId)) {
    throw new ServiceError('ERR_NOT_FOUND', `organization ${orgId} not found`);
  }

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
  const request = { org: orgId, types, from, format: format as StreamFormat };
  return accessToken === undefined || key !== undefined ? request : { ...request, accessToken };
}

/** The wait a consistency token (header or ?consistency_token=) asks for, or undefined without one. */
function readyFor(consistency: FrontConsistency | undefined, org: string, headers: Record<string, string>, rawQuery: string): Promise<void> | undefined {
  const token = headers['service-consistency-token'] ?? new URLSearchParams(rawQuery).get('consistency_token') ?? undefined;
  if (token === undefined || !consistency) return undefined;
  const mark = openToken(consistency.tokens, token, org);
  return consistency.reads.wait(mark.org, mark.offset, parseConsistency(headers).timeoutMs);
}

function refuse(res: HttpResponse, error: ServiceError): void {
  res.cork(() => {
    res.writeStatus(`${error.status} ${STATUS_CODES[error.status] ?? ''}`);
    res.writeHeader('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(error.headers ?? {})) res.writeHeader(k, v);
    res.end(errorBody(error));
  });
}

function sinkOf(ws: WebSocket<SocketData>, publish: EventSocketDeps['publish']): Sink {
  return {
    send: (frame, binary) => void ws.send(frame, binary, false),
    buffered: () => ws.getBufferedAmount(),
    cork: (fn) => void ws.cork(fn),
    close: (code, reason) => ws.end(code, reason),
    join: (topic) => void ws.subscribe(topic),
    leave: (topic) => void ws.unsubscribe(topic),
    broadcast: publish,
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
      for (const name of ['service-orgid', 'service-api-key', 'service-consistency-token', 'service-required-consistency-timeout']) {
        const v = req.getHeader(name);
        if (v !== '') headers[name] = v;
      }
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const rawQuery = queryOf(req);
      let request: SubscriptionRequest;
      let ready: Promise<void> | undefined;
      let admitted: Promise<unknown> | undefined;
      try {
        const { accessToken, ...parsed } = parseSubscription(deps.registry, headers, rawQuery, deps.accessToken !== undefined);
        request = parsed;
        ready = readyFor(deps.consistency, request.org, headers, rawQuery);
        // Checked while the upgrade goes on, not before it: an upgrade answered later than its request, after
        // a check that resolves on another turn of the loop, is at times dropped by uWebSockets.js (1006).
        if (accessToken !== undefined && deps.accessToken) {
          admitted = deps.accessToken(request.org, accessToken);
          // Answered in open(); until then a refusal must not count as unhandled (the upgrade may fail first).
          admitted.catch(() => {});
        }
      } catch (error) {
        if (error instanceof ServiceError) return refuse(res, error);
        throw error;
      }
      const accept = () => {
        const head = deps.log.head(request.org);
        res.cork(() => {
          res.writeStatus('101 Switching Protocols');
          // What the log holds right now: a client asking for an older `from` learns here what it missed.
          res.writeHeader('Service-Events-Oldest-Offset', String(deps.log.oldest(request.org)));
          res.writeHeader('Service-Events-Head-Offset', String(head));
          res.upgrade<SocketData>(admitted ? { request, admitted } : { request }, key, protocol, extensions, context);
        });
      };
      if (!ready) return accept();
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      ready.then(
        () => void (aborted || accept()),
        (error: unknown) => void (aborted || refuse(res, error instanceof ServiceError ? error : new ServiceError('ERR_INTERNAL', String(error)))),
      );
    },

    open(ws) {
      const data = ws.getUserData();
      if (!data.admitted) {
        data.subscription = deps.stream.subscribe(data.request, sinkOf(ws, deps.publish));
        return;
      }
      data.admitted.then(
        () => {
          if (!data.closed) data.subscription = deps.stream.subscribe(data.request, sinkOf(ws, deps.publish));
        },
        (error: unknown) => {
          if (data.closed) return;
          const refused = error instanceof ServiceError ? error : new ServiceError('ERR_INTERNAL', String(error));
          ws.end(refused.status === 403 ? CLOSE_TOKEN_FORBIDDEN : CLOSE_TOKEN_REFUSED, refused.message.slice(0, 120));
        },
      );
    },

    drain(ws) {
      ws.getUserData().subscription?.drained();
    },

    close(ws) {
      const data = ws.getUserData();
      data.closed = true;
      data.subscription?.closed();
    },
  };
}
