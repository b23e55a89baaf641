// The ceiling of minting over HTTP on this machine: the same uWebSockets.js and the same signing code as
// the service (keys.ts, sign.ts, signing-threads.ts), and nothing else: no authentication, no person
// lookup, no claims assembly, no durable record. SERVICE_SIGNING_THREADS chooses the signer as in the
// service; bench/mint.ts runs it both ways. MINIMAL_DURABLE=gather (or turn) adds the one thing a durable
// service cannot do without: each token answered only once a record of its size is durable in an LMDB WAL store
// opened as the service opens its own (bench/lib/durable-records.ts), the floor durability sets on this machine.
// Prints the same "listening on" line as src/main.ts.
import { uws } from '../src/http/uws.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/lib/clock.js';
import { openKeyRing } from '../src/tokens/keys.js';
import { createTokenIssuer } from '../src/tokens/sign.js';
import { createSigner } from '../src/tokens/signing-threads.js';
import { createDurableRecords, GROUPINGS, type Grouping } from './lib/durable-records.js';

const config = loadConfig(process.env);
const meta = new Map<string, unknown>();
const keys = await openKeyRing({
  meta: { getMeta: <T>(k: string) => meta.get(k) as T | undefined, putMeta: async (k, v) => void meta.set(k, v) },
  name: 'token_keys',
  alg: config.tokenAlg,
  ttl: config.tokenTtl,
  clock: systemClock,
});
const issuer = createTokenIssuer({ keys, issuer: 'http://127.0.0.1', ttl: config.tokenTtl, clock: systemClock, signer: createSigner(config.signingThreads) });

const grouping = process.env['MINIMAL_DURABLE'];
if (grouping !== undefined && !(GROUPINGS as readonly string[]).includes(grouping)) throw new Error(`MINIMAL_DURABLE must be one of ${GROUPINGS.join(', ')}, got "${grouping}"`);
const durable = grouping === undefined ? undefined : createDurableRecords(grouping as Grouping);

const issue = (personId: string) =>
  issuer.issue({ iss: '', aud: 'org', oid: 'org', sub: personId, person_id: personId, iat: 0, exp: 0, jti: '', first_token: false, authenticated_methods: ['api'], region: 'europe-belgium' });

/**
 * The token once signed and, in the durable variant, its record durable: signed while the record commits, as the
 * service does. Without it, the signer's own promise, so the plain server pays no extra promise hop.
 */
const mint: (personId: string) => Promise<string> =
  durable === undefined
    ? (personId) => issue(personId).token
    : async (personId) => {
        const issued = issue(personId);
        const recorded = durable.record();
        recorded.then(undefined, () => {});
        const token = await issued.token;
        await recorded;
        return token;
      };

const app = uws.App();
app.post('/persons/:person_id/mint-token', (res, req) => {
  const personId = req.getParameter(0) ?? '';
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    void mint(personId).then((token) => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus('201 Created').writeHeader('Content-Type', 'application/json').end(JSON.stringify({ result: token }));
      });
    });
  });
});
app.listen(config.host, config.port, (socket) => {
  if (!socket) throw new Error(`cannot listen on ${config.host}:${config.port}`);
  console.log(`listening on http://${config.host}:${uws.us_socket_local_port(socket)} (minimal mint server${grouping === undefined ? '' : `, a durable record per token, ${grouping}`})`);
});
process.on('SIGTERM', () => {
  if (durable === undefined) process.exit(0);
  console.log(`${durable.records} durable records in ${durable.appends} appends`);
  void durable.close().finally(() => process.exit(0));
});
