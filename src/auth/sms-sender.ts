// Sending a text message: no SMS gateway is built in, so the service POSTs each message to SERVICE_SMS_URL,
// signed as webhook deliveries are (an ES256 JWT as the body, application/jwt, verifiable with
// /organizations/webhooks/verification-jwks), through the outbound address guard; the receiver relays it.
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { SmsSender } from './one-time-codes.js';
import { signJwt } from '../lib/jws.js';
import type { WebhookCaller } from '../webhooks/caller.js';
import { DELIVERY_TOKEN_TTL } from '../webhooks/delivery-token.js';
import type { WebhookKeys } from '../webhooks/keys.js';

/** how long the receiver may take to accept a message */
const TIMEOUT_MS = 10_000;

export function createSmsSender(url: string, caller: WebhookCaller, keys: WebhookKeys, issuer: () => string, nowMs: () => number): SmsSender {
  return {
    async send(m) {
      const iat = Math.floor(nowMs() / 1000);
      const body = signJwt(keys.current, { aud: m.organization, exp: iat + DELIVERY_TOKEN_TTL, iat, iss: issuer(), jti: randomUUID(), sms_method: m.method, to: m.to, text: m.text });
      let status: number;
      try {
        status = (await caller.post({ url, headers: {}, body, timeoutMs: TIMEOUT_MS })).status;
      } catch (error) {
        throw new ServiceError('ERR_BAD_GATEWAY', 'the SMS sender (SERVICE_SMS_URL) did not accept the message; try again later', { cause: error });
      }
      if (status < 200 || status > 299) throw new ServiceError('ERR_BAD_GATEWAY', `the SMS sender (SERVICE_SMS_URL) answered ${status}; try again later`);
    },
  };
}
