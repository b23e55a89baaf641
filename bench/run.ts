// `npm run bench -- <name> [options]`: runs one benchmark of bench/; each file also runs alone with `npx tsx bench/<name>.ts`.
import { describeError } from './lib/cli.js';

interface Entry {
  about: string;
  load(): Promise<{ main(argv: string[]): Promise<void> }>;
}

const BENCHES: Record<string, Entry> = {
  mint: { about: 'tokens per second: signing ceiling, uWS ceiling, minimal mint server, POST /persons/{id}/mint-token sync and nosync, open-loop p99, disk commit latency', load: () => import('./mint.js') },
  'mint-costs': { about: 'what one mint costs a pinned server, by count: heap bytes allocated and promoted, mark-compacts, CPU µs, and (--strace) system calls per request', load: () => import('./mint-costs.js') },
  http: { about: 'the service over loopback (GET a person, PUT attributes sync/nosync) as a share of a uWS hello-world ceiling', load: () => import('./http.js') },
  regions: { about: 'PUT attributes with local_region and all_regions consistency over 1 and 3 regions, 0 and 25 ms links', load: () => import('./regions.js') },
  events: { about: 'event fan-out to 0, 1, 10 and 100 WebSocket subscribers while persons are created, beside the minimal fan-out server (the floor); stamp-to-receipt latency', load: () => import('./events.js') },
  'sync-hook': { about: 'what a token_minted sync hook call adds next to a bare keep-alive round trip', load: () => import('./sync-hook.js') },
  'password-import': { about: "an imported hash's first sign-in (bcrypt cost 10, argon2id defaults, pbkdf2) beside a sign-in with the service's own scrypt", load: () => import('./password-import.js') },
  sso: { about: 'SSO sign-in through a loopback OpenID provider against password sign-in: the added latency, hop by hop', load: () => import('./sso.js') },
  signin: { about: 'sign-ins per second and p50/p99: password, passkey (software authenticator), password then TOTP, beside one durable commit', load: () => import('./signin.js') },
  oauth2: { about: 'client_credentials access tokens per second and p50/p99 (client_secret_basic, private_key_jwt, DPoP) beside mint-token, and beside oidc-provider doing the same', load: () => import('./oauth2.js') },
  gate: { about: 'what Gate adds over the upstream (no plugin, validate-jwt, enrichment; events on and off) beside http-proxy; /gate/events ingest rate', load: () => import('./gate.js') },
  scale: { about: 'one organization of N persons and M organizations of P: heap per person, RSS, start-up after stop and kill -9, WAL replay rate, reads and mints at size', load: () => import('./scale.js') },
  'snapshot-block': { about: 'in process: how long one snapshot of N persons holds the event loop, one pack against the sliced writer', load: () => import('./snapshot-block.js') },
  sdk: { about: 'the browser side: POST /actions/sdk events/s beside POST /test-events and POST /persons, GET /mitm/{token}.png beside hello world; ratios per round', load: () => import('./sdk.js') },
  cloud: { about: 'IAM role create + delete through the service against moto beside the same SDK calls directly (added p50 latency); time to snapshot --roles roles', load: () => import('./cloud.js') },
  'jws-costs': { about: 'in process: CPU µs of a client assertion check and a DPoP proof check against one bare ES256 verify (the floor), and of keeping a used jti across restarts', load: () => import('./jws-costs.js') },
  'chain-costs': { about: 'in process: CPU µs the event chain (protobuf encoding, SHA-256 link, its LMDB put) and the consistency token add to one write', load: () => import('./chain-costs.js') },
  'mint-path-costs': { about: 'in process: CPU µs a mint-token spends beyond the durable floor, stage by stage (front, claims, decide/apply, event, encodings, puts, answer)', load: () => import('./mint-path-costs.js') },
  codec: { about: 'event protobuf encode/decode/validate against JSON.stringify/parse, in process', load: () => import('./codec.js') },
  failover: { about: 'a region of two processes on a JetStream cluster of three: time from kill -9 of the writer to the first write through the standby (p50, max); durable write rates with SERVICE_COMMIT=quorum against local', load: () => import('./failover.js') },
  soak: { about: 'data dir size every minute while minting at a fixed rate for N minutes, with WAL compaction on and off side by side; then their closed-loop mint rates', load: () => import('./soak.js') },
  'profile-summary': { about: '(tool) self time of a CPU profile (mint --profile, node --cpu-prof) by module and function', load: () => import('./profile-summary.js') },
};

function usage(): string {
  const width = Math.max(...Object.keys(BENCHES).map((n) => n.length));
  return [
    'usage: npm run bench -- <name> [options]      npm run bench -- <name> --help for its options',
    '',
    ...Object.entries(BENCHES).map(([name, b]) => `  ${name.padEnd(width)}  ${b.about}`),
    '',
    'Each prints a table and writes bench/results/<name>-<time>.json. Compare ratios within one run: absolute figures move with machine load.',
  ].join('\n');
}

const [name, ...argv] = process.argv.slice(2);
if (name === undefined || name === '--help' || name === '-h') {
  console.log(usage());
} else if (!(name in BENCHES)) {
  console.error(`unknown benchmark "${name}"\n\n${usage()}`);
  process.exitCode = 2;
} else {
  try {
    const bench = await (BENCHES[name] as Entry).load();
    await bench.main(argv);
  } catch (error) {
    console.error(describeError(error));
    process.exitCode = 1;
  }
}
