// TOTP (RFC 6238) as a second factor: enrollment (a secret sealed under SERVICE_SECRETS_KEY, its otpauth:// URI
// and a QR code of it as SVG), confirmation by a first code, recovery codes, and the answer to a second-factor
// challenge. Codes are six digits of HMAC-SHA1 over 30-second steps, what every authenticator app makes;
// one step either side is accepted, each step once. The codes' arithmetic is @otplib/totp's.
import { TOTP, verify } from '@otplib/totp';
import { NodeCryptoPlugin } from '@otplib/plugin-crypto-node';
import { ScureBase32Plugin } from '@otplib/plugin-base32-scure';
import encodeQR from '@paulmillr/qr';
import { badRequest, notFound, ServiceError } from '../errors.js';
import type { StoredSecret } from '../domain/state.js';
import { TOTP_REFUSED } from '../domain/totp.js';
import { openBytes, sealBytes } from '../lib/seal.js';
import type { Clock } from '../lib/clock.js';
import { createAdmission, type AdmissionDeps, type Admitted, type SignInContext } from './admission.js';
import type { IssuingOrg } from './issue.js';
import type { Limiter } from './throttle.js';
import type { SignedIn } from './verify.js';

const METHOD = 'totp' as const;
const crypto = new NodeCryptoPlugin();
const base32 = new ScureBase32Plugin();
const secrets = new TOTP({ crypto, base32 });
/** seconds a code lives */
const PERIOD = 30;
/** wrong codes (or recovery codes) a person may send per SERVICE_AUTH_THROTTLE_WINDOW before a 429 */
export const TOTP_FAILURES_PER_WINDOW = 5;

export interface TotpDeps extends AdmissionDeps {
  clock: Clock;
  /** SERVICE_SECRETS_KEY and SERVICE_SECRETS_KEY_PREVIOUS: the secrets are sealed under the first */
  secretsKey?: Buffer | undefined;
  previousSecretsKey?: Buffer | undefined;
  /** wrong codes per person, per organization */
  throttle: Limiter;
  hashKey(value: string): string;
}

export interface Enrollment {
  credential_id: string;
  /** otpauth://totp/... for an authenticator app; shown once, like the QR code of it */
  key_uri: string;
  /** the key URI as a QR code (SVG) */
  qr_code_svg: string;
}

export interface TotpAnswer extends SignInContext {
  challenge: string;
  code?: string | undefined;
  recovery_code?: string | undefined;
}

export interface TotpService {
  enroll(org: IssuingOrg, person_id: string): Promise<Enrollment>;
  /** The first code confirms the enrollment; answers the ten recovery codes, shown this once. */
  confirm(org: IssuingOrg, person_id: string, credential_id: string, code: string): Promise<string[]>;
  regenerateRecoveryCodes(org: IssuingOrg, person_id: string): Promise<string[]>;
  /** A second-factor challenge answered with a code or a recovery code: the identity token. */
  authenticate(a: TotpAnswer): Promise<string>;
  /** The same answer recorded without a token: the hosted OAuth page, whose client gets its own tokens later. */
  verify(a: TotpAnswer): Promise<SignedIn>;
}

const NONCE = 12;
const TAG = 16;

export function createTotp(deps: TotpDeps): TotpService {
  const admission = createAdmission(deps);
  const boundTo = (org: string, person_id: string) => `totp:${org}:${person_id}`;

  function seal(org: string, person_id: string, secret: string): StoredSecret {
    if (!deps.secretsKey) return { plain: secret };
    const s = sealBytes(deps.secretsKey, boundTo(org, person_id), Buffer.from(secret, 'utf8'));
    return { sealed: 'aes-256-gcm', box: Buffer.concat([s.nonce, s.tag, s.data]).toString('base64url') };
  }

  function open(org: string, person_id: string, stored: StoredSecret): string {
    if ('plain' in stored) return stored.plain;
    const b = Buffer.from(stored.box, 'base64url');
    const sealed = { nonce: b.subarray(0, NONCE), tag: b.subarray(NONCE, NONCE + TAG), data: b.subarray(NONCE + TAG) };
    const name = boundTo(org, person_id);
    const plain = (deps.secretsKey && openBytes(deps.secretsKey, name, sealed)) ?? (deps.previousSecretsKey && openBytes(deps.previousSecretsKey, name, sealed));
    if (!plain) throw new ServiceError('ERR_INTERNAL', 'internal error', { cause: new Error(`SERVICE_SECRETS_KEY does not open the TOTP secret of person ${person_id} in ${org}`) });
    return plain.toString('utf8');
  }

  /** The time step a code is good for now (±1 step), later than `after`; undefined for a wrong or used one. */
  async function stepOf(secret: string, code: string, after: number): Promise<number | undefined> {
    if (!/^[0-9]{6}$/.test(code)) return undefined;
    const epoch = Math.floor(deps.clock.nowMs() / 1000);
    const result = await verify({ secret, token: code, crypto, base32, epoch, period: PERIOD, epochTolerance: PERIOD, ...(after > 0 && { afterTimeStep: after }) });
    return result.valid ? result.timeStep : undefined;
  }

  /**
   * Refuses a person throttled for wrong codes (429), else counts this attempt as one until it proves good;
   * a good code clears the count.
   */
  function reserve(org: IssuingOrg, person_id: string): () => void {
    const key = `${org.id}\n${person_id}`;
    const now = deps.clock.nowMs();
    const wait = deps.throttle.retryAfterMs(key, now);
    if (wait > 0) throw new ServiceError('ERR_TOO_MANY_REQUESTS', 'too many wrong codes; retry later', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(wait / 1000))) } });
    deps.throttle.fail(key, now);
    return () => deps.throttle.reset(key);
  }

  /** A challenge answered: the code (or recovery code) checked, each wrong one recorded and counted. */
  async function answered(a: TotpAnswer): Promise<{ c: SignInContext; admitted: Admitted }> {
    const challenge = admission.challenge(a.org, a.challenge);
    if ((a.code === undefined) === (a.recovery_code === undefined)) throw badRequest('one of code and recovery_code is required');
    // The request goes on with what the first factor's request carried.
    const c: SignInContext = { ...a, anonymous_person_id: challenge.anonymous_person_id, analytics_correlation_id: challenge.analytics_correlation_id };
    await admission.policy(c, METHOD, challenge.handle, { second: true });
    const release = reserve(a.org, challenge.person_id);
    const person = await admission.active(c, METHOD, challenge.person_id, challenge.handle);
    const t = person.totp;
    const refused = async (detail: string) => {
      await admission.refuse(c, METHOD, 'invalid_credentials', detail, { handle: challenge.handle, person_id: person.person_id });
      return new ServiceError('ERR_UNAUTHORIZED', TOTP_REFUSED);
    };
    if (t === undefined || !t.confirmed) throw await refused('the person has no TOTP credential');
    let proof: { method: 'totp'; totp_step: number } | { method: 'totp'; recovery_code: string };
    if (a.recovery_code !== undefined) {
      const hash = deps.hashKey(a.recovery_code);
      if (!t.recovery_codes.includes(hash)) throw await refused('not an unused recovery code');
      proof = { method: METHOD, recovery_code: hash };
    } else {
      const step = await stepOf(open(a.org.id, person.person_id, t.secret), a.code as string, t.last_step);
      if (step === undefined) throw await refused('wrong, expired or used code');
      proof = { method: METHOD, totp_step: step };
    }
    release();
    return { c, admitted: { method: METHOD, person, handle: challenge.handle, proof, earlier: challenge } };
  }

  return {
    async enroll(org, person_id) {
      const person = org.state.persons.get(person_id);
      if (!person) throw notFound(`person ${person_id} not found`);
      const secret = secrets.generateSecret();
      const outcome = await org.execute({ kind: 'EnrollTotp', person_id, secret: seal(org.id, person_id, secret) });
      const label = person.handles[0]?.value ?? person_id;
      const key_uri = `otpauth://totp/${encodeURIComponent(org.id)}:${encodeURIComponent(label)}?secret=${secret}&issuer=${encodeURIComponent(org.id)}&algorithm=SHA1&digits=6&period=${PERIOD}`;
      return { credential_id: outcome.reply as string, key_uri, qr_code_svg: encodeQR(key_uri, 'svg') };
    },

    async confirm(org, person_id, credential_id, code) {
      const t = org.state.persons.get(person_id)?.totp;
      if (t === undefined || t.credential_id !== credential_id) throw notFound(`person ${person_id} has no TOTP enrollment ${credential_id}`);
      const release = reserve(org, person_id);
      const step = await stepOf(open(org.id, person_id, t.secret), code, 0);
      if (step === undefined) throw badRequest(`code: ${TOTP_REFUSED} for this enrollment`);
      release();
      const outcome = await org.execute({ kind: 'ConfirmTotp', person_id, credential_id, step });
      return outcome.reply as string[];
    },

    async regenerateRecoveryCodes(org, person_id) {
      return (await org.execute({ kind: 'RegenerateRecoveryCodes', person_id })).reply as string[];
    },

    async authenticate(a) {
      const { c, admitted } = await answered(a);
      return admission.issue(c, admitted);
    },

    async verify(a) {
      const { c, admitted } = await answered(a);
      return deps.pipeline.verify(a.org, admission.request(c, admitted));
    },
  };
}
