// Password reset by mail: the organization starts it for a person (a single-use link, sealed and expiring,
// sent to one of their email handles), and the person completes it at the end-user page with a new password.
// A link is used once: its reset_id is recorded through the organization's actor and WAL like any write.
import { randomBytes } from 'node:crypto';
import { badRequest } from '../errors.js';
import { RESET_NOT_VALID, type PasswordReset } from '../domain/credentials.js';
import { messageTemplate } from '../domain/message-templates.js';
import { requirePerson } from '../domain/lookup.js';
import { handleKey, type Handle } from '../domain/state.js';
import type { Clock } from '../lib/clock.js';
import { createSealer } from '../lib/signed.js';
import type { MailSender } from '../mail/sender.js';
import { renderTemplate } from '../mail/templates.js';
import type { OrgActor } from '../org/actor.js';
import type { Registry } from '../org/registry.js';
import { checkPasswordPolicy, type PasswordHasher } from './password-hash.js';

export const PASSWORD_RESET_PATH = '/password-reset';

export interface ResetRequest {
  reset_handle?: Handle;
  force_change?: boolean;
}

export interface PasswordResets {
  /** Sends the link; with force_change the current password goes first. Resolves with the last write's offset (0: none). */
  start(org: OrgActor, personId: string, request: ResetRequest): Promise<number>;
  /** The organization and person of a link that is still valid (sealed by us, unexpired, unused), or a 400. */
  check(token: string): { org: OrgActor; reset: PasswordReset };
  /** Sets the new password and uses the link; resolves with the organization and the entry's offset. */
  complete(token: string, password: string): Promise<{ org: string; offset: number }>;
}

export interface PasswordResetDeps {
  registry: Registry;
  clock: Clock;
  passwords: PasswordHasher;
  /** undefined when SERVICE_SMTP_URL is not set */
  mail: MailSender | undefined;
  /** seconds a link lives */
  ttl: number;
  /** the service's secret; specialised here so that it seals nothing else */
  secret: Buffer;
  issuer(): string;
}

const PURPOSE = 'password-reset';

/** What the sealed link carries: organization, person, reset id and the handle it went to. */
interface Sealed {
  o: string;
  p: string;
  r: string;
  h: Handle;
}

/** The handle the link goes to: the one asked for (an email address the person holds), else their first email address. */
function recipient(handles: readonly Handle[], asked: Handle | undefined): Handle {
  if (asked !== undefined) {
    const held = handles.find((h) => handleKey(h) === handleKey(asked));
    if (!held) throw badRequest(`reset_handle: not a handle of this person`);
    if (held.type !== 'email_address') throw badRequest(`reset_handle: a reset link is sent by email only; ${held.type} handles cannot receive one`);
    return held;
  }
  const first = handles.find((h) => h.type === 'email_address');
  if (!first) throw badRequest('the person has no email_address handle to send a reset link to');
  return first;
}

export function createPasswordResets(deps: PasswordResetDeps): PasswordResets {
  const sealer = createSealer(deps.secret, 'password reset links');
  const nowS = () => Math.floor(deps.clock.nowMs() / 1000);

  function check(token: string): { org: OrgActor; reset: PasswordReset } {
    const now = nowS();
    const opened = token.length > 2048 ? undefined : sealer.open<Sealed>(PURPOSE, token, -Infinity);
    const exp = opened && readExpiry(token);
    const org = opened && deps.registry.get(opened.o);
    if (!opened || exp === undefined || exp <= now || !org) throw badRequest(RESET_NOT_VALID);
    if (org.state.used_password_resets.has(opened.r) || !org.state.persons.has(opened.p)) throw badRequest(RESET_NOT_VALID);
    return { org, reset: { person_id: opened.p, reset_id: opened.r, handle: opened.h, exp } };
  }

  return {
    async start(org, personId, request) {
      const person = requirePerson(org.state, personId);
      if (!deps.mail) throw badRequest('password reset needs a mail server: SERVICE_SMTP_URL is not configured');
      const to = recipient(person.handles, request.reset_handle);
      let offset = 0;
      if (request.force_change === true) offset = (await org.execute({ kind: 'RemoveCredentials', person_id: personId })).offset;
      const exp = nowS() + deps.ttl;
      const token = sealer.seal(PURPOSE, { o: org.id, p: personId, r: randomBytes(16).toString('base64url'), h: to } satisfies Sealed, exp);
      const url = `${deps.issuer()}${PASSWORD_RESET_PATH}?token=${token}`;
      const message = renderTemplate(messageTemplate(org.state, 'email_password_reset'), {
        password_reset_url: url,
        handle: to.value,
        organization_name: org.state.org_name,
        expires_in_minutes: Math.round(deps.ttl / 60),
      });
      await deps.mail.send({ senderName: message.sender_name, to: to.value, subject: message.subject, text: message.body });
      return offset;
    },
    check,
    async complete(token, password) {
      checkPasswordPolicy(password);
      const { org, reset } = check(token);
      const hash = await deps.passwords.hash(password);
      // The decision checks again: the same link may be completing twice at once; only one commits.
      const outcome = await org.execute({ kind: 'CompletePasswordReset', reset, password_hash: hash });
      return { org: org.id, offset: outcome.offset };
    },
  };
}

/** The expiry sealed into the link (the sealer checked it is ours); the decision compares it with its own clock. */
function readExpiry(token: string): number | undefined {
  try {
    const e = (JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8')) as { e: unknown }).e;
    return typeof e === 'number' ? e : undefined;
  } catch {
    return undefined;
  }
}
