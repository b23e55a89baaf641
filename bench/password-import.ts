// What an imported password hash costs its person's first sign-in, against a sign-in with the service's own
// scrypt hash: bcrypt (cost 10) and argon2id (@node-rs/argon2's defaults, and argon2-cffi's RFC 9106 ones)
// verified, then re-hashed to scrypt in the token's entry. Each person signs in once, one at a time, over HTTP.
//   npm run bench -- password-import [--persons 30]
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { hash as argon2Hash } from '@node-rs/argon2';
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { numberFlag, runIfMain } from './lib/cli.js';
import { Histogram } from './lib/histogram.js';
import { environment, environmentLine, formatTable, ms, writeResults } from './lib/report.js';
import { startService } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- password-import [options]   (or: npx tsx bench/password-import.ts [options])
  --persons N   persons per case, each signing in once (default 30)`;

const PASSWORD = 'correct horse battery staple';

interface Row {
  name: string;
  p50_us: number;
  p99_us: number;
  vs_scrypt: number;
}

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { persons: { type: 'string', default: '30' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const persons = Math.floor(numberFlag('persons', values.persons, 1, USAGE));
  const env = environment();
  const salt = randomBytes(16);
  // undefined: the password is set through the API, in the service's own form.
  const cases: Array<{ name: string; hash: string | undefined }> = [
    { name: 'scrypt (own: N=2^15, r=8, p=1)', hash: undefined },
    { name: 'bcrypt cost 10, first sign-in', hash: await bcryptHash(PASSWORD, 10) },
    { name: 'argon2id m=19456,t=2,p=1 (@node-rs default), first', hash: await argon2Hash(PASSWORD) },
    { name: 'argon2id m=65536,t=3,p=4 (argon2-cffi default), first', hash: await argon2Hash(PASSWORD, { memoryCost: 65536, timeCost: 3, parallelism: 4 }) },
    { name: 'pbkdf2-sha256 600000 iterations, first', hash: `$pbkdf2-sha256$i=600000$${b64(salt)}$${b64(pbkdf2Sync(PASSWORD, salt, 600_000, 32, 'sha256'))}` },
  ];

  const service = await startService();
  const org = service.auth['Service-OrgID'] as string;
  const api = async (method: string, path: string, body: unknown, expected: number) => {
    const r = await fetch(service.url + path, { method, body: JSON.stringify(body), headers: { ...service.auth, 'content-type': 'application/json' } });
    const text = await r.text();
    if (r.status !== expected) throw new Error(`${method} ${path} answered ${r.status}: ${text.slice(0, 300)}`);
    return text === '' ? undefined : (JSON.parse(text) as { result?: any });
  };
  const rows: Row[] = [];
  try {
    for (const [i, c] of cases.entries()) {
      const emails: string[] = [];
      for (let n = 0; n < persons; n++) {
        const email = `p${i}-${n}@example.com`;
        const id = (await api('POST', '/persons', { handles: [{ type: 'email_address', value: email }] }, 201))?.result.person_id as string;
        if (c.hash === undefined) await api('PUT', `/persons/${id}/credentials/password`, { password: PASSWORD }, 204);
        else await api('POST', `/persons/${id}/credentials`, { type: 'password', params: { password_hash: c.hash } }, 201);
        emails.push(email);
      }
      const latency = new Histogram();
      for (const email of emails) {
        const t = performance.now();
        const r = await fetch(`${service.url}/authenticate/password`, {
          method: 'POST',
          body: JSON.stringify({ handle: { type: 'email_address', value: email }, password: PASSWORD }),
          headers: { 'Service-OrgID': org, 'content-type': 'application/json' },
        });
        await r.text();
        if (r.status !== 200) throw new Error(`sign-in answered ${r.status}`);
        latency.record((performance.now() - t) * 1000);
      }
      const p50 = latency.percentile(50);
      rows.push({ name: c.name, p50_us: p50, p99_us: latency.percentile(99), vs_scrypt: p50 / (rows[0]?.p50_us ?? p50) });
    }
  } finally {
    await service.stop();
  }

  console.log(
    formatTable<Row>(
      [
        { title: 'sign-in', value: (r) => r.name, align: 'left' },
        { title: 'p50 ms', value: (r) => ms(r.p50_us), align: 'right' },
        { title: 'p99 ms', value: (r) => ms(r.p99_us), align: 'right' },
        { title: 'p50 vs scrypt', value: (r) => `${r.vs_scrypt.toFixed(2)}x`, align: 'right' },
      ],
      rows,
    ),
  );
  console.log(`\n${environmentLine(env)}`);
  console.log(`results: ${writeResults('password-import', env, { persons, rows })}`);
}

runIfMain(import.meta.url, main);
