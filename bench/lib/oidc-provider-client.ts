// The clients that bench/oidc-provider-server.ts registers and bench/oauth2.ts authenticates as.
export const BENCH_CLIENT = { client_id: 'bench-client', client_secret: 'bench-client-secret-0123456789abcdef' };
export const BENCH_RESOURCE = 'https://api.example.com/';
/** The private_key_jwt client: its public key comes from bench/oauth2.ts in BENCH_CLIENT_JWK, made for each run. */
export const BENCH_KEY_CLIENT_ID = 'bench-key-client';
