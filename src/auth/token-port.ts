// The identity-token interface that sign-in codes against: claims for a person, and signing them.
// The implementation here is a minimal local stand-in (one ES256 key kept in the WAL's metadata); the token
// issuer of src/tokens replaces it, and this file is the only one that changes when it does.
import type { OrgState, Person } from '../domain/state.js';
import { es256Key, generateEs256, signJwt, type PublicJwk } from '../lib/jws.js';
import type { Clock } from '../lib/clock.js';
import type { IdSource } from '../lib/ids.js';
import type { Wal } from '../wal/log.js';

/** Claims that custom claims may not set; a hook returning one has it dropped. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(
  ('aud exp jti iat iss nbf sub prev_token_id oid org_id user_id person_id first_token authenticated_methods oidc_tokens user_token groups roles ' +
    'access_token refresh_token id id_token gdpr gdpr_consent gdpr_consent_level parent_user_id parent_person_id parent_org_id parent_oid attributes ' +
    'custom_claims service sid').split(' '),
);

export interface IssuedToken {
  token: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface IdentityClaimsInput {
  org: OrgState;
  person: Person;
  authenticated_methods: string[];
  first_token: boolean;
  prev_token_id: string | undefined;
  custom_claims: Record<string, unknown>;
  groups_claim_name: string;
}

export interface TokenPort {
  identityClaims(input: IdentityClaimsInput): Record<string, unknown>;
  /** adds jti, iat and exp, and signs */
  issue(claims: Record<string, unknown>): IssuedToken;
  /** the claim that carries a person's groups in this organization's tokens */
  groupsClaimName(org: OrgState): string;
  /** the public keys that verify issued tokens */
  jwks(): { keys: PublicJwk[] };
}

const TOKEN_TTL_SECONDS = 86_400;

export async function createTokenPort(deps: { wal: Pick<Wal, 'getMeta' | 'putMeta'>; issuer(): string; clock: Clock; ids: IdSource }): Promise<TokenPort> {
  let pkcs8 = deps.wal.getMeta<Buffer>('sign_in_token_key');
  if (!pkcs8) {
    pkcs8 = generateEs256();
    await deps.wal.putMeta('sign_in_token_key', pkcs8);
  }
  const key = es256Key(Buffer.from(pkcs8));
  return {
    identityClaims(i) {
      const { person } = i;
      return {
        iss: deps.issuer(),
        aud: i.org.id,
        oid: i.org.id,
        sub: person.person_id,
        person_id: person.person_id,
        first_token: i.first_token,
        authenticated_methods: i.authenticated_methods,
        region: person.region,
        ...(i.prev_token_id !== undefined && { prev_token_id: i.prev_token_id }),
        ...(person.groups.length > 0 && { [i.groups_claim_name]: [...person.groups] }),
        ...i.custom_claims,
      };
    },
    issue(claims) {
      const iat = Math.floor(deps.clock.nowMs() / 1000);
      const jti = deps.ids.uuid();
      const exp = iat + TOKEN_TTL_SECONDS;
      return { token: signJwt(key, { ...claims, iat, exp, jti }), jti, iat, exp };
    },
    groupsClaimName: () => 'groups',
    jwks: () => ({ keys: [key.publicJwk] }),
  };
}
