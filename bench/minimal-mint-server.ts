// The ceiling of minting over HTTP on this machine: the same uWebSockets.js and the same signing code as
// the service (keys.ts, sign.ts, signing-threads.ts), and nothing else: no authentication, no person
// lookup, no claims assembly, no durable record. SERVICE_SIGNING_THREADS chooses the signer as in the
// service; bench/mint.ts runs it both ways. Prints the same "listening on" line as src/main.ts.
import { uws } from '../src/http/uws.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/lib/clock.js';
import { openKeyRing } from '../src/tokens/keys.js';
import { createTokenIssuer } from '../src/tokens/sign.js';
import { createSigner } from '../src/tokens/signing-threads.js';

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

const app = uws.App();
app.post('/persons/:person_id/mint-token', (res, req) => {
  const personId = req.getParameter(0) ?? '';
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    void issuer.issue({ iss: '', aud: 'org', oid: 'org', sub: personId, person_id: personId, iat: 0, exp: 0, jti: '', first_token: false, authenticated_methods: ['api'], region: 'europe-belgium' }).token.then((token) => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus('201 Created').writeHeader('Content-Type', 'application/json').end(JSON.stringify({ result: token }));
      });
    });
  });
});
app.listen(config.host, config.port, (socket) => {
  if (!socket) throw new Error(`cannot listen on ${config.host}:${config.port}`);
  console.log(`listening on http://${config.host}:${uws.us_socket_local_port(socket)} (minimal mint server)`);
});
process.on('SIGTERM', () => process.exit(0));
