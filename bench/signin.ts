// What a sign-in costs by method, over HTTP in the same run: a password (scrypt), a passkey without a handle
// (options, then an assertion made by a software authenticator), a password then a TOTP code (@otplib/totp from
// the enrolled secret), beside one durable commit (PUT an organization's attribute bucket, SERVICE_DURABILITY=sync)
// and a token minted by API key (the floor of issuing a token).
// The TOTP step runs right after a password's scrypt, a few times a second, while the durable commit runs
// back to back hundreds of times a second: its control is the same commit in the TOTP step's place (after a
// password sign-in, timed alone), which the TOTP step's ratio is taken against as well.
// Each runs as `--concurrency` sign-in loops, the cases in turn for several rounds; the table shows each one's
// median round, the JSON every round. A person's passkey signs in from one loop only, so its counter only grows,
// and a TOTP person signs in at most once per 30 s step, as a code is accepted once.
//   npm run bench -- signin [--duration 3] [--concurrency 4] [--rounds 3] [--cases totp,commit,mint] [--profile] [--baseline-ref R]
import { parseArgs } from 'node:util';
import { TOTP } from '@otplib/totp';
import { NodeCryptoPlugin } from '@otplib/plugin-crypto-node';
import { ScureBase32Plugin } from '@otplib/plugin-base32-scure';
import { numberFlag, runIfMain } from './lib/cli.js';
import { Histogram, type LatencySummary } from './lib/histogram.js';
import { createPersons } from './lib/persons.js';
import { count, environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { profiled, startService } from './lib/server-process.js';
import { checkoutBaseline } from './lib/baseline.js';
import { countSyscalls } from './lib/syscall-count.js';
import { SoftwareAuthenticator } from './lib/software-authenticator.js';
import { startSmtpReceiver } from '../test/support/smtp.js';

const NAMES = ['password', 'passkey', 'totp', 'email-otp', 'commit-after-password', 'commit', 'mint'] as const;
type Name = (typeof NAMES)[number];

const USAGE = `usage: npm run bench -- signin [options]   (or: npx tsx bench/signin.ts [options])
  --duration <s>      seconds per measured run (default 3)
  --warmup <s>        unmeasured seconds before each run (default 0.5)
  --concurrency <n>   sign-in loops at once, each its own persons (default 4)
  --rounds <n>        rounds, taking the cases in turn (default 3)
  --totp-persons <n>  persons enrolled in TOTP: each signs in once per 30 s step (default 60)
  --cases <list>      comma-separated subset of ${NAMES.join(', ')} (default all)
  --baseline-ref <R>  run the service as it was at git ref R instead (unpacked into a temporary directory), to
                      compare runs of two versions on this machine (alternate them: its load moves every figure)
  --syscalls          count the service's fdatasync calls per operation of each case (perf; warm-up included)
  --profile           write a CPU profile of the service to bench/results/profiles/ (npm run bench -- profile-summary <file>)
Prints a table and the targets' ratios, and writes the figures to bench/results/signin-<time>.json.`;

interface Options {
  duration: number;
  warmup: number;
  concurrency: number;
  rounds: number;
  totpPersons: number;
  cases: Name[];
  profile: boolean;
  syscalls: boolean;
  baselineRef: string | undefined;
}

function options(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '0.5' },
      concurrency: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '3' },
      'totp-persons': { type: 'string', default: '60' },
      cases: { type: 'string', default: NAMES.join(',') },
      profile: { type: 'boolean', default: false },
      syscalls: { type: 'boolean', default: false },
      'baseline-ref': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const cases = values.cases.split(',').filter((c) => c !== '');
  for (const c of cases) if (!(NAMES as readonly string[]).includes(c)) throw new Error(`--cases: unknown case "${c}" (known: ${NAMES.join(', ')})`);
  return {
    duration: numberFlag('duration', values.duration, 0.1, USAGE),
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    concurrency: Math.round(numberFlag('concurrency', values.concurrency, 1, USAGE)),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
    totpPersons: Math.round(numberFlag('totp-persons', values['totp-persons'], 1, USAGE)),
    // in the table's order, whatever the order given
    cases: NAMES.filter((n) => cases.includes(n)),
    profile: values.profile,
    syscalls: values.syscalls,
    baselineRef: values['baseline-ref'],
  };
}

const LABELS: Record<Name, string> = {
  password: 'password (POST /authenticate/password)',
  passkey: 'passkey, no handle (options + assertion)',
  totp: 'password, then TOTP code',
  'email-otp': 'email OTP (start, code from the mail, sign-in)',
  'commit-after-password': "password, then a durable commit (TOTP step's control)",
  commit: 'durable commit (PUT org attributes, sync)',
  mint: 'token floor (POST /persons/{id}/mint-token)',
};

interface RunResult {
  rate: number;
  errors: number;
  failures: string[];
  latency: LatencySummary;
  /** TOTP (and its control): the second request alone, i.e. what the second factor adds */
  second?: LatencySummary;
  /** --syscalls: the service's fdatasync calls per operation (one operation of the TOTP case is both requests) */
  fdatasyncPerOp?: number;
  /** TOTP: time a loop waited for a person whose code was not yet used in this step */
  waitedMs?: number;
}

const PASSWORD = 'correct horse battery staple';
const ORIGIN = 'http://bench.localhost';
const STEP_MS = 30_000;
const totp = new TOTP({ crypto: new NodeCryptoPlugin(), base32: new ScureBase32Plugin() });

export async function main(argv: string[]): Promise<void> {
  const o = options(argv);
  if (!o) return console.log(USAGE);
  const env = environment();
  const baseline = o.baselineRef === undefined ? undefined : checkoutBaseline(o.baselineRef);
  if (baseline) console.error(`signin benchmark: the service at ${baseline.ref} (${baseline.commit.slice(0, 10)})`);
  // Email codes go through a real SMTP receiver on loopback; the loop reads its code from the message. Sends count
  // against the client's address (30 per SERVICE_AUTH_THROTTLE_WINDOW), so each sign-in comes from an address of its
  // own through the loopback proxy's X-Forwarded-For, as many persons behind a reverse proxy would.
  const smtp = await startSmtpReceiver();
  const service = await startService({ SERVICE_DURABILITY: 'sync', SERVICE_SECRETS_KEY: 'ab'.repeat(32), SERVICE_SMTP_URL: smtp.url, SERVICE_TRUSTED_PROXIES: '127.0.0.1' }, { ...profiled(o.profile), ...(baseline && { root: baseline.root }) });
  const org = service.auth['Service-OrgID'] as string;
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string>, expected: number): Promise<any> => {
    const r = await fetch(service.url + path, { method, headers: { 'Service-OrgID': org, 'content-type': 'application/json', ...headers }, ...(body !== undefined && { body: JSON.stringify(body) }) });
    const text = await r.text();
    if (r.status !== expected) throw new Error(`${method} ${path} answered ${r.status}: ${text.slice(0, 300)}`);
    return text === '' ? undefined : (JSON.parse(text) as { result?: any }).result;
  };
  const admin = (method: string, path: string, body: unknown, expected: number) => call(method, path, body, service.auth, expected);
  const inParallel = async <T>(n: number, job: (i: number) => Promise<T>): Promise<T[]> => {
    const out: T[] = new Array<T>(n);
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(16, n) }, async () => { while (next < n) { const i = next++; out[i] = await job(i); } }));
    return out;
  };
  const rounds: Partial<Record<Name, RunResult[]>> = {};
  try {
    console.error(`signin benchmark: setting up (${o.concurrency} passkeys, ${o.concurrency} password persons, ${o.totpPersons} TOTP persons)`);
    await admin('POST', '/organizations/config/domains', { domains: ['bench.localhost'] }, 204);
    const email = (i: number) => `bench-${i}@example.com`;
    const passwordCount = o.concurrency;
    const ids = await createPersons(service, passwordCount + o.concurrency + o.totpPersons);
    // One email OTP person per loop, with an address of its own so that a loop finds its own message.
    const otpEmail = (w: number) => `bench-otp-${w}@example.com`;
    await inParallel(o.concurrency, (w) => admin('POST', '/persons', { handles: [{ type: 'email_address', value: otpEmail(w) }] }, 201));
    const tokenOf = async (id: string) => (await admin('POST', `/persons/${id}/mint-token`, undefined, 201)) as string;
    const passwordIds = ids.slice(0, passwordCount);
    const passkeyIds = ids.slice(passwordCount, passwordCount + o.concurrency);
    const totpIds = ids.slice(passwordCount + o.concurrency);
    await inParallel(passwordIds.length + totpIds.length, (i) => admin('PUT', `/persons/${[...passwordIds, ...totpIds][i]}/credentials/password`, { password: PASSWORD }, 204));
    // One passkey per loop, registered through the person's own ceremony on the organization's page.
    const authenticators = await inParallel(passkeyIds.length, async (i) => {
      const bearer = { authorization: `Bearer ${await tokenOf(passkeyIds[i] as string)}`, origin: ORIGIN };
      const a = new SoftwareAuthenticator(ORIGIN);
      const { options: creation } = await call('POST', '/register/webauthn/options', {}, bearer, 200);
      await call('POST', '/register/webauthn', { credential: a.create(creation), label: 'bench' }, bearer, 201);
      return a;
    });
    // TOTP: enrolled and confirmed with a code, as an authenticator app's owner would.
    const totpPersons = await inParallel(totpIds.length, async (i) => {
      const bearer = { authorization: `Bearer ${await tokenOf(totpIds[i] as string)}` };
      const enrollment = await call('POST', '/register/totp', undefined, bearer, 201);
      const secret = new URL(enrollment.key_uri as string).searchParams.get('secret') as string;
      // The code of the step before (one step either side is accepted), so the current step is still unused.
      const step = Math.floor(Date.now() / STEP_MS) - 1;
      await call('POST', '/register/totp/confirm', { credential_id: enrollment.credential_id, code: await totp.generate({ secret, epoch: (step * STEP_MS) / 1000 }) }, bearer, 200);
      return { email: email(passwordCount + o.concurrency + i), secret, lastStep: step };
    });

    /** One sign-in by loop `worker`; `at.t` is when it began, moved past any wait for a TOTP person's next step. */
    type Loop = (worker: number, second: Histogram, at: { t: number }) => Promise<void>;
    const passwordLoop: Loop = async (w) => {
      const r = await call('POST', '/authenticate/password', { handle: { type: 'email_address', value: email(w) }, password: PASSWORD }, {}, 200);
      if (typeof r?.token !== 'string') throw new Error('password: no token');
    };
    const passkeyLoop: Loop = async (w) => {
      const { options: request } = await call('POST', '/authenticate/webauthn/options', {}, { origin: ORIGIN }, 200);
      const r = await call('POST', '/authenticate/webauthn', { credential: (authenticators[w] as SoftwareAuthenticator).get(request) }, { origin: ORIGIN }, 200);
      if (typeof r?.token !== 'string') throw new Error('passkey: no token');
    };
    // TOTP persons are dealt to the loops (person i to loop i mod concurrency); each picks one not used this step.
    const totpLoop: Loop = async (w, second, at) => {
      let person;
      for (;;) {
        const step = Math.floor(Date.now() / STEP_MS);
        person = totpPersons.find((p, i) => i % o.concurrency === w && p.lastStep < step);
        if (person) break;
        await new Promise((r) => setTimeout(r, STEP_MS - (Date.now() % STEP_MS) + 5));
        at.t = performance.now();
      }
      const first = await call('POST', '/authenticate/password', { handle: { type: 'email_address', value: person.email }, password: PASSWORD }, {}, 200);
      // The step the code is made in is the one used up (the first factor may have taken the clock into the next).
      const now = Date.now();
      person.lastStep = Math.floor(now / STEP_MS);
      const code = await totp.generate({ secret: person.secret, epoch: Math.floor(now / 1000) });
      const t = performance.now();
      const r = await call('POST', '/authenticate/totp', { challenge: first.second_factor.challenge, code }, {}, 200);
      second.record((performance.now() - t) * 1000);
      if (typeof r?.token !== 'string') throw new Error('totp: no token');
    };
    let otpSignIns = 0;
    const emailOtpLoop: Loop = async (w) => {
      const to = otpEmail(w);
      const seen = smtp.received.length;
      const n = ++otpSignIns;
      const from = { 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` };
      const { ticket } = await call('POST', '/authenticate/otp_via_email/start', { handle: { type: 'email_address', value: to } }, from, 202);
      let mail;
      const deadline = performance.now() + 10_000;
      while (!(mail = smtp.received.slice(seen).findLast((m) => m.to.includes(to)))) {
        if (performance.now() > deadline) throw new Error(`email OTP: no message to ${to} within 10 s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      const code = /\b([0-9]{6})\b/.exec(mail.text)?.[1];
      const r = await call('POST', '/authenticate/otp_via_email', { ticket, code }, from, 200);
      if (typeof r?.token !== 'string') throw new Error('email OTP: no token');
    };
    const commitLoop: Loop = async (w) => {
      await admin('PUT', '/organizations/attributes/end_user_read_write', { plan: 'pro', seats: w }, 204);
    };
    // The commit where the TOTP code goes: right after a password's scrypt, timed alone.
    const commitAfterLoop: Loop = async (w, second) => {
      await passwordLoop(w, second, { t: 0 });
      const t = performance.now();
      await commitLoop(w, second, { t });
      second.record((performance.now() - t) * 1000);
    };
    // Issuing a token with no sign-in at all: its record's commit and a signature, what any method's last step includes.
    const mintLoop: Loop = async (w) => {
      await admin('POST', `/persons/${passkeyIds[w] as string}/mint-token`, undefined, 201);
    };
    const loops: Record<Name, Loop> = { password: passwordLoop, passkey: passkeyLoop, totp: totpLoop, 'email-otp': emailOtpLoop, 'commit-after-password': commitAfterLoop, commit: commitLoop, mint: mintLoop };

    const run = async (name: Name, round: number): Promise<RunResult> => {
      console.error(`  ${LABELS[name]} (round ${round} of ${o.rounds}): ${o.warmup} s warm-up, ${o.duration} s over ${o.concurrency} loops`);
      const latency = new Histogram();
      const second = new Histogram();
      const waited = { ms: 0 };
      const failures: string[] = [];
      let errors = 0;
      let done = 0;
      const syscalls = o.syscalls ? await countSyscalls(service.pid, ['fdatasync']) : undefined;
      let operations = 0;
      const start = performance.now() + o.warmup * 1000;
      const end = start + o.duration * 1000;
      await Promise.all(
        Array.from({ length: o.concurrency }, async (_, w) => {
          while (performance.now() < end) {
            const at = { t: performance.now() };
            const began = at.t;
            const step = new Histogram();
            try {
              await loops[name](w, step, at);
              operations++;
              if (at.t > began) waited.ms += at.t - began;
              // counted when it began inside the window, as the load generator counts requests
              if (at.t >= start && at.t < end) {
                latency.record((performance.now() - at.t) * 1000);
                if (step.count > 0) second.record(step.percentile(50));
                done++;
              }
            } catch (error) {
              errors++;
              if (failures.length < 5) failures.push((error as Error).message);
            }
          }
        }),
      );
      const elapsed = (performance.now() - start) / 1000;
      const fdatasync = syscalls === undefined ? undefined : ((await syscalls.stop())['fdatasync'] ?? 0) / Math.max(1, operations);
      if (errors > 0) console.error(`    ${errors} errors: ${failures.join('; ')}`);
      return { rate: done / elapsed, errors, failures, latency: latency.summary(), ...(second.count > 0 && { second: second.summary() }), ...(name === 'totp' && { waitedMs: waited.ms }), ...(fdatasync !== undefined && { fdatasyncPerOp: fdatasync }) };
    };
    for (let round = 1; round <= o.rounds; round++) for (const name of o.cases) (rounds[name] ??= []).push(await run(name, round));
  } finally {
    await service.stop();
    await smtp.close();
    baseline?.remove();
  }

  const median = (rs: RunResult[] | undefined) => (rs && rs.length > 0 ? [...rs].sort((a, b) => a.rate - b.rate)[Math.floor(rs.length / 2)] : undefined);
  const best = Object.fromEntries((Object.keys(LABELS) as Name[]).map((n) => [n, median(rounds[n])])) as Record<Name, RunResult | undefined>;
  const rows = (Object.entries(best) as Array<[Name, RunResult | undefined]>).filter((e): e is [Name, RunResult] => e[1] !== undefined);
  const columns: Column<[Name, RunResult]>[] = [
    { title: '', value: ([n]) => LABELS[n], align: 'left' },
    { title: 'per s', value: ([, r]) => count(r.rate, 1), align: 'right' },
    { title: 'p50 ms', value: ([, r]) => ms(r.latency.p50_us), align: 'right' },
    { title: 'p99 ms', value: ([, r]) => ms(r.latency.p99_us), align: 'right' },
    { title: '2nd step p50 ms', value: ([, r]) => (r.second ? ms(r.second.p50_us) : ''), align: 'right' },
    { title: '2nd step p99 ms', value: ([, r]) => (r.second ? ms(r.second.p99_us) : ''), align: 'right' },
    { title: 'errors', value: ([, r]) => count(r.errors), align: 'right' },
    ...(o.syscalls ? [{ title: 'fdatasync/op', value: ([, r]: [Name, RunResult]) => (r.fdatasyncPerOp === undefined ? '' : r.fdatasyncPerOp.toFixed(2)), align: 'right' as const }] : []),
  ];
  console.log(`\nsignin benchmark: ${o.concurrency} sign-in loops, ${o.duration} s runs, median round of ${o.rounds}\n`);
  console.log(formatTable(columns, rows));
  const ratios: Record<string, number> = {};
  if (best.passkey && best.password) ratios['passkey_over_password'] = best.passkey.rate / best.password.rate;
  if (best.totp?.second && best.commit) ratios['totp_added_p50_over_commit_p50'] = best.totp.second.p50_us / best.commit.latency.p50_us;
  const control = best['commit-after-password']?.second;
  if (best.totp?.second && control) ratios['totp_added_p50_over_commit_after_password_p50'] = best.totp.second.p50_us / control.p50_us;
  console.log('');
  if (ratios['passkey_over_password'] !== undefined) console.log(`passkey / password sign-ins per second:       ${ratios['passkey_over_password'].toFixed(2)}×   (target ≥ 5×)`);
  if (ratios['totp_added_p50_over_commit_p50'] !== undefined)
    console.log(`TOTP step's p50 / one durable commit's p50:    ${ratios['totp_added_p50_over_commit_p50'].toFixed(2)}×   (target ≤ 1×: ${ms(best.totp?.second?.p50_us)} against ${ms(best.commit?.latency.p50_us)} ms)`);
  if (ratios['totp_added_p50_over_commit_after_password_p50'] !== undefined)
    console.log(`TOTP step's p50 / the control commit's p50:    ${ratios['totp_added_p50_over_commit_after_password_p50'].toFixed(2)}×   (the commit in the step's place: ${ms(best.totp?.second?.p50_us)} against ${ms(control?.p50_us)} ms)`);
  const waited = (rounds.totp ?? []).reduce((s, r) => s + (r.waitedMs ?? 0), 0);
  if (waited > 0) console.log(`(TOTP loops waited ${(waited / 1000).toFixed(1)} s in all for a person with an unused step: raise --totp-persons)`);
  console.log(`\n${environmentLine(env)}${baseline ? `; the service at ${baseline.ref} (${baseline.commit.slice(0, 10)})` : ''}`);
  console.log(`figures: ${writeResults('signin', env, { options: o, rounds, ratios })}`);
  if (o.profile) console.error('CPU profile of the service: bench/results/profiles/ (npm run bench -- profile-summary <file>)');
}

runIfMain(import.meta.url, main);
