// Outbound HTTP calls made by plugins, each recorded as a round trip of the request that caused it.
import { Agent, request } from 'undici';

export interface RoundTrip {
  /** epoch milliseconds (fractional) */
  start: number;
  end: number;
  method: string;
  url: string;
  status: number;
  requestLength: number;
  responseLength: number;
}

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface CallInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

/** A caller that records every call it makes; a failed call (no answer) is recorded with status 0 and rethrown. */
export interface HttpCaller {
  call(url: string, init?: CallInit): Promise<CallResult>;
  readonly trips: RoundTrip[];
}

export interface HttpClient {
  caller(): HttpCaller;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;

export function createHttpClient(now: () => number = () => performance.timeOrigin + performance.now()): HttpClient {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  return {
    caller() {
      const trips: RoundTrip[] = [];
      return {
        trips,
        async call(url, init = {}) {
          const method = init.method ?? 'GET';
          const start = now();
          const trip: RoundTrip = { start, end: start, method, url, status: 0, requestLength: init.body === undefined ? 0 : Buffer.byteLength(init.body), responseLength: 0 };
          trips.push(trip);
          try {
            const res = await request(url, {
              method: method as 'GET',
              headers: init.headers,
              body: init.body,
              dispatcher: agent,
              headersTimeout: init.timeoutMs ?? 5000,
              bodyTimeout: init.timeoutMs ?? 5000,
            });
            const chunks: Buffer[] = [];
            let size = 0;
            for await (const chunk of res.body) {
              size += (chunk as Buffer).length;
              if (size > MAX_BODY) {
                res.body.destroy();
                throw new Error(`${url}: answer larger than ${MAX_BODY} bytes`);
              }
              chunks.push(chunk as Buffer);
            }
            trip.status = res.statusCode;
            trip.responseLength = size;
            return { status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
          } finally {
            trip.end = now();
          }
        },
      };
    },
    close: () => agent.close(),
  };
}
