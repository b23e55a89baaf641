// The plugin types Gate builds, by the original's type names; any other type is a start-up error naming it.
import type { Counter } from '../../lib/metrics.js';
import type { GateConfig, PluginConfig } from '../config.js';
import { createRatelimit } from './ratelimit.js';
import { createTokenReminting } from './token-reminting.js';
import { createTokenUpgrade } from './token-upgrade.js';
import type { Plugin } from './types.js';
import { createValidateJwt } from './validate-jwt.js';

export interface PluginDeps {
  service: GateConfig['service'];
  /** JWKS fetches of validate-jwt plugins, by plugin id and result */
  jwksFetches: Counter;
}

export const PLUGIN_TYPES = ['validate-jwt', 'ratelimit', 'token-translation-upgrade', 'token-reminting'] as const;

export function buildPlugin(config: PluginConfig, deps: PluginDeps): Plugin {
  switch (config.type) {
    case 'validate-jwt':
      return createValidateJwt(config, deps.service, deps.jwksFetches);
    case 'ratelimit':
      return createRatelimit(config);
    case 'token-translation-upgrade':
      return createTokenUpgrade(config, deps.service);
    case 'token-reminting':
      return createTokenReminting(config);
    default:
      throw new Error(`gate.plugins.${config.index}.type: "${config.type}" is not available (Gate builds ${PLUGIN_TYPES.join(', ')})`);
  }
}
