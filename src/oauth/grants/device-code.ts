// The device_code grant (RFC 8628 3.4, 3.5): the device polls with its device code until the person allowed it
// on the user code page; then the code is redeemed once and begins a grant whose tokens are of that person's
// sign-in. Polls too close together are slow_down (device-polls.ts).
import type { DeviceOutcome } from '../../domain/device-codes.js';
import { oauthError } from '../errors.js';
import { sha256 } from '../user-tokens.js';
import type { Grant } from './grant.js';

export const deviceCode: Grant = async ({ caller, params, consistency, dpop }, deps) => {
  const { org, client } = caller;
  const presented = params['device_code'];
  if (!presented) throw oauthError('invalid_request', 'device_code is required');
  const hash = sha256(presented);
  const stored = org.state.oauth_device_codes.get(hash);
  // Only a live code of this client is paced: the others are refused alike below, whatever their pace.
  if (stored !== undefined && stored.client_id === client.client_id && stored.redeemed_grant === undefined && stored.expires_at_ms > deps.nowMs() && deps.devicePolls.tooSoon(hash, stored.expires_at_ms)) {
    throw oauthError('slow_down', 'polled sooner than the interval allows; wait 5 seconds longer between polls from now on');
  }
  const { refresh_token, ...fresh } = deps.users.begin(client, client.grant_types.includes('refresh_token'));
  const { reply } = await org.execute<DeviceOutcome>({ kind: 'RedeemOAuthDeviceCode', input: { ...fresh, device_code_hash: hash, client_id: client.client_id } });
  if (!reply.ok) throw oauthError(reply.error, reply.description);
  return deps.users.issue(org, client, reply.grant, consistency, { refresh_token, binding: dpop });
};
