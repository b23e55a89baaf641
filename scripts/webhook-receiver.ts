// A sample token_minted webhook receiver to copy: it verifies every call the way the specification says,
// then answers the custom claims to add to the identity token.
//
//   SERVICE_URL=http://127.0.0.1:8080 SERVICE_ORG_ID=<org id> PORT=9000 \
//   RECEIVER_URL=https://hooks.example.com/token-minted CLAIMS='{"plan":"pro"}' npx tsx scripts/webhook-receiver.ts
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { catching } from '../src/lib/http-handler.js';

export interface ReceiverOptions {
  /** base URL of the identity service */
  serviceUrl: string;
  /** the organization whose calls are accepted: the token's aud must equal it */
  orgId: string;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  /** path the webhook is registered at; the default own URL is http://host:port + path */
  path?: string;
  /** the URL the webhook is registered with, when it differs from http://host:port/path (a proxy in front) */
  publicUrl?: string;
  /** the custom claims to answer for a verified call */
  claims(payload: JWTPayload): Record<string, unknown> | Promise<Record<string, unknown>>;
}

export interface Receiver {
  /** the receiver's own URL: register the webhook with exactly this target_url */
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;
const REFETCH_AFTER_MS = 10_000;

class Rejected extends Error {}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > MAX_BODY) throw new Rejected('body too large');
  }
  return body;
}

export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const host = options.host ?? '127.0.0.1';
  let ownUrl = options.publicUrl ?? '';
  let keys: JWK[] = [];
  let fetchedAt = -Infinity;
  /** the fetch of the key set in flight: calls that arrive meanwhile wait for it instead of being refused */
  let fetching: Promise<void> | undefined;

  async function fetchKeys(): Promise<void> {
    const res = await fetch(`${options.serviceUrl}/organizations/webhooks/verification-jwks`, { headers: { 'Service-OrgID': options.orgId } });
    if (!res.ok) throw new Error(`verification-jwks answered ${res.status}`);
    keys = ((await res.json()) as { keys: JWK[] }).keys;
  }

  // Step 2: the key named by kid, from the organization's verification key set (fetched again for a new kid,
  // but not more often than every few seconds, so forged kids cannot make it hammer the service).
  async function keyFor(kid: string): Promise<JWK> {
    const find = () => keys.find((k) => k.kid === kid);
    if (!find() && fetching) await fetching;
    if (!find() && Date.now() - fetchedAt > REFETCH_AFTER_MS) {
      fetchedAt = Date.now();
      fetching = fetchKeys().finally(() => (fetching = undefined));
      await fetching;
    }
    const key = find();
    if (!key) throw new Rejected(`no verification key with kid ${kid}`);
    return key;
  }

  async function verify(token: string): Promise<JWTPayload> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid; // step 1
    } catch {
      throw new Rejected('not a JWT');
    }
    if (!kid) throw new Rejected('the token has no kid');
    const key = await importJWK(await keyFor(kid), 'ES256');
    let payload: JWTPayload;
    try {
      // Step 3: the ES256 signature, and aud equal to the organization (exp is checked too).
      ({ payload } = await jwtVerify(token, key, { algorithms: ['ES256'], audience: options.orgId }));
    } catch (error) {
      throw new Rejected(`verification failed: ${(error as Error).message}`);
    }
    // Step 4: the call is meant for this receiver.
    if (payload['target_url'] !== ownUrl) throw new Rejected('target_url is not this receiver');
    return payload;
  }

  const server = createServer(catching((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return answer(405, { error: 'POST only' });
    readBody(req)
      .then(verify)
      .then(async (payload) => answer(200, await options.claims(payload)))
      .catch((error: unknown) => {
        if (error instanceof Rejected) return answer(401, { error: error.message });
        answer(500, { error: 'receiver error' });
      });
  }));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  ownUrl ||= `http://${host}:${port}${options.path ?? '/'}`;
  return {
    url: ownUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  const required = (name: string) => env[name] || (console.error(`${name} is required`), process.exit(2));
  const claims = JSON.parse(env['CLAIMS'] ?? '{}') as Record<string, unknown>;
  const receiver = await startReceiver({
    serviceUrl: required('SERVICE_URL'),
    orgId: required('SERVICE_ORG_ID'),
    host: env['HOST'] ?? '127.0.0.1',
    port: Number(env['PORT'] ?? 9000),
    ...(env['RECEIVER_URL'] ? { publicUrl: env['RECEIVER_URL'] } : {}),
    claims: (payload) => {
      console.log(`verified token_minted call for ${String(payload.sub)}`);
      return claims;
    },
  });
  console.log(`receiving webhook calls at ${receiver.url}`);
}
