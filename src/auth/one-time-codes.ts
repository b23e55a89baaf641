// Sign-in by a one-time code or link sent to the person: by email (otp_via_email, email_link) through the SMTP
// sender and the organization's message templates, by SMS (otp_via_sms, sms_link) through the configured SMS
// sender. Asking for one answers the browser a ticket (sealed, short-lived) that the value is bound to: a code
// is good only with its ticket, a link opened without it asks for confirmation. The state keeps only hashes
// (domain/one-time-codes.ts); the entry recording the sign-in uses the value up. Sends and wrong values are
// throttled per handle and per client address.
import { randomBytes, randomInt } from 'node:crypto';
import { badRequest, conflict, ServiceError } from '../errors.js';
import { messageTemplate, type MessageTemplateName } from '../domain/message-templates.js';
import { ONE_TIME_REFUSED, oneTimeValue, type OneTimeMethod } from '../domain/one-time-codes.js';
import { handleKey, type Handle, type HandleType } from '../domain/state.js';
import type { Clock } from '../lib/clock.js';
import type { Sealer } from '../lib/signed.js';
import type { MailSender } from '../mail/sender.js';
import { renderTemplate } from '../mail/templates.js';
import { createAdmission, type AdmissionDeps, type SignInContext, type SignInOutcome } from './admission.js';
import type { Limiter } from './throttle.js';

/** sends plus wrong values per handle, and per client address, in SERVICE_AUTH_THROTTLE_WINDOW, before a 429 */
export const ONE_TIME_PER_HANDLE = 5;
export const ONE_TIME_PER_ADDRESS = 30;

/** A text message's port: resolves once the SMS sender accepted it; else a 502. */
export interface SmsSender {
  send(message: { to: string; text: string; organization: string; method: 'otp_via_sms' | 'sms_link' }): Promise<void>;
}

export interface OneTimeDeps extends AdmissionDeps {
  clock: Clock;
  challenges: Sealer;
  /** undefined when SERVICE_SMTP_URL is not set */
  mail: MailSender | undefined;
  /** undefined when SERVICE_SMS_URL is not set */
  sms: SmsSender | undefined;
  throttle: { handle: Limiter; ip: Limiter };
  /** seals the browser's tickets */
  tickets: Sealer;
  /** seconds a code or link lives */
  ttlSecs: number;
  hashKey(value: string): string;
  issuer(): string;
}

interface MethodTraits {
  handleType: HandleType;
  link: boolean;
  template: MessageTemplateName;
  /** AuthenticationFailed's failure_reason for a wrong value (the browser SDK's names) */
  failure: string;
}
const TRAITS: Record<OneTimeMethod, MethodTraits> = {
  otp_via_email: { handleType: 'email_address', link: false, template: 'email_otp_message', failure: 'incorrect_otp_code_via_email' },
  email_link: { handleType: 'email_address', link: true, template: 'email_authn_challenge', failure: 'incorrect_email_link' },
  otp_via_sms: { handleType: 'phone_number', link: false, template: 'text_otp_message', failure: 'incorrect_otp_code_via_sms' },
  sms_link: { handleType: 'phone_number', link: true, template: 'text_authn_challenge', failure: 'incorrect_sms_link' },
};

/** What a ticket carries (signed and expiring, readable by its holder): the organization, method, handle, and the nonce the value is bound to. */
interface Ticket {
  o: string;
  m: OneTimeMethod;
  h: Handle;
  n: string;
}
const TICKET = 'one-time code ticket';

export interface SendRequest extends SignInContext {
  method: OneTimeMethod;
  handle: Handle;
}
export interface Sent {
  /** kept by the browser that asked: a code is answered with it, a link opened with it needs no confirmation */
  ticket: string;
  /** seconds */
  expires_in: number;
}
export interface CodeAnswer extends SignInContext {
  method: 'otp_via_email' | 'otp_via_sms';
  ticket: string;
  code: string;
}
export interface LinkAnswer extends SignInContext {
  method: 'email_link' | 'sms_link';
  token: string;
  ticket?: string | undefined;
  /** the person opened the link in another browser than the one that asked, and confirms the sign-in here */
  confirm?: boolean | undefined;
}

export interface OneTimeCodes {
  /** Sends a code or link to the handle; a handle no active person holds gets nothing, and the same answer. */
  send(r: SendRequest): Promise<Sent>;
  answerCode(a: CodeAnswer): Promise<SignInOutcome>;
  answerLink(a: LinkAnswer): Promise<SignInOutcome>;
}

const throttled = (waitMs: number) =>
  new ServiceError('ERR_TOO_MANY_REQUESTS', 'too many codes asked for or wrong; retry later', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) } });

export function createOneTimeCodes(deps: OneTimeDeps): OneTimeCodes {
  const admission = createAdmission(deps);
  const nowS = () => Math.floor(deps.clock.nowMs() / 1000);

  /** Refuses a throttled handle or address (429), else counts this attempt until it proves good. */
  function reserve(org: string, ip: string, handle: Handle | undefined): () => void {
    const now = deps.clock.nowMs();
    const keys = { handle: handle && `${org}\n${handleKey(handle)}`, ip: `${org}\n${ip}` };
    const wait = Math.max(keys.handle === undefined ? 0 : deps.throttle.handle.retryAfterMs(keys.handle, now), deps.throttle.ip.retryAfterMs(keys.ip, now));
    if (wait > 0) throw throttled(wait);
    if (keys.handle !== undefined) deps.throttle.handle.fail(keys.handle, now);
    deps.throttle.ip.fail(keys.ip, now);
    return () => {
      if (keys.handle !== undefined) deps.throttle.handle.reset(keys.handle);
      deps.throttle.ip.release(keys.ip, now);
    };
  }

  function openTicket(c: SignInContext, method: OneTimeMethod, sealed: string): Ticket {
    const t = sealed.length > 2048 ? undefined : deps.tickets.open<Ticket>(TICKET, sealed, nowS());
    if (t === undefined || t.o !== c.org.id || t.m !== method) throw badRequest(`ticket: not a valid ${method} ticket of this organization, or expired`);
    return t;
  }

  async function deliver(r: SendRequest, traits: MethodTraits, values: Record<string, string>): Promise<void> {
    const message = renderTemplate(messageTemplate(r.org.state, traits.template), {
      ...values,
      handle: r.handle.value,
      organization_name: r.org.state.org_name,
      expires_in_minutes: Math.max(1, Math.round(deps.ttlSecs / 60)),
    });
    if (traits.handleType === 'email_address') {
      await (deps.mail as MailSender).send({ senderName: message.sender_name, to: r.handle.value, subject: message.subject, text: message.body });
    } else {
      await (deps.sms as SmsSender).send({ to: r.handle.value, text: message.body, organization: r.org.id, method: r.method as 'otp_via_sms' | 'sms_link' });
    }
  }

  /** A refused answer, recorded, and the one 401. */
  async function refused(c: SignInContext, method: OneTimeMethod, detail: string, handle?: Handle): Promise<ServiceError> {
    await admission.refuse(c, method, TRAITS[method].failure, detail, { handle });
    return new ServiceError('ERR_UNAUTHORIZED', ONE_TIME_REFUSED);
  }

  /** The value checked out: its person (still active) signs in with it as the proof. */
  async function admit(c: SignInContext, method: OneTimeMethod, person_id: string, hash: string, handle?: Handle): Promise<SignInOutcome> {
    const found = c.org.state.persons.get(person_id);
    const told = handle ?? found?.handles.find((h) => h.type === TRAITS[method].handleType) ?? found?.handles[0];
    const person = await admission.active(c, method, person_id, told);
    if (told === undefined) throw await refused(c, method, 'the person has no handle', undefined);
    return admission.complete(c, { method, person, handle: told, proof: { method, one_time_value: hash } });
  }

  return {
    async send(r) {
      const traits = TRAITS[r.method];
      if (r.handle.type !== traits.handleType) throw badRequest(`handle: ${r.method} is sent to a ${traits.handleType} handle, not ${r.handle.type}`);
      if (traits.handleType === 'email_address' && deps.mail === undefined) throw badRequest(`${r.method} needs a mail server: SERVICE_SMTP_URL is not configured`);
      if (traits.handleType === 'phone_number' && deps.sms === undefined) throw badRequest(`${r.method} needs an SMS sender: SERVICE_SMS_URL is not configured`);
      // A send counts against the handle and the address like a wrong value: a sign-in with the handle clears it.
      reserve(r.org.id, r.ip, r.handle);
      await admission.policy(r, r.method, r.handle);
      const nonce = randomBytes(16).toString('base64url');
      const ticket = deps.tickets.seal(TICKET, { o: r.org.id, m: r.method, h: r.handle, n: nonce } satisfies Ticket, nowS() + deps.ttlSecs);
      const sent: Sent = { ticket, expires_in: deps.ttlSecs };
      const id = r.org.state.handles.get(handleKey(r.handle));
      const person = id === undefined ? undefined : r.org.state.persons.get(id);
      // Nobody to send to answers the same: the answer never tells whether the handle exists.
      if (person === undefined || !person.active) return sent;
      let value: string;
      let hash: string;
      if (traits.link) {
        value = randomBytes(32).toString('base64url');
        hash = deps.hashKey(value);
      } else {
        value = String(randomInt(0, 1_000_000)).padStart(6, '0');
        hash = deps.hashKey(`${nonce}\n${value}`);
      }
      await r.org.execute({ kind: 'IssueOneTimeCode', person_id: person.person_id, method: r.method, hash, ticket: deps.hashKey(nonce), ttl_secs: deps.ttlSecs });
      await deliver(r, traits, traits.link ? { link_url: `${deps.issuer()}/authenticate/${r.method}?token=${value}` } : { code: value });
      return sent;
    },

    async answerCode(a) {
      const t = openTicket(a, a.method, a.ticket);
      const release = reserve(a.org.id, a.ip, t.h);
      await admission.policy(a, a.method, t.h);
      const hash = deps.hashKey(`${t.n}\n${a.code}`);
      const value = /^[0-9]{6}$/.test(a.code) ? oneTimeValue(a.org.state, a.method, hash, deps.clock.nowMs()) : undefined;
      if (value === undefined) throw await refused(a, a.method, 'wrong, expired or used code', t.h);
      release();
      return admit(a, a.method, value.person_id, hash, t.h);
    },

    async answerLink(a) {
      const release = reserve(a.org.id, a.ip, undefined);
      await admission.policy(a, a.method);
      const hash = deps.hashKey(a.token);
      const value = oneTimeValue(a.org.state, a.method, hash, deps.clock.nowMs());
      if (value === undefined) throw await refused(a, a.method, 'unknown, expired or used link');
      const t = a.ticket === undefined ? undefined : openTicket(a, a.method, a.ticket);
      const bound = t !== undefined && value.ticket === deps.hashKey(t.n);
      if (!bound && a.confirm !== true) {
        release();
        throw conflict('this link was asked for in another browser: confirm the sign-in here with confirm: true, or open it in the browser that asked');
      }
      release();
      return admit(a, a.method, value.person_id, hash, bound ? t?.h : undefined);
    },
  };
}
