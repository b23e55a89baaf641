// A provider's refusal or failure, translated at the boundary into the service's error: the provider's own
// error code in the message, its status class kept (conflict 409, not found 404, other refusals 400), and
// 502 when the provider is unreachable or fails itself. Nothing is recorded when one is thrown. An endpoint that
// gave no answer gets one message whatever the reason (refused, timed out, a forbidden address, TLS), so the
// service cannot be used to tell which addresses and ports of a network answer.
import { ServiceError } from '../errors.js';

export type Provider = 'AWS' | 'GCP' | 'Active Directory';

/** status: the provider's HTTP status (or the 4xx its error class corresponds to); undefined when unreachable. */
export function providerError(provider: Provider, code: string, message: string, status: number | undefined, cause?: unknown): ServiceError {
  const text = `${provider} refused: ${code}: ${message}`.slice(0, 500);
  const options = cause === undefined ? {} : { cause };
  if (status === undefined) return new ServiceError('ERR_BAD_GATEWAY', `the ${provider} endpoint could not be reached`, options);
  if (status >= 500) return new ServiceError('ERR_BAD_GATEWAY', `${provider} failed: ${code}: ${message}`.slice(0, 500), options);
  if (status === 409) return new ServiceError('ERR_CONFLICT', text, options);
  if (status === 404) return new ServiceError('ERR_NOT_FOUND', text, options);
  return new ServiceError('ERR_BAD_REQUEST', text, options);
}
