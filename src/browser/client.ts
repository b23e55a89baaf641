// The browser client's source, read once at start: served as is at /sdk/service-sdk.js.
import { readFileSync } from 'node:fs';

export function loadClientSource(): string {
  return readFileSync(new URL('./client/service-sdk.js', import.meta.url), 'utf8');
}

/**
 * @simplewebauthn/browser, for the client's passkey ceremonies: its one-file bundle, which sets a global, as an
 * ES module (served at /sdk/webauthn.js, loaded by the client the first time a ceremony runs).
 */
export function loadWebauthnSource(): string {
  const bundle = new URL('../dist/bundle/index.umd.min.js', import.meta.resolve('@simplewebauthn/browser'));
  return `${readFileSync(bundle, 'utf8')}\nconst { startRegistration, startAuthentication, browserSupportsWebAuthn } = globalThis.SimpleWebAuthnBrowser;\nexport { startRegistration, startAuthentication, browserSupportsWebAuthn };\n`;
}
