// A STAND-IN for Google Cloud's IAM and Resource Manager APIs, not Google's code: no local implementation of
// them exists (CLOUD.md §2), so this loopback server answers exactly the REST calls the service makes, as
// Google's published reference describes them: service accounts create, list, delete and keys list
// (iam.googleapis.com v1), and a project's getIamPolicy/setIamPolicy with etag concurrency and version-3
// conditions (cloudresourcemanager.googleapis.com v1). Requests must carry a bearer JWT signed by the key given.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface StandInBinding {
  role: string;
  members: string[];
  condition?: { expression: string; title: string; description?: string; location?: string };
}

export interface StandInPolicy {
  version: number;
  etag: string;
  bindings: StandInBinding[];
}

export interface GcpStandIn {
  url: string;
  project: string;
  policy(): StandInPolicy;
  accounts(): Array<Record<string, unknown>>;
  /** runs once, between the next getIamPolicy and the setIamPolicy that follows: another writer's change */
  onceBeforeSet(change: (policy: StandInPolicy) => void): void;
  /** setIamPolicy calls answered so far, refused ones included */
  setCalls(): number;
  stop(): Promise<void>;
}

const ACCOUNT_ID = /^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$/;
const etag = () => randomBytes(8).toString('base64');

export async function startGcpStandIn(project: string, privateKeyPem: string): Promise<GcpStandIn> {
  const publicKey: KeyObject = createPublicKey(privateKeyPem);
  const accounts = new Map<string, Record<string, unknown>>();
  let policy: StandInPolicy = { version: 1, etag: etag(), bindings: [] };
  let beforeSet: ((p: StandInPolicy) => void) | undefined;
  let armed = false;
  let sets = 0;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, code: number, status: string, message: string) => send(res, code, { error: { code, message, status } });
  const authorized = (req: IncomingMessage): boolean => {
    const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(req.headers.authorization ?? '');
    if (!m) return false;
    return verify('RSA-SHA256', Buffer.from(`${m[1]}.${m[2]}`), publicKey, Buffer.from(m[3] as string, 'base64url'));
  };
  const body = async (req: IncomingMessage): Promise<Record<string, unknown>> => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      if (!authorized(req)) return error(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const path = decodeURIComponent(url.pathname);
      const prefix = `/v1/projects/${project}`;
      if (!path.startsWith(prefix)) return error(res, 403, 'PERMISSION_DENIED', `Permission denied on resource project ${path}.`);
      const rest = path.slice(prefix.length);
      if (req.method === 'POST' && rest === ':getIamPolicy') {
        await body(req);
        if (beforeSet && !armed) armed = true;
        return send(res, 200, policy);
      }
      if (req.method === 'POST' && rest === ':setIamPolicy') {
        const { policy: next } = (await body(req)) as { policy: StandInPolicy };
        sets += 1;
        if (armed && beforeSet) {
          const change = beforeSet;
          beforeSet = undefined;
          armed = false;
          change(policy);
          policy = { ...policy, etag: etag() };
        }
        if (next.etag && next.etag !== policy.etag) return error(res, 409, 'ABORTED', 'There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.');
        if ((next.bindings ?? []).some((b) => b.condition) && next.version !== 3) return error(res, 400, 'INVALID_ARGUMENT', 'Conditions require policy version 3.');
        policy = { version: next.version ?? 1, etag: etag(), bindings: next.bindings ?? [] };
        return send(res, 200, policy);
      }
      if (req.method === 'POST' && rest === '/serviceAccounts') {
        const b = (await body(req)) as { accountId?: string; serviceAccount?: { displayName?: string; description?: string } };
        if (!b.accountId || !ACCOUNT_ID.test(b.accountId)) return error(res, 400, 'INVALID_ARGUMENT', 'Invalid account ID.');
        const email = `${b.accountId}@${project}.iam.gserviceaccount.com`;
        if (accounts.has(email)) return error(res, 409, 'ALREADY_EXISTS', `Service account ${b.accountId} already exists within project projects/${project}.`);
        const uniqueId = String(100000000000000000000n + BigInt(`0x${randomBytes(8).toString('hex')}`));
        const account = {
          name: `projects/${project}/serviceAccounts/${email}`,
          projectId: project,
          uniqueId,
          email,
          ...(b.serviceAccount?.displayName && { displayName: b.serviceAccount.displayName }),
          ...(b.serviceAccount?.description && { description: b.serviceAccount.description }),
          etag: 'MDEwMjE5MjA=',
          oauth2ClientId: uniqueId,
        };
        accounts.set(email, account);
        return send(res, 200, account);
      }
      if (req.method === 'GET' && rest === '/serviceAccounts') return send(res, 200, accounts.size === 0 ? {} : { accounts: [...accounts.values()] });
      const one = /^\/serviceAccounts\/([^/]+)(\/keys)?$/.exec(rest);
      if (one) {
        const email = one[1] as string;
        if (!accounts.has(email)) return error(res, 404, 'NOT_FOUND', `Unknown service account`);
        if (req.method === 'GET' && one[2]) return send(res, 200, {});
        if (req.method === 'DELETE' && !one[2]) {
          accounts.delete(email);
          return send(res, 200, {});
        }
      }
      return error(res, 404, 'NOT_FOUND', `the stand-in does not answer ${req.method} ${path}`);
    })().catch((e: unknown) => error(res, 500, 'INTERNAL', String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    project,
    policy: () => policy,
    accounts: () => [...accounts.values()],
    onceBeforeSet(change) {
      beforeSet = change;
      armed = false;
    },
    setCalls: () => sets,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
