// The one import of uWebSockets.js, and the check that the native build, not the slow fallback, loaded.
import uws from 'uWebSockets.js';

export { uws };

/** The fallback implementation lacks the native-only exports (SSLApp, getParts). */
export function isNativeUws(): boolean {
  const mod = uws as unknown as Record<string, unknown>;
  return typeof mod['getParts'] === 'function' && typeof mod['SSLApp'] === 'function';
}
