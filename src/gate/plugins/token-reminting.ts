// token-reminting: the incoming token goes to a remint endpoint and the answer replaces it before forwarding.
import type { PluginConfig } from '../config.js';
import { checkParameters, param, tokenOf, type Plugin } from './types.js';

const PARAMS = ['header_with_token', 'cookie_with_token', 'remint_token_endpoint', 'keep_old_token'] as const;

/** Where the original token goes when keep_old_token is set. */
export const OLD_TOKEN_HEADER = 'x-gate-original-token';

export function createTokenReminting(config: PluginConfig): Plugin {
  checkParameters(config, PARAMS);
  const at = `gate.plugins.${config.index}.parameters`;
  const endpoint = param<string>(config, 'remint_token_endpoint', 'string');
  if (endpoint === undefined) throw new Error(`${at}.remint_token_endpoint: missing`);
  const header = param<string>(config, 'header_with_token', 'string');
  const cookie = param<string>(config, 'cookie_with_token', 'string');
  if (header !== undefined && cookie !== undefined) throw new Error(`${at}: header_with_token and cookie_with_token exclude each other`);
  const keepOld = param<boolean>(config, 'keep_old_token', 'boolean') ?? false;
  const deny = (status: number, reason: string) => ({
    action: 'answer' as const,
    status,
    body: JSON.stringify({ errors: [{ httpcode: status, message: status === 401 ? 'the token is not valid' : 'the token could not be reminted' }] }),
    metadata: { decision: 'deny', reason },
  });
  return {
    config,
    async handle(req, http) {
      const old = tokenOf(req, header, cookie);
      if (old === undefined) return deny(401, 'no token');
      const res = await http.call(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: old }) });
      if (res.status === 401 || res.status === 403) return deny(401, `remint_token_endpoint answered ${res.status}`);
      if (res.status !== 200 && res.status !== 201) return deny(502, `remint_token_endpoint answered ${res.status}`);
      let token: unknown;
      try {
        const doc = JSON.parse(res.text) as Record<string, unknown>;
        token = doc['token'] ?? doc['result'];
      } catch {
        token = res.text.trim();
      }
      if (typeof token !== 'string' || token === '') return deny(502, 'remint_token_endpoint answered no token');
      if (keepOld) req.headers[OLD_TOKEN_HEADER] = old;
      if (cookie !== undefined) {
        const parts = String(req.headers.cookie ?? '').split(';').map((p) => p.trim()).filter((p) => p !== '' && !p.startsWith(`${cookie}=`));
        req.headers.cookie = [...parts, `${cookie}=${encodeURIComponent(token)}`].join('; ');
      } else if (header !== undefined && header.toLowerCase() !== 'authorization') {
        req.headers[header.toLowerCase()] = token;
      } else {
        req.headers.authorization = `Bearer ${token}`;
      }
      return { action: 'continue', metadata: { decision: 'allow' } };
    },
  };
}
