// The token endpoint's grants by grant_type; a new grant is one file and one line here.
import { clientCredentials } from './client-credentials.js';
import type { Grant } from './grant.js';

export const GRANTS: Readonly<Record<string, Grant>> = {
  client_credentials: clientCredentials,
};
