// Passkeys (WebAuthn): the registration and authentication ceremonies, verified by @simplewebauthn/server. The
// relying party is the organization's site the ceremony runs on: the page's origin must be one of its allowed
// domains, and that host is the RP ID, so a passkey made on one organization's site is no use on another's.
// A challenge is a value only this service makes, naming the organization, the ceremony and (when known) the
// person, valid five minutes; the entry that records the ceremony uses it up, durably, so each counts once.
import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { badRequest, notFound, ServiceError } from '../errors.js';
import { domainAllows } from '../domain/domains.js';
import { PASSKEY_REFUSED, type ExportedPasskey, type Passkey, type UsedChallenge } from '../domain/passkeys.js';
import type { Handle, Person } from '../domain/state.js';
import { handleKey } from '../domain/state.js';
import type { Clock } from '../lib/clock.js';
import type { Sealer } from '../lib/signed.js';
import { createAdmission, type AdmissionDeps, type Admitted, type Challenge, type SignInContext, type SignInOutcome } from './admission.js';
import type { SignedIn } from './verify.js';
import type { IssuingOrg } from './issue.js';

const METHOD = 'webauthn' as const;
/** seconds a ceremony may take */
export const CEREMONY_TTL_S = 300;
const PURPOSE = 'webauthn ceremony';

export interface WebauthnDeps extends AdmissionDeps {
  clock: Clock;
  /** signs the ceremonies' challenges (and the second-factor challenges, through the admission step) */
  ceremonies: Sealer;
  hashKey(value: string): string;
}

/** What a ceremony's challenge carries. */
interface Ceremony {
  org: string;
  kind: 'register' | 'authenticate';
  /** the person registering, or the one a second factor (or a handle) named; absent for a discoverable sign-in */
  person_id?: string;
  nonce: string;
  /** seconds since the epoch: the seal's own expiry, kept with the used challenge until then */
  exp: number;
}

export interface PasskeyAttempt extends SignInContext {
  credential: AuthenticationResponseJSON;
  /** a first factor's second-factor challenge this assertion answers */
  challenge?: string | undefined;
}

export interface PasskeyService {
  registrationOptions(org: IssuingOrg, person_id: string, origin: string): Promise<PublicKeyCredentialCreationOptionsJSON>;
  register(org: IssuingOrg, person_id: string, origin: string, response: RegistrationResponseJSON, label?: string): Promise<ExportedPasskey>;
  /** Options for a sign-in: discoverable (no handle), the handle's passkeys, or those of a second-factor challenge's person. */
  authenticationOptions(org: IssuingOrg, origin: string, given: { handle?: Handle | undefined; challenge?: string | undefined }): Promise<PublicKeyCredentialRequestOptionsJSON>;
  authenticate(a: PasskeyAttempt): Promise<SignInOutcome>;
  /**
   * The hosted sign-in page (the service's own, at `pageOrigin`): options for answering a second-factor
   * challenge with a passkey usable there, or undefined when the person holds none that is.
   */
  hostedOptions(org: IssuingOrg, pageOrigin: string, challenge: string): Promise<PublicKeyCredentialRequestOptionsJSON | undefined>;
  /** The hosted page's answer to a challenge with a passkey, recorded without a token (its client gets its own later). */
  verify(a: PasskeyAttempt & { challenge: string }): Promise<SignedIn>;
}

/** Where an assertion may come from: the page's origin, and the RP IDs its passkeys may be bound to. */
interface Party {
  rpID: string[];
  origin: string;
}

/**
 * The hosted sign-in page's relying party for a person: the page is the service's own, so a passkey the person
 * made on the organization's site serves there when its RP ID is the page's host or a parent domain of it
 * (WebAuthn's registrable-suffix rule: a passkey of example.com signs on login.example.com). Undefined when
 * none of theirs can; the most specific RP ID first.
 */
function hostedParty(person: Person, pageOrigin: string): Party | undefined {
  let host: string;
  try {
    host = new URL(pageOrigin).hostname;
  } catch {
    return undefined;
  }
  const ids = [...new Set((person.webauthn?.credentials ?? []).map((c) => c.rp_id))].filter((id) => host === id || host.endsWith(`.${id}`));
  return ids.length === 0 ? undefined : { rpID: ids.sort((x, y) => y.length - x.length), origin: new URL(pageOrigin).origin };
}

/** The handle a sign-in is told by: an email address where the person has one. */
const contact = (person: Person): Handle | undefined => person.handles.find((h) => h.type === 'email_address') ?? person.handles[0];

export function createPasskeys(deps: WebauthnDeps): PasskeyService {
  const admission = createAdmission(deps);
  const nowS = () => Math.floor(deps.clock.nowMs() / 1000);

  /** The RP ID and the one expected origin: the page's, when its host is one of the organization's allowed domains. */
  function relyingParty(org: IssuingOrg, origin: string): { rpID: string; origin: string } {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw badRequest('Origin: a passkey ceremony runs on a page of the organization; the request carries no page origin');
    }
    if (!domainAllows(org.state.allowed_domains, url.hostname)) {
      throw badRequest(`Origin: ${url.hostname} is not one of the organization's allowed domains (POST /organizations/config/domains)`);
    }
    return { rpID: url.hostname, origin: url.origin };
  }

  /** A fresh challenge, as the bytes the authenticator signs: the sealed ceremony itself. */
  function challengeFor(ceremony: Omit<Ceremony, 'nonce' | 'exp'>): Uint8Array<ArrayBuffer> {
    const exp = nowS() + CEREMONY_TTL_S;
    const sealed = deps.ceremonies.seal(PURPOSE, { ...ceremony, nonce: randomBytes(16).toString('base64url'), exp }, exp);
    return new Uint8Array(Buffer.from(sealed, 'utf8'));
  }

  /** The ceremony a response's challenge (base64url of the sealed value) names, or undefined for one not made here, used elsewhere or expired. */
  function ceremonyOf(challenge: string): { ceremony: Ceremony; used: UsedChallenge } | undefined {
    const sealed = Buffer.from(challenge, 'base64url').toString('utf8');
    const ceremony = deps.ceremonies.open<Ceremony>(PURPOSE, sealed, nowS());
    if (ceremony === undefined) return undefined;
    return { ceremony, used: { hash: deps.hashKey(sealed), exp_ms: ceremony.exp * 1000 } };
  }

  const view = (p: Passkey): ExportedPasskey => ({
    id: p.id,
    type: 'public-key',
    params: { webauthn_credential_id: p.webauthn_credential_id, public_key: p.public_key, attestation_type: p.attestation_type, authenticator: { aaguid: p.aaguid, sign_count: p.counter, clone_warning: false } },
    ...(p.label !== undefined && { label: p.label }),
  });

  /** Options for an assertion under one RP ID: the person's passkeys of it, or discoverable ones for no person. */
  function requestOptions(org: IssuingOrg, rpID: string, person: Person | undefined): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const bytes = challengeFor({ org: org.id, kind: 'authenticate', ...(person && { person_id: person.person_id }) });
    // An unknown handle gets discoverable options, as a known one without passkeys: nothing tells them apart.
    const allow = (person?.webauthn?.credentials ?? []).filter((c) => c.rp_id === rpID);
    return generateAuthenticationOptions({
      rpID,
      challenge: bytes,
      userVerification: 'preferred',
      timeout: CEREMONY_TTL_S * 1000,
      ...(allow.length > 0 && { allowCredentials: allow.map((c) => ({ id: c.webauthn_credential_id, transports: c.transports as never })) }),
    });
  }

  /**
   * An assertion checked: the person (a second factor's, else the one the discoverable credential names), their
   * passkey of one of these RP IDs, the signature, counter and single-use challenge; each refusal recorded.
   */
  async function asserted(a: PasskeyAttempt, rp: Party): Promise<{ c: SignInContext; admitted: Admitted }> {
    const earlier: Challenge | undefined = a.challenge === undefined ? undefined : admission.challenge(a.org, a.challenge);
    const c: SignInContext = earlier === undefined ? a : { ...a, anonymous_person_id: earlier.anonymous_person_id, analytics_correlation_id: earlier.analytics_correlation_id };
    await admission.policy(c, METHOD, earlier?.handle, { second: earlier !== undefined });
    const refused = async (detail: string, person?: Person) => {
      await admission.refuse(c, METHOD, 'invalid_credentials', detail, { handle: earlier?.handle ?? (person && contact(person)), person_id: person?.person_id });
      return new ServiceError('ERR_UNAUTHORIZED', PASSKEY_REFUSED);
    };
    const userHandle = a.credential.response?.userHandle;
    const person_id = earlier?.person_id ?? (typeof userHandle === 'string' ? Buffer.from(userHandle, 'base64url').toString('utf8') : undefined);
    const found = person_id === undefined ? undefined : a.org.state.persons.get(person_id);
    const credential = found?.webauthn?.credentials.find((k) => k.webauthn_credential_id === a.credential.id && rp.rpID.includes(k.rp_id));
    if (found === undefined || credential === undefined) throw await refused('no passkey of this organization has this ID', found);
    let used: UsedChallenge | undefined;
    const expectedChallenge = (challenge: string) => {
      const ceremony = ceremonyOf(challenge);
      if (ceremony === undefined || ceremony.ceremony.org !== a.org.id || ceremony.ceremony.kind !== 'authenticate') return false;
      if (ceremony.ceremony.person_id !== undefined && ceremony.ceremony.person_id !== found.person_id) return false;
      used = ceremony.used;
      return true;
    };
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response: a.credential,
        expectedChallenge,
        expectedOrigin: rp.origin,
        expectedRPID: credential.rp_id,
        credential: { id: credential.webauthn_credential_id, publicKey: new Uint8Array(Buffer.from(credential.public_key, 'base64url')), counter: credential.counter, transports: credential.transports as never },
        requireUserVerification: false,
      });
    } catch (error) {
      // A counter that went backwards says the authenticator was cloned: refused like any bad assertion.
      throw await refused(`the assertion was not verified: ${(error as Error).message}`, found);
    }
    if (!verified.verified || used === undefined) throw await refused('the assertion was not verified', found);
    const person = await admission.active(c, METHOD, found.person_id, earlier?.handle ?? contact(found));
    const handle = earlier?.handle ?? contact(person);
    if (handle === undefined) throw await refused('the person has no handle', person);
    const proof = {
      method: METHOD,
      webauthn_credential_id: credential.webauthn_credential_id,
      webauthn_counter: verified.authenticationInfo.newCounter,
      webauthn_backup_state: verified.authenticationInfo.credentialBackedUp,
      webauthn_challenge: used,
    };
    return { c, admitted: { method: METHOD, person, handle, proof, ...(earlier !== undefined && { earlier }) } };
  }

  return {
    async registrationOptions(org, person_id, origin) {
      const person = org.state.persons.get(person_id);
      if (!person) throw notFound(`person ${person_id} not found`);
      const rp = relyingParty(org, origin);
      const bytes = challengeFor({ org: org.id, kind: 'register', person_id });
      const name = contact(person)?.value ?? person_id;
      return generateRegistrationOptions({
        rpName: org.id,
        rpID: rp.rpID,
        userName: name,
        userID: new Uint8Array(Buffer.from(person_id, 'utf8')),
        challenge: bytes,
        attestationType: 'none',
        excludeCredentials: (person.webauthn?.credentials ?? []).map((c) => ({ id: c.webauthn_credential_id, transports: c.transports as never })),
        // Discoverable, so it signs in without a handle; user verification where the authenticator has it.
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
        timeout: CEREMONY_TTL_S * 1000,
      });
    },

    async register(org, person_id, origin, response, label) {
      if (!org.state.persons.has(person_id)) throw notFound(`person ${person_id} not found`);
      const rp = relyingParty(org, origin);
      let used: UsedChallenge | undefined;
      const expectedChallenge = (challenge: string) => {
        const found = ceremonyOf(challenge);
        if (found === undefined || found.ceremony.org !== org.id || found.ceremony.kind !== 'register' || found.ceremony.person_id !== person_id) return false;
        used = found.used;
        return true;
      };
      let verified;
      try {
        verified = await verifyRegistrationResponse({ response, expectedChallenge, expectedOrigin: rp.origin, expectedRPID: rp.rpID, requireUserVerification: false });
      } catch (error) {
        throw badRequest(`credential: the registration was not verified (${(error as Error).message})`);
      }
      if (!verified.verified || used === undefined) throw badRequest('credential: the registration was not verified');
      const info = verified.registrationInfo;
      const passkey: Omit<Passkey, 'id' | 'created'> = {
        webauthn_credential_id: info.credential.id,
        public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
        counter: info.credential.counter,
        transports: info.credential.transports ?? [],
        aaguid: info.aaguid,
        attestation_type: info.fmt,
        rp_id: rp.rpID,
        backup_eligible: info.credentialDeviceType === 'multiDevice',
        backup_state: info.credentialBackedUp,
        ...(label !== undefined && { label }),
      };
      const outcome = await org.execute({ kind: 'AddPasskey', person_id, passkey, challenge: used });
      return view(outcome.reply as Passkey);
    },

    async authenticationOptions(org, origin, given) {
      const rp = relyingParty(org, origin);
      let person: Person | undefined;
      if (given.challenge !== undefined) person = org.state.persons.get(admission.challenge(org, given.challenge).person_id);
      else if (given.handle !== undefined) {
        const id = org.state.handles.get(handleKey(given.handle));
        person = id === undefined ? undefined : org.state.persons.get(id);
      }
      return requestOptions(org, rp.rpID, person);
    },

    authenticate: async (a) => {
      const rp = relyingParty(a.org, a.origin);
      const { c, admitted } = await asserted(a, { rpID: [rp.rpID], origin: rp.origin });
      if (admitted.earlier !== undefined) return { token: await admission.issue(c, admitted) };
      return admission.complete(c, admitted);
    },

    async hostedOptions(org, pageOrigin, challenge) {
      const person = org.state.persons.get(admission.challenge(org, challenge).person_id);
      const rp = person === undefined ? undefined : hostedParty(person, pageOrigin);
      if (rp === undefined) return undefined;
      return requestOptions(org, rp.rpID[0] as string, person as Person);
    },

    async verify(a) {
      const person = a.org.state.persons.get(admission.challenge(a.org, a.challenge).person_id);
      // No passkey of theirs can be used on this page: any assertion is refused as one that names none.
      const rp = (person && hostedParty(person, a.origin)) ?? { rpID: [], origin: a.origin };
      const { c, admitted } = await asserted(a, rp);
      return deps.pipeline.verify(a.org, admission.request(c, admitted));
    },
  };
}
