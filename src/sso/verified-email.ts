// Which ID-token email a provider vouches for: `email_verified: true` (OpenID Connect Core §5.1), with the
// documented variants of Apple (the string "true") and Microsoft Entra ID (no email_verified; `xms_edov`).
import type { SsoProvider } from './providers.js';

/**
 * The verified email of these claims, or undefined. Entra ID's v2.0 ID tokens carry no email_verified; its
 * optional claim `xms_edov` says that the email's domain owner is verified, which Microsoft names as the
 * signal to trust `email` by (the app registration must add both optional claims, `email` and `xms_edov`).
 */
export function verifiedEmail(provider: SsoProvider, claims: Record<string, unknown>): string | undefined {
  const email = claims['email'];
  if (typeof email !== 'string' || email === '') return undefined;
  const flag = claims['email_verified'];
  if (flag === true) return email;
  // Apple: "email_verified: A String or Boolean value that indicates whether the service verifies the email."
  if (provider === 'apple' && flag === 'true') return email;
  if (provider === 'azuread' && flag === undefined && (claims['xms_edov'] === true || claims['xms_edov'] === 'true' || claims['xms_edov'] === 1)) return email;
  return undefined;
}
