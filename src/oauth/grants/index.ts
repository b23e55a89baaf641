// The token endpoint's grants by grant_type; a new grant is one file and one line here.
import { authorizationCode } from './authorization-code.js';
import { clientCredentials } from './client-credentials.js';
import { refreshToken } from './refresh-token.js';
import { tokenExchange } from './token-exchange.js';
import { deviceCode } from './device-code.js';
import { DEVICE_CODE_GRANT, TOKEN_EXCHANGE_GRANT } from '../../domain/oauth-clients.js';
import type { Grant } from './grant.js';

export const GRANTS: Readonly<Record<string, Grant>> = {
  client_credentials: clientCredentials,
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  [TOKEN_EXCHANGE_GRANT]: tokenExchange,
  [DEVICE_CODE_GRANT]: deviceCode,
};
