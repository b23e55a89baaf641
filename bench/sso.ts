// What SSO sign-in adds over password sign-in: complete OIDC flows against a loopback OpenID provider
// (oidc-provider) timed hop by hop, beside password sign-ins and bare mint-token calls of the same person on the
// same service. Sequential flows; medians and p99 in one run.
//   npm run bench -- sso [--flows 200] [--warmup 10]
import diagnostics from 'node:diagnostics_channel';
import { parseArgs } from 'node:util';
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { startOidcProvider, WalkingClient, type Hop } from '../test/support/oidc-provider.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { Histogram } from './lib/histogram.js';
import { environment, environmentLine, formatTable, ms, writeResults } from './lib/report.js';
import { startService } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- sso [options]   (or: npx tsx bench/sso.ts [options])
  --flows N    measured sign-ins per case, one at a time (default 200; the form-flow case runs min(N, 50))
  --warmup N   unmeasured sign-ins per case before them (default 10)`;

const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';
/** Where the flow ends: on the allow-list, never requested (the walk stops at its redirect). */
const REDIRECT_URI = 'http://127.0.0.1:9/signed-in';

interface Row {
  name: string;
  n: number;
  p50_us: number;
  p99_us: number;
  /** p50 over that of password sign-in, for the complete flows */
  vs_password?: number;
}

/** A hop's time and what it answered. */
async function timed(client: WalkingClient, url: string, init?: Parameters<WalkingClient['request']>[1]): Promise<{ hop: Hop; us: number }> {
  const t = performance.now();
  const hop = await client.request(url, init);
  return { hop, us: (performance.now() - t) * 1000 };
}

function expectRedirect(hop: Hop, what: string): string {
  if (hop.status < 300 || hop.status >= 400 || !hop.location) throw new Error(`${what}: expected a redirect, got ${hop.status} from ${hop.url}: ${hop.body.slice(0, 300)}`);
  return hop.location;
}

/** The token the service put in the fragment of its final redirect. */
function tokenOf(location: string): string {
  const token = new URLSearchParams(new URL(location).hash.slice(1)).get('token');
  if (!token || !location.startsWith(REDIRECT_URI)) throw new Error(`the flow ended at ${location}, not at ${REDIRECT_URI} with a token`);
  return token;
}

/** Median and p99 of `runs` sequential calls of fn, each recording into its own histograms by name. */
async function measure(runs: number, warmup: number, fn: (record: (name: string, us: number) => void, measured: boolean) => Promise<void>): Promise<Map<string, Histogram>> {
  for (let i = 0; i < warmup; i++) await fn(() => {}, false);
  const histograms = new Map<string, Histogram>();
  const record = (name: string, us: number) => {
    let h = histograms.get(name);
    if (!h) histograms.set(name, (h = new Histogram()));
    h.record(us);
  };
  for (let i = 0; i < runs; i++) await fn(record, true);
  return histograms;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { flows: { type: 'string', default: '200' }, warmup: { type: 'string', default: '10' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const flows = Math.floor(numberFlag('flows', values.flows, 1, USAGE));
  const warmup = Math.floor(numberFlag('warmup', values.warmup, 0, USAGE));
  const formFlows = Math.min(flows, 50);
  const env = environment();

  const service = await startService({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
  const provider = await startOidcProvider({ redirectUris: [`${service.url}/authenticate/oidc/callback`] });
  // The provider's own handling time per endpoint, from request to finished answer, read off node:http's
  // diagnostics channels: the provider is the one node:http server in this process (the service runs apart).
  const providerTime = new Map<string, Histogram>();
  let recordProvider = false;
  const began = new WeakMap<object, number>();
  const onStart = (message: unknown) => {
    const { response } = message as { response: object };
    began.set(response, performance.now());
  };
  const onFinish = (message: unknown) => {
    const { request, response } = message as { request: { url?: string }; response: object };
    const t = began.get(response);
    if (!recordProvider || t === undefined) return;
    const name = new URL(request.url ?? '/', 'http://x').pathname.replace(/^\/(auth|interaction)\/.+$/, '/$1/:uid');
    let h = providerTime.get(name);
    if (!h) providerTime.set(name, (h = new Histogram()));
    h.record((performance.now() - t) * 1000);
  };
  diagnostics.subscribe('http.server.request.start', onStart);
  diagnostics.subscribe('http.server.response.finish', onFinish);
  const admin = new WalkingClient();
  const user = new WalkingClient();
  const browser = new WalkingClient();
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    const api = async (method: string, path: string, body: unknown, expected: number) => {
      const hop = await admin.request(service.url + path, { method, body: JSON.stringify(body), headers: { ...service.auth, 'content-type': 'application/json' } });
      if (hop.status !== expected) throw new Error(`${method} ${path} answered ${hop.status}: ${hop.body.slice(0, 300)}`);
      return hop.body === '' ? undefined : (JSON.parse(hop.body) as { result?: any });
    };
    const org = service.auth['Service-OrgID'] as string;
    const person = (await api('POST', '/persons', { handles: [{ type: 'email_address', value: EMAIL }] }, 201))?.result.person_id as string;
    await api('PUT', `/persons/${person}/credentials/password`, { password: PASSWORD }, 204);
    await api('POST', '/organizations/sso/oidc/provider-credentials', { client_id: provider.clientId, client_secret: provider.clientSecret, provider: 'service', options: { service: { organization_url: provider.issuer } } }, 201);
    await api('PATCH', '/organizations/config', { sso_allowed_redirect_uris: [REDIRECT_URI] }, 200);
    const startUrl = `${service.url}/authenticate/oidc/${encodeURIComponent(provider.clientId)}/start?org_id=${encodeURIComponent(org)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;

    // 1. Password sign-in: scrypt, then the issuing path every method shares.
    const password = await measure(flows, warmup, async (record) => {
      const { hop, us } = await timed(user, `${service.url}/authenticate/password`, {
        method: 'POST',
        body: JSON.stringify({ handle: { type: 'email_address', value: EMAIL }, password: PASSWORD }),
        headers: { 'Service-OrgID': org, 'content-type': 'application/json' },
      });
      if (hop.status !== 200) throw new Error(`password sign-in answered ${hop.status}: ${hop.body.slice(0, 300)}`);
      record('total', us);
    });
    // 2. mint-token: the issuing path alone (claims, durable record, signature), for what the sign-ins add to it.
    const mint = await measure(flows, warmup, async (record) => {
      const t = performance.now();
      await api('POST', `/persons/${person}/mint-token`, {}, 201);
      record('total', (performance.now() - t) * 1000);
    });

    // 3. SSO with the provider session kept: after one sign-in through the forms the provider remembers the
    //    person and the granted scopes, so its authorization endpoint redirects straight back with a code.
    const first = await browser.walk(startUrl, { stop: (u) => u.startsWith(REDIRECT_URI) });
    if (!first.stoppedAt) throw new Error(`the first SSO sign-in did not end at the redirect URI: ${first.hops.map((h) => `${h.status} ${h.url}`).join(' → ')}\n${first.last.body.slice(0, 300)}`);
    const ssoToken = tokenOf(first.stoppedAt);
    const session = await measure(flows, warmup, async (record, measured) => {
      recordProvider = measured;
      const start = await timed(browser, startUrl);
      const authorize = await timed(browser, expectRedirect(start.hop, 'start'));
      const callbackUrl = expectRedirect(authorize.hop, 'the provider (did it ask for its forms again?)');
      if (!callbackUrl.startsWith(`${service.url}/authenticate/oidc/callback`)) throw new Error(`the provider sent the browser to ${callbackUrl}, not to the callback: its session was not kept`);
      const callback = await timed(browser, callbackUrl);
      tokenOf(expectRedirect(callback.hop, 'callback'));
      record('start (service)', start.us);
      record('authorize (provider)', authorize.us);
      record('callback (service)', callback.us);
      record('total', start.us + authorize.us + callback.us);
    });
    recordProvider = false;

    const formHops: number[] = [];
    // 4. SSO through the forms each time: a new browser, so the provider shows its login and consent forms.
    const forms = await measure(formFlows, Math.min(warmup, 5), async (record) => {
      const fresh = new WalkingClient();
      try {
        const t = performance.now();
        const walked = await fresh.walk(startUrl, { stop: (u) => u.startsWith(REDIRECT_URI) });
        const us = (performance.now() - t) * 1000;
        if (!walked.stoppedAt) throw new Error(`a form flow did not end at the redirect URI: ${walked.last.status} ${walked.last.url}`);
        tokenOf(walked.stoppedAt);
        record('total', us);
        formHops.push(walked.hops.length);
      } finally {
        await fresh.close();
      }
    });

    // 5. ID token verification as the callback does it, in this process: an RS256 signature (the provider's
    //    algorithm) and the claim checks, against a key set already fetched.
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const keySet = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256' }] });
    const idToken = await new SignJWT({ email: EMAIL, email_verified: true, nonce: 'n'.repeat(43) })
      .setProtectedHeader({ alg: 'RS256', kid: 'k' })
      .setIssuer(provider.issuer)
      .setAudience(provider.clientId)
      .setSubject('ada')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    const verification = await measure(Math.max(flows, 1000), 100, async (record) => {
      const t = performance.now();
      await jwtVerify(idToken, keySet, { issuer: provider.issuer, audience: provider.clientId, algorithms: ['RS256'] });
      record('total', (performance.now() - t) * 1000);
    });

    // The token of an SSO sign-in verifies against the service's key set and names the method.
    const jwks = await admin.request(`${service.url}/.well-known/jwks.json`);
    const { payload } = await jwtVerify(ssoToken, createLocalJWKSet(JSON.parse(jwks.body)), { issuer: service.url });
    if (payload['person_id'] !== person || JSON.stringify(payload['authenticated_methods']) !== '["oidc"]') {
      throw new Error(`the SSO token names ${String(payload['person_id'])} by ${JSON.stringify(payload['authenticated_methods'])}, not ${person} by ["oidc"]`);
    }

    const row = (name: string, h: Histogram | undefined, vsPassword = false): void => {
      if (!h) return;
      const p50 = h.percentile(50);
      const base = password.get('total')?.percentile(50);
      rows.push({ name, n: h.count, p50_us: p50, p99_us: h.percentile(99), ...(vsPassword && base !== undefined && { vs_password: p50 / base }) });
    };
    row('password sign-in: POST /authenticate/password', password.get('total'), true);
    row('  reference: POST /persons/{id}/mint-token (API key)', mint.get('total'));
    row('SSO, provider session kept: start → authorize → callback', session.get('total'), true);
    for (const hop of ['start (service)', 'authorize (provider)', 'callback (service)']) row(`  ${hop}`, session.get(hop));
    for (const [path, h] of [...providerTime].sort()) row(`    the provider's own time: ${path}`, h);
    row('  ID token verification, RS256 (jose, in process)', verification.get('total'));
    row('SSO through the login and consent forms, new browser each time', forms.get('total'), true);
    const hops = [...new Set(formHops)].sort((a, b) => a - b).join(' or ');
    if (hops) notes.push(`the form flow takes ${hops} requests (start, authorize, login form and post, consent form and post, resumes, callback); the kept session takes 3`);
  } finally {
    diagnostics.unsubscribe('http.server.request.start', onStart);
    diagnostics.unsubscribe('http.server.response.finish', onFinish);
    await Promise.all([admin.close(), user.close(), browser.close()]);
    await provider.stop();
    await service.stop();
  }

  console.log(
    formatTable<Row>(
      [
        { title: 'case', value: (r) => r.name, align: 'left' },
        { title: 'n', value: (r) => r.n },
        { title: 'p50 ms', value: (r) => ms(r.p50_us), align: 'right' },
        { title: 'p99 ms', value: (r) => ms(r.p99_us), align: 'right' },
        { title: 'p50 vs password', value: (r) => (r.vs_password === undefined ? '' : `${r.vs_password.toFixed(2)}x`), align: 'right' },
      ],
      rows,
    ),
  );
  for (const note of notes) console.log(`\n${note}`);
  console.log(`\n${environmentLine(env)}`);
  console.log(`results: ${writeResults('sso', env, { flows, warmup, formFlows, rows })}`);
}

runIfMain(import.meta.url, main);
