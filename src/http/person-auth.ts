// The authenticator of end-user routes a person calls with their own identity token (Authorization: Bearer):
// the organization is the token's, so no Service-OrgID is needed; anonymous persons' tokens are accepted too.
// A Service-OrgID that is given must be the token's: a request naming one organization is never served for another.
import { quote, ServiceError } from '../errors.js';
import type { TokenValidator } from '../tokens/validate.js';
import type { Authenticator } from './auth.js';

const unauthorized = (message: string) => new ServiceError('ERR_UNAUTHORIZED', message, { headers: { 'WWW-Authenticate': 'Bearer' } });

export function personAuthenticator(validator: Pick<TokenValidator, 'identify'>): Authenticator {
  return {
    headers: ['authorization', 'service-orgid'],
    crossOrigin: true,
    client: false,
    security: [{ personToken: [] }],
    schemes: { personToken: { type: 'http', scheme: 'bearer', bearerFormat: "JWT: the person's identity token" } },
    async authenticate(headers, ctx) {
      const authorization = headers['authorization'];
      if (authorization === undefined) throw unauthorized("Authorization: Bearer and the person's identity token is required");
      const match = /^Bearer\s+(\S+)$/i.exec(authorization);
      if (!match) throw unauthorized("Authorization: must be Bearer and the person's identity token");
      const identified = await validator.identify(match[1] as string);
      if (!('org' in identified)) throw unauthorized(`Authorization: the token is not valid (${identified.invalidity_reason ?? 'invalid'})`);
      const named = headers['service-orgid'];
      if (named !== undefined && named !== identified.org) {
        throw new ServiceError('ERR_FORBIDDEN', `Service-OrgID: names organization ${quote(named)}, but the token is of organization ${quote(identified.org)}; send the token's organization or no Service-OrgID`);
      }
      const org = ctx.registry.get(identified.org);
      if (!org) throw unauthorized('Authorization: the token is not valid (its organization no longer exists)');
      return { kind: 'person', org, person_id: identified.person_id, claims: identified.claims };
    },
  };
}
