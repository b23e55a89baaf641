// What a token_minted sync hook adds to a sign-in: one hook call (sign the delivery token, POST it over a
// kept-alive connection, parse the claims) next to a bare keep-alive round trip to the same loopback
// receiver, and three hooks called concurrently. Sequential calls; medians and p99 in one run.
//   npm run bench -- sync-hook [--calls 3000]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { emptyState, type OrgState, type Webhook } from '../src/domain/state.js';
import { Metrics } from '../src/lib/metrics.js';
import { createAddressGuard } from '../src/lib/address-guard.js';
import { createWebhookCaller } from '../src/webhooks/caller.js';
import { createDeliverySigner } from '../src/webhooks/delivery-token.js';
import { loadWebhookKeys } from '../src/webhooks/keys.js';
import { createWebhookMetrics } from '../src/webhooks/metrics.js';
import { createSyncHooks, type TokenMintedContent } from '../src/webhooks/sync-hook.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { Histogram } from './lib/histogram.js';
import { environment, environmentLine, formatTable, ms, writeResults } from './lib/report.js';

const USAGE = `usage: npm run bench -- sync-hook [options]   (or: npx tsx bench/sync-hook.ts [options])
  --calls N   measured calls per case, one at a time, after min(500, N) unmeasured ones (default 3000)`;

const content: TokenMintedContent = {
  aud: 'bench-org',
  sub: '0193c0de-0000-7000-8000-000000000000',
  iss: 'http://127.0.0.1:8080',
  authentications: [{ handle: { type: 'email_address', value: 'ada@example.com' }, method: 'password', timestamp: new Date().toISOString() }],
  first_token: false,
  groups_claim_name: 'groups',
  region: 'europe-belgium',
  request_metadata: { client_ip_address: '127.0.0.1', origin: 'https://app.example', user_agent: 'bench' },
};

function orgWithHooks(base: string, n: number): OrgState {
  const state = emptyState({ id: 'bench-org', org_name: 'bench', parent_id: null, root_id: 'bench-org', api_key_hash: '', created: '' });
  for (let i = 0; i < n; i++) {
    const w: Webhook = { id: `w${i}`, created: '', name: `hook ${i}`, description: '', target_url: `${base}/hook${i}`, custom_headers: {}, timeout: '0s', on_failure: 'block', triggers: [{ trigger_type: 'sync_hook', trigger_name: 'token_minted' }] };
    state.webhooks.set(w.id, w);
  }
  return state;
}

interface Row {
  name: string;
  p50_us: number;
  p99_us: number;
  calls_per_s: number;
  vs_bare: number;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { calls: { type: 'string', default: '3000' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const calls = Math.floor(numberFlag('calls', values.calls, 1, USAGE));
  const env = environment();

  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"plan":"pro"}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const meta = new Map<string, unknown>();
  const keys = await loadWebhookKeys({ getMeta: <T>(k: string) => meta.get(k) as T | undefined, putMeta: async (k, v) => void meta.set(k, v) }, Date.now());
  const caller = createWebhookCaller({ guard: createAddressGuard({ allowInsecure: true }) });
  const hooks = createSyncHooks({
    caller,
    signer: createDeliverySigner(keys, () => 'http://127.0.0.1:8080', Date.now),
    metrics: createWebhookMetrics(new Metrics()),
  });
  const raw = new Agent({ keepAliveTimeout: 30_000 });
  const orgWithHooks1 = orgWithHooks(base, 1);
  const orgWithHooks3 = orgWithHooks(base, 3);
  const cases: Array<{ name: string; run(): Promise<unknown> }> = [
    {
      name: 'bare keep-alive POST (undici)',
      run: async () => {
        const r = await raw.request({ origin: base, path: '/raw', method: 'POST', body: 'x' });
        return r.body.json();
      },
    },
    { name: 'token_minted, 1 hook', run: () => hooks.tokenMinted(orgWithHooks1, content) },
    { name: 'token_minted, 3 hooks concurrently', run: () => hooks.tokenMinted(orgWithHooks3, content) },
  ];

  const rows: Row[] = [];
  try {
    for (const c of cases) {
      for (let i = 0; i < Math.min(500, calls); i++) await c.run();
      const latency = new Histogram();
      const started = performance.now();
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        await c.run();
        latency.record((performance.now() - t) * 1000);
      }
      const elapsed = performance.now() - started;
      const p50 = latency.percentile(50);
      rows.push({ name: c.name, p50_us: p50, p99_us: latency.percentile(99), calls_per_s: Math.round((calls / elapsed) * 1000), vs_bare: p50 / (rows[0]?.p50_us ?? p50) });
    }
  } finally {
    await caller.close();
    await raw.close();
    server.close();
  }

  console.log(
    formatTable<Row>(
      [
        { title: 'case', value: (r) => r.name, align: 'left' },
        { title: 'p50 ms', value: (r) => ms(r.p50_us), align: 'right' },
        { title: 'p99 ms', value: (r) => ms(r.p99_us), align: 'right' },
        { title: 'calls/s', value: (r) => r.calls_per_s },
        { title: 'p50 vs bare', value: (r) => `${r.vs_bare.toFixed(2)}x`, align: 'right' },
      ],
      rows,
    ),
  );
  console.log(`
${environmentLine(env)}`);
  console.log(`results: ${writeResults('sync-hook', env, { calls, rows })}`);
}

runIfMain(import.meta.url, main);
