// The address guard wired into each kind of client the service calls out with: node:http(s) agents (the AWS
// SDK, Google's clients), raw sockets (LDAP) and fetch (SSO discovery). Each resolves through the guard and
// connects to the address it checked; an IP literal, which skips resolution, is checked before connecting.
import { Agent as HttpAgent, type AgentOptions } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { connect as netConnect, isIP, Socket, type LookupFunction } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { Agent as UndiciAgent, buildConnector, fetch as undiciFetch } from 'undici';
import { ForbiddenAddressError, type AddressGuard } from './address-guard.js';

/** Whether an error (or one of its causes) is the guard's refusal. */
export function isForbiddenAddress(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) if (e instanceof ForbiddenAddressError) return true;
  return false;
}

/** A dns.lookup stand-in for net.connect: the address the guard allows, in the form the caller asked for. */
export function guardedLookup(guard: AddressGuard): LookupFunction {
  return (hostname, options, callback) => {
    guard.resolve(hostname).then(
      (address) => {
        const family = isIP(address);
        if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** The guard's refusal of a literal address, or undefined when it may be connected to (names are checked at lookup). */
function refusedLiteral(guard: AddressGuard, host: string | undefined): ForbiddenAddressError | undefined {
  const bare = (host ?? '').replace(/^\[|\]$/g, '');
  if (guard.allowInsecure || isIP(bare) === 0 || !guard.isForbidden(bare)) return undefined;
  return new ForbiddenAddressError(bare, [bare]);
}

/** A socket that fails with `error` as soon as the caller listens: what a refused connection looks like. */
function failedSocket(error: Error): Socket {
  const socket = new Socket();
  process.nextTick(() => socket.destroy(error));
  return socket;
}

/** net.connect / tls.connect through the guard, for clients that take a socket factory (ldapts). */
export function guardedSocket(guard: AddressGuard, port: number, host: string, tls?: ConnectionOptions): Socket {
  const refused = refusedLiteral(guard, host);
  if (refused) return failedSocket(refused);
  const lookup = guardedLookup(guard);
  return tls ? tlsConnect({ ...tls, port, host, lookup }) : netConnect({ port, host, lookup });
}

/** node:http and node:https agents that connect only where the guard allows (the AWS SDK, gaxios). */
export function guardedAgents(guard: AddressGuard, options: AgentOptions = {}): { http: HttpAgent; https: HttpsAgent } {
  const lookup = guardedLookup(guard);
  const check = <A extends HttpAgent>(agent: A): A => {
    const create = (agent as unknown as { createConnection: (o: { host?: string }, cb: unknown) => Socket }).createConnection.bind(agent);
    (agent as unknown as { createConnection: unknown }).createConnection = (o: { host?: string }, cb: unknown) => {
      const refused = refusedLiteral(guard, o.host);
      return refused ? failedSocket(refused) : create(o, cb);
    };
    return agent;
  };
  return { http: check(new HttpAgent({ ...options, lookup })), https: check(new HttpsAgent({ ...options, lookup })) };
}

export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** fetch through the guard; redirects are answered to the caller, never followed to another address. */
/**
 * An undici connector that resolves and checks the host, then connects to the checked address itself; TLS still
 * verifies the original host name, since undici derives the server name from `host`, which is left as it was.
 */
export function guardedConnector(guard: AddressGuard, options: buildConnector.BuildOptions = {}): buildConnector.connector {
  const base = buildConnector(options);
  return (opts, callback) => {
    guard.resolve(opts.hostname).then(
      (address) => base({ ...opts, hostname: address }, callback),
      (error: Error) => callback(error, null),
    );
  };
}

export function guardedFetch(guard: AddressGuard): GuardedFetch {
  const dispatcher = new UndiciAgent({ connect: guardedConnector(guard) });
  return async (url, init) => {
    try {
      return (await undiciFetch(url, { ...(init as object), redirect: 'manual', dispatcher })) as unknown as Response;
    } catch (error) {
      throw new UnreachableError(error);
    }
  };
}

/**
 * Any failure to get an answer (refused, timed out, a forbidden address, TLS), told in the same words: the
 * reason stays on `detail` for a debugger, out of `message` and `cause`, which reach the tenant's error. A
 * TypeError "fetch failed", as fetch's own network failures are, so callers tell it apart from an answer alike.
 */
export class UnreachableError extends TypeError {
  override name = 'TypeError';
  constructor(readonly detail: unknown) {
    super('fetch failed: the endpoint could not be reached');
  }
}

/** What a use case calling out on a tenant's behalf is given: the guard, and agents that go through it. */
export interface Outbound {
  guard: AddressGuard;
  agents: { http: HttpAgent; https: HttpsAgent };
}

export function createOutbound(guard: AddressGuard): Outbound {
  return { guard, agents: guardedAgents(guard, { keepAlive: true }) };
}
