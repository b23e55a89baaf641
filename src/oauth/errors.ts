// The OAuth 2.0 errors of RFC 6749 5.2 (and RFC 7009, RFC 6750) as ServiceErrors: the front writes them as
// `{error, error_description}` on the routes that declare errorFormat 'oauth'.
import { ServiceError } from '../errors.js';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  // RFC 8628 3.5: the device's poll before (or instead of) its token
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'access_denied';

/** RFC 6749 5.2: a failed client authentication is a 401 whose WWW-Authenticate names the scheme. */
const CHALLENGE = Object.freeze({ 'WWW-Authenticate': 'Basic realm="oauth2", charset="UTF-8"' });

export function oauthError(code: OAuthErrorCode, description: string): ServiceError {
  if (code === 'invalid_client') return new ServiceError('ERR_UNAUTHORIZED', description, { oauth: code, headers: { ...CHALLENGE } });
  return new ServiceError('ERR_BAD_REQUEST', description, { oauth: code });
}
