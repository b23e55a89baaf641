// An SSO sign-in that a second factor completes: what the callback does after a one-factor sign-in's token
// (keep the provider's tokens, open the session) carried with the second-factor challenge and done once the
// second factor's token is issued. The challenge is signed, not secret (the browser reads it), so the carried
// facts are sealed (AES-256-GCM under a key of the service's own secret, bound to the organization and the
// person): the provider's tokens never reach the browser.
import { createHmac } from 'node:crypto';
import type { Admitted, Completion, SignInContext } from '../auth/admission.js';
import type { Issued, IssuingOrg } from '../auth/issue.js';
import { ServiceError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { openBytes, packSealed, sealBytes, unpackSealed } from '../lib/seal.js';
import type { ProviderTokenResponse, ProviderTokens } from './provider-tokens.js';

const METHOD = 'oidc';

/** What the completion needs: the credential and the provider's tokens, and the callback's request for the session. */
interface Carried {
  client_id: string;
  provider: string;
  tokens: ProviderTokenResponse;
  /** when the provider answered (ms): its expires_in counts from then */
  obtained_ms: number;
  ip: string;
  user_agent: string;
}

/** The browser request a session is opened for. */
export interface SessionRequest {
  ip: string;
  userAgent: string;
}

export interface SsoCompletionDeps {
  /** the service's stored secret, specialised here so that the key seals nothing else */
  secret: Uint8Array;
  clock: Pick<Clock, 'nowMs'>;
  providerTokens: Pick<ProviderTokens, 'keep'>;
  /** the ID of the session a sign-in opens */
  newSessionId(): string;
}

export interface SsoCompletion {
  /** The completion a challenge of this sign-in carries. */
  carry(org: string, personId: string, credential: { client_id: string; provider: string }, tokens: ProviderTokenResponse, r: SessionRequest): Completion;
  /** admission's finisher: the provider's tokens kept under the completed sign-in's token, and its session opened */
  finish(c: SignInContext, a: Admitted, issued: Issued, completion: Completion): Promise<void>;
  /** The sign-in's session, which its token belongs to: listed, and ended (the token revoked) by the person or the organization. */
  openSession(org: IssuingOrg, r: SessionRequest, personId: string, methods: string[], issued: Pick<Issued, 'jti' | 'exp'>): Promise<void>;
}

export function createSsoCompletion(deps: SsoCompletionDeps): SsoCompletion {
  const key = createHmac('sha256', deps.secret).update('sso sign-in completion').digest();
  const boundTo = (org: string, personId: string) => `sso-completion:${org}:${personId}`;

  async function openSession(org: IssuingOrg, r: SessionRequest, personId: string, methods: string[], issued: Pick<Issued, 'jti' | 'exp'>): Promise<void> {
    const nowMs = deps.clock.nowMs();
    await org.execute({
      kind: 'StartSession',
      session: {
        session_id: deps.newSessionId(),
        person_id: personId,
        methods,
        clients: [],
        created_ms: nowMs,
        last_used_ms: nowMs,
        expires_at_ms: issued.exp * 1000,
        ip: r.ip,
        user_agent: r.userAgent,
        tokens: [{ jti: issued.jti, exp: issued.exp }],
      },
    });
  }

  return {
    openSession,
    carry(org, personId, credential, tokens, r) {
      const carried: Carried = { client_id: credential.client_id, provider: credential.provider, tokens, obtained_ms: deps.clock.nowMs(), ip: r.ip, user_agent: r.userAgent };
      return { method: METHOD, sealed: packSealed(sealBytes(key, boundTo(org, personId), Buffer.from(JSON.stringify(carried), 'utf8'))) };
    },
    async finish(c, a, issued, completion) {
      if (completion.method !== METHOD) throw new Error(`no finisher for a ${completion.method} sign-in`);
      const plain = openBytes(key, boundTo(c.org.id, a.person.person_id), unpackSealed(completion.sealed));
      // The challenge is signed with the same service secret: a box that does not open is the service's fault.
      if (!plain) throw new ServiceError('ERR_INTERNAL', 'internal error', { cause: new Error('an SSO completion did not open') });
      const carried = JSON.parse(plain.toString('utf8')) as Carried;
      const methods = [...(a.earlier?.authentications ?? []).map((x) => x.method), a.method];
      await openSession(c.org, { ip: carried.ip, userAgent: carried.user_agent }, a.person.person_id, methods, issued);
      // The provider's expires_in counted from its answer, not from the second factor's.
      const { expires_in } = carried.tokens;
      const elapsedS = Math.floor((deps.clock.nowMs() - carried.obtained_ms) / 1000);
      const tokens = expires_in === undefined ? carried.tokens : { ...carried.tokens, expires_in: Math.max(0, expires_in - elapsedS) };
      // The completed sign-in's identity token names this authentication: GET /sso/oidc/tokens finds the tokens by it.
      await deps.providerTokens.keep(c.org.id, a.person.person_id, { client_id: carried.client_id, provider: carried.provider }, issued.jti, tokens);
    },
  };
}
