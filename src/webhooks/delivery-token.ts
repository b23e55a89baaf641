// The webhook delivery token: the signed JWT that is the body of every webhook call (seed, "Webhook delivery token").
import { randomUUID } from 'node:crypto';
import { signJwt } from '../lib/jws.js';
import type { TriggerType, Webhook } from '../domain/state.js';
import type { WebhookKeys } from './keys.js';

/** Seconds a delivery token stays valid. */
export const DELIVERY_TOKEN_TTL = 300;

export interface Delivery {
  org: string;
  /** the subject: the person a token_minted hook is about */
  sub: string;
  webhook: Pick<Webhook, 'id' | 'target_url'>;
  trigger_type: TriggerType;
  trigger_name: string;
  trigger_content: object;
}

export interface DeliverySigner {
  sign(delivery: Delivery): string;
}

export function createDeliverySigner(keys: WebhookKeys, issuer: () => string, nowMs: () => number): DeliverySigner {
  return {
    sign(d) {
      const iat = Math.floor(nowMs() / 1000);
      // Exactly the seed's claims, in its order.
      return signJwt(keys.current, {
        aud: d.org,
        exp: iat + DELIVERY_TOKEN_TTL,
        iat,
        iss: issuer(),
        jti: randomUUID(),
        sub: d.sub,
        target_url: d.webhook.target_url,
        trigger_content: d.trigger_content,
        trigger_name: d.trigger_name,
        trigger_type: d.trigger_type,
        webhook_id: d.webhook.id,
      });
    },
  };
}
