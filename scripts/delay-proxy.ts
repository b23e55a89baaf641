// The delay proxy between regions of `npm run regions`: a process of its own (the script exits and leaves it
// running), forwarding each listed loopback port to its target with a one-way delay, and answering on a control
// port: PUT /mode/up | /mode/cut | /mode/blackhole, PUT /delay/<ms>. It prints one JSON line once it listens.
//   npx tsx scripts/delay-proxy.ts --targets 4301,4302,4303 [--delay-ms 25]
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { startProxy, type Proxy, type ProxyMode } from '../test/support/nats.js';

const { values } = parseArgs({ options: { targets: { type: 'string' }, 'delay-ms': { type: 'string', default: '0' } } });
const targets = (values.targets ?? '').split(',').filter(Boolean).map(Number);
if (targets.length === 0 || targets.some((t) => !Number.isInteger(t) || t <= 0)) {
  console.error('usage: npx tsx scripts/delay-proxy.ts --targets PORT[,PORT...] [--delay-ms N]');
  process.exit(2);
}
const delayMs = Number(values['delay-ms']);
const proxies: Proxy[] = [];
for (const target of targets) {
  const proxy = await startProxy(target);
  proxy.setDelay(delayMs);
  proxies.push(proxy);
}
const MODES: readonly ProxyMode[] = ['up', 'cut', 'blackhole'];
const control = createServer((req, res) => {
  const [, what, value] = (req.url ?? '').split('/');
  if (req.method === 'PUT' && what === 'mode' && MODES.includes(value as ProxyMode)) {
    for (const p of proxies) p.setMode(value as ProxyMode);
  } else if (req.method === 'PUT' && what === 'delay' && /^\d+$/.test(value ?? '')) {
    for (const p of proxies) p.setDelay(Number(value));
  } else {
    return void res.writeHead(400).end('PUT /mode/up|cut|blackhole or /delay/<ms>\n');
  }
  res.writeHead(204).end();
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
console.log(JSON.stringify({ control: (control.address() as { port: number }).port, ports: proxies.map((p) => p.port) }));
process.on('SIGTERM', () => {
  void Promise.all(proxies.map((p) => p.close())).finally(() => process.exit(0));
});
