// A throwaway OpenID provider on loopback for trying SSO sign-in by hand: the tests' oidc-provider (panva's),
// with one client whose redirect URI is the service's callback and one account, and the credential to create.
//
//   npx tsx scripts/dev-oidc-provider.ts [--service-url http://127.0.0.1:8080] [--login ada] [--email ada@example.com]
//
// Its login form takes the account's login with any password. It keeps everything in memory and listens on a
// new port at each start, so a restarted provider needs the credential's organization_url set again.
import { parseArgs } from 'node:util';
import { startOidcProvider } from '../test/support/oidc-provider.js';

const USAGE = `usage: npx tsx scripts/dev-oidc-provider.ts [--service-url URL] [--client-id ID] [--client-secret SECRET] [--login NAME] [--email ADDRESS]
  --service-url    the identity service as the browser reaches it (SERVICE_URL; default http://127.0.0.1:8080)
  --client-id      the client registered at the provider (default sso-dev-client)
  --client-secret  its secret (default a fixed development one)
  --login          the account's login at the provider's form, and its sub (default ada)
  --email          the account's verified email, the handle the service finds or registers (default ada@example.com)`;

const { values } = parseArgs({
  options: {
    'service-url': { type: 'string', default: process.env['SERVICE_URL'] ?? 'http://127.0.0.1:8080' },
    'client-id': { type: 'string', default: 'sso-dev-client' },
    'client-secret': { type: 'string', default: 'sso-dev-client-secret-0123456789' },
    login: { type: 'string', default: 'ada' },
    email: { type: 'string', default: 'ada@example.com' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const callback = new URL('/authenticate/oidc/callback', values['service-url']).href;
const provider = await startOidcProvider({
  redirectUris: [callback],
  clientId: values['client-id'],
  clientSecret: values['client-secret'],
  accounts: [{ accountId: values.login, email: values.email, email_verified: true }],
});
const credential = {
  client_id: provider.clientId,
  client_secret: provider.clientSecret,
  provider: 'service',
  label: 'Development provider',
  options: { service: { organization_url: provider.issuer } },
};
console.log(`OpenID provider on ${provider.issuer} (discovery: ${provider.issuer}/.well-known/openid-configuration)
  client ${provider.clientId}, redirect URI ${callback}
  log in as "${values.login}" with any password (email ${values.email})
create the credential (the service needs SERVICE_WEBHOOK_ALLOW_INSECURE=1 for an http organization_url):
  curl -s "\${H[@]}" -X POST ${values['service-url']}/organizations/sso/oidc/provider-credentials -d '${JSON.stringify(credential)}'`);

const stop = () => {
  void provider.stop().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
