// Names that an object keyed by a caller's input refuses: JavaScript gives them meaning on every object.

/**
 * `__proto__` assigned as a property replaces an object's prototype and is lost (and msgpack renames it on
 * decoding); `constructor` and `prototype` read back through the prototype chain on objects that lack
 * them, so a check for them by plain property access is fooled. Refused wherever a caller names a key
 * that the service keeps as an object property: attribute names, webhook custom headers, custom claims and
 * the groups claim name.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export function isReservedKey(name: string): boolean {
  return RESERVED_KEYS.has(name);
}
