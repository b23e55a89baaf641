// The reference proxy for bench/gate.ts: http-proxy (node-http-proxy) forwarding everything to UPSTREAM with a
// keep-alive agent, as its own process. Prints the same "listening on" line as src/main.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import httpProxy from 'http-proxy';

const target = process.env['UPSTREAM'];
if (!target) {
  console.error('UPSTREAM is required');
  process.exit(1);
}
const proxy = httpProxy.createProxyServer({ target, xfwd: true, agent: new http.Agent({ keepAlive: true, maxSockets: 512 }) });
proxy.on('error', (_e, _req, res) => {
  if ('writeHead' in res && !res.headersSent) res.writeHead(502);
  res.end();
});
const server = http.createServer((req, res) => proxy.web(req, res));
server.listen(Number(process.env['SERVICE_PORT'] || 0), process.env['SERVICE_HOST'] || '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port} (http-proxy to ${target})`);
});
process.on('SIGTERM', () => process.exit(0));
