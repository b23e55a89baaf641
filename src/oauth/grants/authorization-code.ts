// The authorization_code grant (RFC 6749 4.1.3, RFC 7636 4.5): the person's use case redeems the code once.
import type { Grant } from './grant.js';

export const authorizationCode: Grant = ({ caller, params, consistency, dpop }, deps) => deps.users.authorizationCode(caller.org, caller.client, params, consistency, dpop);
