// The address guard as each kind of client meets it: fetch answers a redirect instead of following it, and the
// node:http agents refuse a forbidden IP literal (which skips name resolution) before connecting.
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { createServer, type Server } from 'node:net';
import { after, before, test } from 'node:test';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createAddressGuard } from '../../src/lib/address-guard.js';
import { createOutbound, guardedFetch, isForbiddenAddress } from '../../src/lib/guarded-connect.js';

let target: Server;
let targetPort: number;
let reached = 0;
let redirecting: HttpServer;
let redirectingPort: number;

before(async () => {
  target = createServer((s) => {
    reached++;
    s.destroy();
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  targetPort = (target.address() as { port: number }).port;
  redirecting = createHttpServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${targetPort}/internal` }).end());
  await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r));
  redirectingPort = (redirecting.address() as { port: number }).port;
});
after(async () => {
  await new Promise((r) => target.close(r));
  await new Promise((r) => redirecting.close(r));
});

test('a redirect is answered to the caller, never followed to another address', async () => {
  // Loopback allowed here so that the first server can be reached at all; the redirect still is not followed.
  const fetch = guardedFetch(createAddressGuard({ allowInsecure: true }));
  const res = await fetch(`http://127.0.0.1:${redirectingPort}/`, { redirect: 'follow' });
  assert.equal(res.status, 302);
  assert.equal(reached, 0);
});

test('the agents refuse forbidden IP literals and names resolving to them, unreached', async () => {
  const { agents } = createOutbound(createAddressGuard({ allowInsecure: false, resolver: async () => [{ address: '127.0.0.1', family: 4 }] }));
  for (const host of ['127.0.0.1', '::ffff:127.0.0.1', '0.0.0.0', 'rebind.test']) {
    const error = await new Promise<unknown>((resolve) => {
      get({ host, port: targetPort, path: '/', agent: agents.http }, () => resolve(undefined)).on('error', resolve);
    });
    assert.ok(isForbiddenAddress(error), `${host}: ${String(error)}`);
  }
  assert.equal(reached, 0);
  agents.http.destroy();
});
