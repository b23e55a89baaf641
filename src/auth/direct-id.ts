// Direct-id sign-in: a one-time value the organization issued for a person (POST /persons/{id}/direct-id),
// the first step in front of the issuing pipeline (issue.ts), which runs the hooks and records the token
// together with the value's use, so a value signs in once.
import { ServiceError } from '../errors.js';
import { DIRECT_ID_REFUSED, directIdPerson } from '../domain/direct-id.js';
import { SIGN_IN_DENIED } from '../domain/sign-in.js';
import type { Handle } from '../domain/state.js';
import { rfc3339Nanos } from '../lib/time-text.js';
import type { Clock } from '../lib/clock.js';
import type { Consistency, IssuePipeline, IssuingOrg } from './issue.js';

const METHOD = 'direct_id' as const;

export interface DirectIdDeps {
  clock: Clock;
  pipeline: Pick<IssuePipeline, 'issue' | 'refuse'>;
  /** the SHA-256 (hex) the organization's state keeps values by: the same function decide() hashed with */
  hashKey(value: string): string;
}

export interface DirectIdAttempt {
  org: IssuingOrg;
  direct_id: string;
  ip: string;
  origin: string;
  userAgent: string;
  consistency: Consistency;
}

export interface DirectIdSignIn {
  /** The identity token; 401 for an unknown, used or expired value, or a person who may not sign in. */
  authenticate(a: DirectIdAttempt): Promise<string>;
}

export function createDirectIdSignIn(deps: DirectIdDeps): DirectIdSignIn {
  return {
    async authenticate(a) {
      const hash = deps.hashKey(a.direct_id);
      const refuse = async (failure_reason: string, failure_detail: string, handle?: Handle, person_id?: string) => {
        await deps.pipeline.refuse(a.org, a.consistency, { method: METHOD, client_ip_address: a.ip, failure_reason, failure_detail, ...(handle && { handle }), ...(person_id !== undefined && { person_id }) });
      };
      const personId = directIdPerson(a.org.state, hash, deps.clock.nowMs());
      if (personId === undefined) {
        await refuse('invalid_credentials', DIRECT_ID_REFUSED);
        throw new ServiceError('ERR_UNAUTHORIZED', DIRECT_ID_REFUSED);
      }
      const person = a.org.state.persons.get(personId);
      // The handle the sign-in is told by: an email address where the person has one.
      const handle = person?.handles.find((h) => h.type === 'email_address') ?? person?.handles[0];
      if (!person || !person.active || !handle) {
        await refuse('person_not_active', !person ? 'the person was deleted' : !person.active ? 'the person is not active' : 'the person has no handle', handle, personId);
        throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
      }
      const issued = await deps.pipeline.issue(a.org, {
        method: METHOD,
        person,
        handle,
        authentications: [{ handle, method: METHOD, timestamp: rfc3339Nanos(deps.clock.nowNs()) }],
        request_metadata: { client_ip_address: a.ip, origin: a.origin, user_agent: a.userAgent },
        consistency: a.consistency,
        direct_id: hash,
      });
      return issued.token;
    },
  };
}
