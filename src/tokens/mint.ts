// Issuing an identity token for a person: claims from the organization's state, the signature, and the
// durable record of it (the person's last token and a TokenMinted event, in one WAL transaction).
// The mint-token API and the sign-in paths both come through here.
import { badRequest } from '../errors.js';
import type { AuthenticationDetails } from '../domain/commands.js';
import { requirePerson } from '../domain/lookup.js';
import { formatRfc3339 } from '../lib/time-text.js';
import type { OrgActor } from '../org/actor.js';
import { identityClaims } from './claims.js';
import type { IssuedToken, PendingToken, TokenIssuer } from './sign.js';

export interface MintRequest {
  /** ['api'] for the mint-token API; the methods used for a sign-in */
  authenticated_methods: readonly string[];
  /** [] for the mint-token API; the sign-in's steps otherwise */
  authentications: AuthenticationDetails[];
  mint_token_api: boolean;
  /** default: true when the person has never had a token */
  first_token?: boolean;
  /** reserved names are dropped; a caller that must refuse them (the API: 400) checks first */
  custom_claims?: Record<string, unknown>;
  groups_claim_name?: string;
  prev_anonymous_person_id?: string;
}

export interface MintedToken extends IssuedToken {
  /** the WAL offset of the record, for consistency waits */
  offset: number;
}

export interface TokenMinter {
  readonly issuer: TokenIssuer;
  /**
   * Resolves once the token is durably recorded; only then may it be handed out.
   * Unknown person → 404; inactive person → 400 (also when that changes while the record is queued).
   */
  mint(org: OrgActor, personId: string, request: MintRequest): Promise<MintedToken>;
  /** Whether the person's next token would be their first (for a token_minted hook's trigger_content). */
  firstToken(org: OrgActor, personId: string): boolean;
  /** The prev_token_id of the person's next token: their newest token, signed and recorded or only signed. */
  previousToken(org: OrgChain, personId: string): string | undefined;
  /**
   * Starts `record`, the durable record of `token`, and resolves with its outcome and the signed token once
   * both are done. Until then the token is the person's newest. mint() records through here; sign-in,
   * which issues its token itself, too.
   */
  record<T>(org: OrgChain, personId: string, token: PendingToken, record: () => Promise<T>): Promise<[T, string]>;
}

/** What the chain of a person's tokens needs of an organization. */
type OrgChain = Pick<OrgActor, 'id' | 'state'>;

const chainKey = (org: OrgChain, personId: string) => `${org.id}\n${personId}`;

export function createTokenMinter(issuer: TokenIssuer): TokenMinter {
  // A person's tokens signed but not yet decided by the actor, newest last: the next token's
  // prev_token_id must name the newest of them, not the last one already in the state.
  const pending = new Map<string, string>();

  const previousToken = (org: OrgChain, personId: string) => pending.get(chainKey(org, personId)) ?? org.state.persons.get(personId)?.last_token_id;
  const record = async <T>(org: OrgChain, personId: string, token: PendingToken, commit: () => Promise<T>): Promise<[T, string]> => {
    const key = chainKey(org, personId);
    pending.set(key, token.jti);
    try {
      // The signature is made while the record commits; the token leaves only with both.
      return await Promise.all([commit(), token.token]);
    } finally {
      if (pending.get(key) === token.jti) pending.delete(key);
    }
  };

  return {
    issuer,
    previousToken,
    record,
    firstToken(org, personId) {
      return previousToken(org, personId) === undefined;
    },
    async mint(org, personId, request) {
      const person = requirePerson(org.state, personId);
      if (!person.active) throw badRequest(`person ${personId} is not active`);
      const prev = previousToken(org, personId);
      const claims = identityClaims({
        org: org.id,
        person,
        authenticated_methods: request.authenticated_methods,
        first_token: request.first_token ?? prev === undefined,
        prev_token_id: prev,
        custom_claims: request.custom_claims,
        groups_claim_name: request.groups_claim_name,
      });
      const issued = issuer.issue(claims);
      const [outcome, token] = await record(org, personId, issued, () =>
        org.execute({
          kind: 'RecordToken',
          token: {
            person_id: personId,
            token_id: issued.jti,
            mint_token_api: request.mint_token_api,
            first_token: claims['first_token'] as boolean,
            // The token's own iat and exp, so that the event and the token agree to the second.
            issued_at: formatRfc3339(issued.iat, 0, 9),
            expires_at: formatRfc3339(issued.exp, 0, 9),
            authentications: request.authentications,
            ...(request.prev_anonymous_person_id === undefined ? {} : { prev_anonymous_person_id: request.prev_anonymous_person_id }),
          },
        }),
      );
      return { ...issued, token, offset: outcome.offset };
    },
  };
}
