// panva's oidc-provider as the general-purpose OIDC server to compare with: client_credentials issuing JWT
// access tokens (ES256) through its resource indicators feature, in its own process like the service; a second
// client authenticating with private_key_jwt (its public key in BENCH_CLIENT_JWK), and DPoP on. Prints
// the same "listening on" line as src/main.ts, so one spawner (bench/lib/server-process.ts) starts both.
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { BENCH_CLIENT, BENCH_KEY_CLIENT_ID, BENCH_RESOURCE } from './lib/oidc-provider-client.js';

const host = process.env['SERVICE_HOST'] || '127.0.0.1';
const port = Number(process.env['SERVICE_PORT'] || 0);

const signingKey = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: 'bench', alg: 'ES256', use: 'sig' };
const clientJwk = process.env['BENCH_CLIENT_JWK'] ? (JSON.parse(process.env['BENCH_CLIENT_JWK']) as Record<string, unknown>) : undefined;
const server = createServer();
server.keepAliveTimeout = 60_000;
server.listen(port, host, () => {
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const provider = new Provider(`http://${host}:${bound}`, {
    clients: [
      { ...BENCH_CLIENT, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'invoices.read', id_token_signed_response_alg: 'ES256' },
      ...(clientJwk === undefined
        ? []
        : [{ client_id: BENCH_KEY_CLIENT_ID, token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [{ ...clientJwk, alg: 'ES256', use: 'sig' }] }, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: 'invoices.read', id_token_signed_response_alg: 'ES256' }]),
    ],
    scopes: ['invoices.read'],
    jwks: { keys: [signingKey] },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      dPoP: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => BENCH_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'invoices.read', audience: BENCH_RESOURCE, accessTokenTTL: 3600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
      },
    },
  });
  server.on('request', provider.callback());
  console.log(`listening on http://${host}:${bound} (oidc-provider)`);
});
process.on('SIGTERM', () => process.exit(0));
