// What a client assertion's check (private_key_jwt) and a DPoP proof's check cost the server beyond the one
// signature verify each needs, in process: CPU µs per check, 50 in flight as under load, the best of --rounds,
// against a bare node:crypto ES256 verify with a KeyObject (the floor), and the put of a used jti that makes
// each check hold across restarts. Every assertion and proof is new (its own jti), signed before the timing.
//   npm run bench -- jws-costs [--rounds 5] [--checks 5000]
import { generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClientAssertionVerifier } from '../src/tokens/client-assertion.js';
import { createDpopProofVerifier } from '../src/tokens/dpop-proof.js';
import { createUsedOnce, openUsedOnceStore } from '../src/wal/used-once.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { ownCpuUs } from './lib/process-cpu.js';
import { environment, environmentLine, formatTable, writeResults } from './lib/report.js';
import { es256 } from './oauth2.js';

const USAGE = `usage: npm run bench -- jws-costs [--rounds 5] [--checks 5000]`;
const AUDIENCE = 'https://id.example';
const HTU = `${AUDIENCE}/oauth2/tokens`;
const IN_FLIGHT = 50;

/** CPU µs per item of `check` over `items`, IN_FLIGHT at a time; the best of `rounds`, each on fresh items from `make`. */
async function perCheck(rounds: number, make: () => string[], check: (item: string) => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let r = 0; r <= rounds; r++) {
    const items = make();
    let next = 0;
    const c = ownCpuUs();
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < items.length) await check(items[next++] as string);
    }));
    // round 0 warms up
    if (r > 0) best = Math.min(best, (ownCpuUs() - c) / items.length);
  }
  return best;
}

interface Part {
  part: string;
  us: number;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { rounds: { type: 'string', default: '5' }, checks: { type: 'string', default: '5000' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const rounds = Math.floor(numberFlag('rounds', values.rounds, 1, USAGE));
  const n = Math.floor(numberFlag('checks', values.checks, 100, USAGE));
  const env = environment();
  const clock = { nowMs: () => Date.now() };
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const client = { client_id: 'bench', jwks: { keys: [{ ...jwk, kid: 'k', alg: 'ES256', use: 'sig' }] } };
  const proofJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
  const nowS = () => Math.floor(Date.now() / 1000);
  const assertions = () => Array.from({ length: n }, () => es256({ kid: 'k' }, { iss: 'bench', sub: 'bench', aud: AUDIENCE, jti: randomUUID(), iat: nowS(), exp: nowS() + 60 }, privateKey));
  const proofs = () => Array.from({ length: n }, () => es256({ typ: 'dpop+jwt', jwk: proofJwk }, { htm: 'POST', htu: HTU, jti: randomUUID(), iat: nowS() }, privateKey));
  const assertionVerifier = createClientAssertionVerifier({ clock, fetch: () => Promise.reject(new Error('no jwks_uri here')) });
  const proofVerifier = createDpopProofVerifier(clock);
  const dir = mkdtempSync(join(tmpdir(), 'jws-costs-'));
  const store = openUsedOnceStore(dir);
  try {
    const used = createUsedOnce(clock, store.db, 'bench');
    const floor = await perCheck(rounds, proofs, async (p) => {
      const [h, b, s] = p.split('.') as [string, string, string];
      if (!verify('sha256', Buffer.from(`${h}.${b}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))) throw new Error('the floor did not verify');
    });
    const parts: Part[] = [
      { part: 'bare ES256 verify (node:crypto, a KeyObject): the floor', us: floor },
      { part: 'client assertion check (src/tokens/client-assertion.ts)', us: await perCheck(rounds, assertions, (a) => assertionVerifier.verify(a, client, AUDIENCE)) },
      { part: 'DPoP proof check (src/tokens/dpop-proof.ts)', us: await perCheck(rounds, proofs, (p) => proofVerifier.verify(p, { method: 'POST', url: HTU })) },
      { part: 'a used jti kept across restarts (src/wal/used-once.ts)', us: await perCheck(rounds, () => Array.from({ length: n }, () => randomUUID()), async (jti) => used.firstUse(jti, nowS() + 60)) },
    ];
    console.log(`CPU µs per check, ${IN_FLIGHT} in flight (best of ${rounds} rounds of ${n})`);
    console.log(formatTable([{ title: 'part', value: (p: Part) => p.part }, { title: 'µs', value: (p) => p.us.toFixed(1), align: 'right' }, { title: 'over the floor', value: (p) => (p === parts[0] || p === parts[3] ? '' : `${(p.us - floor).toFixed(1)}`), align: 'right' }], parts));
    console.log('for scale: a plain client_secret_basic token costs its server about 60–80 µs of CPU (npm run bench -- oauth2)');
    console.log(environmentLine(env));
    console.log(`written to ${writeResults('jws-costs', env, { rounds, checks: n, in_flight: IN_FLIGHT, parts })}`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main);
