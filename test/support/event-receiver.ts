// A real event webhook receiver on loopback: it verifies every call as the specification tells receivers to
// (kid, the organization's verification key set, ES256, aud, its own target_url), records it, and answers as
// the test tells it to: a status, or no answer at all (a hang, until the caller gives up).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';

/** The delivery token's claims, exactly the seed's. */
export interface EventDelivery {
  aud: string;
  exp: number;
  iat: number;
  iss: string;
  jti: string;
  sub: string;
  target_url: string;
  trigger_content: Record<string, any>;
  trigger_name: string;
  trigger_type: string;
  webhook_id: string;
}

export interface ReceivedCall {
  headers: IncomingHttpHeaders;
  /** set when the token verified */
  delivery?: EventDelivery;
  /** why verification failed */
  rejected?: string;
  /** what the receiver answered; 'hang' when it never did */
  answer: number | 'hang';
  /** for a hanging call: set once the caller closed the connection (gave up or was stopped) */
  closedByCaller?: boolean;
}

export type Answer = number | 'hang';

export interface EventReceiver {
  url: string;
  calls: ReceivedCall[];
  /** decides each verified call's answer; 200 by default */
  answer: (delivery: EventDelivery, call: number) => Answer;
  /** the event_id of each call answered 2xx, in arrival order */
  deliveredIds(): string[];
  deliveries(): EventDelivery[];
  /** resolves once pred holds (checked on every call and every 20 ms); rejects after timeoutMs (30 s: it only bounds "eventually") */
  waitUntil(pred: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const CLAIMS = ['aud', 'exp', 'iat', 'iss', 'jti', 'sub', 'target_url', 'trigger_content', 'trigger_name', 'trigger_type', 'webhook_id'];

export const eventId = (d: EventDelivery): string => d.trigger_content['event_metadata']['event_id'];

/** jwksUrl is read for every key fetch, so the receiver keeps working when the service restarts on a new port. */
export async function startEventReceiver(options: { orgId: string; jwksUrl: () => string; path?: string }): Promise<EventReceiver> {
  let keys: JWK[] = [];
  const hanging = new Set<ServerResponse>();
  const calls: ReceivedCall[] = [];

  async function keyFor(kid: string): Promise<JWK> {
    let key = keys.find((k) => k.kid === kid);
    if (!key) {
      const res = await fetch(options.jwksUrl(), { headers: { 'Service-OrgID': options.orgId } });
      keys = ((await res.json()) as { keys: JWK[] }).keys;
      key = keys.find((k) => k.kid === kid);
    }
    if (!key) throw new Error(`no verification key with kid ${kid}`);
    return key;
  }

  async function verify(token: string, ownUrl: string): Promise<EventDelivery> {
    const { kid, alg } = decodeProtectedHeader(token);
    if (alg !== 'ES256' || !kid) throw new Error(`header: alg ${alg}, kid ${kid}`);
    const { payload } = await jwtVerify(token, await importJWK(await keyFor(kid), 'ES256'), { algorithms: ['ES256'], audience: options.orgId });
    if (payload['target_url'] !== ownUrl) throw new Error(`target_url ${String(payload['target_url'])} is not ${ownUrl}`);
    const names = Object.keys(payload).sort();
    if (names.join() !== CLAIMS.join()) throw new Error(`claims ${names.join()}`);
    return payload as unknown as EventDelivery;
  }

  let url = '';
  const waiters = new Set<() => void>();
  const receiver: EventReceiver = {
    url,
    calls,
    answer: () => 200,
    deliveries: () => calls.filter((c) => c.delivery && typeof c.answer === 'number' && c.answer < 300).map((c) => c.delivery as EventDelivery),
    deliveredIds: () => receiver.deliveries().map(eventId),
    waitUntil(pred, what, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          let held: boolean;
          try {
            held = pred();
          } catch (error) {
            done();
            return reject(error as Error);
          }
          if (!held) return;
          done();
          resolve();
        };
        const poll = setInterval(check, 20);
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${calls.length} calls: ${calls.map((c) => c.rejected ?? c.answer).join(' ')}`));
        }, timeoutMs);
        const done = () => {
          clearInterval(poll);
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      const call: ReceivedCall = { headers: req.headers, answer: 401 };
      verify(body, url).then(
        (delivery) => {
          call.delivery = delivery;
          call.answer = receiver.answer(delivery, calls.length);
        },
        (error: unknown) => {
          call.rejected = (error as Error).message;
        },
      ).finally(() => {
        calls.push(call);
        if (call.answer === 'hang') {
          hanging.add(res);
          res.on('close', () => {
            call.closedByCaller = true;
            for (const w of [...waiters]) w();
          });
        }
        else res.writeHead(call.answer, { 'content-type': 'application/json' }).end('{}');
        for (const w of [...waiters]) w();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.path ?? '/events'}`;
  receiver.url = url;
  return receiver;
}
