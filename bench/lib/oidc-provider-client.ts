// The client that bench/oidc-provider-server.ts registers and bench/oauth2.ts authenticates as.
export const BENCH_CLIENT = { client_id: 'bench-client', client_secret: 'bench-client-secret-0123456789abcdef' };
export const BENCH_RESOURCE = 'https://api.example.com/';
