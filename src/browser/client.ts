// The browser client's source, read once at start: served as is at /sdk/service-sdk.js.
import { readFileSync } from 'node:fs';

export function loadClientSource(): string {
  return readFileSync(new URL('./client/service-sdk.js', import.meta.url), 'utf8');
}
