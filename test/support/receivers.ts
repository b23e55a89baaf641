// Plain HTTP receivers on loopback that misbehave on purpose, recording what reached them.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FaultReceiver {
  port: number;
  url(path: string): string;
  received: Received[];
  /** TCP connections accepted, whether or not a request followed */
  connections: number;
  /** the most /gather/<group> requests of `group` that were held at once */
  gathered(group: string): number;
  close(): Promise<void>;
}

/**
 * Answers by path: /status/<code>, /sleep/<ms> (then 200 {}), /garbage, /array, /big (100 KiB of JSON),
 * /redirect (302 to /claims), /claims/<name> (200 {"<name>": true}), /gather/<group>/<count>/<name> (held
 * until `count` requests of `group` are held together, then each answers 200 {"<name>": true}: only
 * callers that have them all in flight at once get an answer, however slow the machine).
 */
export async function startFaultReceiver(): Promise<FaultReceiver> {
  const received: Received[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const state = { connections: 0 };
  const groups = new Map<string, { held: Array<() => void>; most: number }>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body });
      const [, kind, arg] = path.split('/');
      const json = (status: number, text: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      if (kind === 'status') return json(Number(arg), '{"error":"nope"}');
      if (kind === 'sleep') {
        const t = setTimeout(() => {
          timers.delete(t);
          json(200, '{"slept":true}');
        }, Number(arg));
        timers.add(t);
        return;
      }
      if (kind === 'gather') {
        const [, , group = '', count, name = 'claim'] = path.split('/');
        const g = groups.get(group) ?? { held: [], most: 0 };
        groups.set(group, g);
        const answer = () => json(200, JSON.stringify({ [name]: true }));
        g.held.push(answer);
        g.most = Math.max(g.most, g.held.length);
        // A caller that gives up takes its request out of the group.
        res.on('close', () => {
          const i = g.held.indexOf(answer);
          if (i >= 0) g.held.splice(i, 1);
        });
        if (g.held.length >= Number(count)) for (const release of g.held.splice(0)) release();
        return;
      }
      if (kind === 'garbage') return json(200, 'this is not json {');
      if (kind === 'array') return json(200, '[1,2,3]');
      if (kind === 'big') return json(200, JSON.stringify({ pad: 'x'.repeat(100 * 1024) }));
      if (kind === 'redirect') return res.writeHead(302, { location: '/claims/redirected' }).end();
      if (kind === 'claims') return json(200, JSON.stringify({ [arg ?? 'claim']: true }));
      json(404, '{}');
    });
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    get connections() {
      return state.connections;
    },
    gathered: (group) => groups.get(group)?.most ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
