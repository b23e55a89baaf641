// Decisions about identity tokens: recording one that was signed for a person, with its TokenMinted event.
import { badRequest } from '../errors.js';
import type { TokenRecord } from './commands.js';
import { decision, type Decision, type EventDraft } from './decision.js';
import { requirePerson } from './lookup.js';
import type { OrgState } from './state.js';

/**
 * The token was signed before this command was decided; it is handed out only if this decision commits.
 * A person deleted or deactivated in between therefore never receives it.
 */
export function recordToken(state: OrgState, token: TokenRecord): Decision<null> {
  const person = requirePerson(state, token.person_id);
  if (!person.active) throw badRequest(`person ${person.person_id} is not active`);
  const common = {
    token_id: token.token_id,
    person_id: person.person_id,
    mint_token_api: token.mint_token_api,
    issued_at: token.issued_at,
    expires_at: token.expires_at,
  };
  const event: EventDraft =
    person.person_type === 'anonymous'
      ? { name: 'AnonymousTokenMinted_v1', body: common }
      : {
          name: 'TokenMinted_v1',
          body: {
            ...common,
            ...(token.prev_anonymous_person_id === undefined ? {} : { prev_anonymous_person_id: token.prev_anonymous_person_id }),
            first_token: token.first_token,
            authentications: token.authentications,
          },
        };
  return decision(null, [{ t: 'PersonTokenMinted', person_id: person.person_id, token_id: token.token_id }], [event]);
}
