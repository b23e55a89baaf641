// Direct-id sign-in: a one-time value the organization issued for a person (POST /persons/{id}/direct-id),
// the first step in front of the issuing pipeline (issue.ts), which runs the hooks and records the token
// together with the value's use, so a value signs in once.
import { ServiceError } from '../errors.js';
import { DIRECT_ID_REFUSED, directIdPerson } from '../domain/direct-id.js';
import { SIGN_IN_DENIED } from '../domain/sign-in.js';
import type { Clock } from '../lib/clock.js';
import type { Sealer } from '../lib/signed.js';
import { createAdmission, type SignInContext, type SignInOutcome } from './admission.js';
import type { IssuePipeline } from './issue.js';

const METHOD = 'direct_id' as const;

export interface DirectIdDeps {
  clock: Clock;
  pipeline: Pick<IssuePipeline, 'issue' | 'verify' | 'refuse'>;
  /** signs the challenge a person who holds a second factor answers */
  challenges: Sealer;
  /** the SHA-256 (hex) the organization's state keeps values by: the same function decide() hashed with */
  hashKey(value: string): string;
}

export interface DirectIdAttempt extends SignInContext {
  direct_id: string;
}

export interface DirectIdSignIn {
  /**
   * The identity token (or a challenge for a person who holds a second factor); 401 for an unknown, used or
   * expired value, or a person who may not sign in.
   */
  authenticate(a: DirectIdAttempt): Promise<SignInOutcome>;
}

export function createDirectIdSignIn(deps: DirectIdDeps): DirectIdSignIn {
  const admission = createAdmission(deps);
  return {
    async authenticate(a) {
      const hash = deps.hashKey(a.direct_id);
      const personId = directIdPerson(a.org.state, hash, deps.clock.nowMs());
      if (personId === undefined) {
        await admission.refuse(a, METHOD, 'invalid_credentials', DIRECT_ID_REFUSED);
        throw new ServiceError('ERR_UNAUTHORIZED', DIRECT_ID_REFUSED);
      }
      const found = a.org.state.persons.get(personId);
      // The handle the sign-in is told by: an email address where the person has one.
      const handle = found?.handles.find((h) => h.type === 'email_address') ?? found?.handles[0];
      const person = await admission.active(a, METHOD, personId, handle);
      if (!handle) {
        await admission.refuse(a, METHOD, 'person_not_active', 'the person has no handle', { person_id: personId });
        throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
      }
      return admission.complete(a, { method: METHOD, person, handle, proof: { method: METHOD, direct_id: hash } });
    },
  };
}
