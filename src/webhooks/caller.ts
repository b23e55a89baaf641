// Outbound webhook calls: pooled keep-alive connections (undici), connecting only to addresses the guard
// allows, never following redirects, with a per-call deadline and a bounded response body.
import { Agent } from 'undici';
import { TIMEOUT_MAX_MS } from '../domain/webhook-rules.js';
import type { AddressGuard } from '../lib/address-guard.js';
import { guardedConnector, isForbiddenAddress } from '../lib/guarded-connect.js';

export const MAX_RESPONSE_BYTES = 64 * 1024;

/** aborted: the caller gave up on the call (the service is stopping, the webhook is gone) */
export type CallFailureReason = 'timeout' | 'forbidden_address' | 'connection' | 'too_large' | 'aborted';

export class WebhookCallError extends Error {
  override name = 'WebhookCallError';
  constructor(
    readonly reason: CallFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface CallRequest {
  url: string;
  /** the webhook's custom headers; Content-Type is always application/jwt */
  headers: Record<string, string[]>;
  /** the delivery token */
  body: string;
  timeoutMs: number;
  /** ends the call early, as an `aborted` failure */
  signal?: AbortSignal;
}

export interface CallResponse {
  status: number;
  body: Buffer;
}

export interface WebhookCaller {
  /** Resolves with any HTTP answer (3xx included: redirects are not followed); rejects with WebhookCallError. */
  post(request: CallRequest): Promise<CallResponse>;
  close(): Promise<void>;
}

export function createWebhookCaller(options: { guard: AddressGuard; maxResponseBytes?: number; connectionsPerOrigin?: number }): WebhookCaller {
  const limit = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const agent = new Agent({ connect: guardedConnector(options.guard, { timeout: TIMEOUT_MAX_MS }), connections: options.connectionsPerOrigin ?? 32, keepAliveTimeout: 30_000 });

  async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > limit) {
        body.destroy();
        throw new WebhookCallError('too_large', `the response body is larger than ${limit} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  return {
    async post(request) {
      const url = new URL(request.url);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), request.timeoutMs);
      const external = request.signal;
      const stop = () => controller.abort();
      if (external?.aborted) controller.abort();
      else external?.addEventListener('abort', stop, { once: true });
      try {
        const res = await agent.request({
          origin: url.origin,
          path: url.pathname,
          method: 'POST',
          headers: { ...request.headers, 'content-type': 'application/jwt' },
          body: request.body,
          // The one deadline: undici's own header and body timers stay at their (longer) defaults, so a
          // slow receiver always ends as an abort, which is what marks a timeout below.
          signal: controller.signal,
        });
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > limit) {
          res.body.destroy();
          throw new WebhookCallError('too_large', `the response body is ${declared} bytes; at most ${limit} are read`);
        }
        return { status: res.statusCode, body: await readBounded(res.body) };
      } catch (error) {
        if (error instanceof WebhookCallError) throw error;
        if (external?.aborted) throw new WebhookCallError('aborted', 'the call was abandoned', { cause: error });
        if (controller.signal.aborted) throw new WebhookCallError('timeout', `no complete answer within ${request.timeoutMs} ms`, { cause: error });
        if (isForbiddenAddress(error)) throw new WebhookCallError('forbidden_address', (error as Error).message, { cause: error });
        throw new WebhookCallError('connection', `the call failed: ${(error as Error).message}`, { cause: error });
      } finally {
        clearTimeout(timer);
        external?.removeEventListener('abort', stop);
      }
    },
    close: () => agent.close(),
  };
}
