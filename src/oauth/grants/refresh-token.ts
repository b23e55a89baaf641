// The refresh_token grant (RFC 6749 6): rotation on every use, reuse revoking the family (RFC 9700 4.14.2).
import type { Grant } from './grant.js';

export const refreshToken: Grant = ({ caller, params, consistency, dpop }, deps) => deps.users.refreshToken(caller.org, caller.client, params, consistency, dpop);
