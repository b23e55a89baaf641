// ES256 compact JWS with node:crypto: key generation, public JWKs with RFC 7638 thumbprints as kid, signing.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';

export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

export interface Es256Key {
  kid: string;
  privateKey: KeyObject;
  publicJwk: PublicJwk;
  /** base64url of the protected header {alg, kid, typ}, computed once */
  header: string;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** RFC 7638: SHA-256 over the required members of an EC key in lexicographic order. */
function thumbprint(jwk: JsonWebKey): string {
  return createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest('base64url');
}

/** A key from its PKCS#8 DER form (how keys are stored). */
export function es256Key(pkcs8: Buffer): Es256Key {
  const privateKey = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: 'jwk' });
  const kid = thumbprint({ kty, crv, x, y });
  return { kid, privateKey, publicJwk: { kty, crv, x, y, kid, alg: 'ES256', use: 'sig' }, header: b64url({ alg: 'ES256', kid, typ: 'JWT' }) };
}

/** A fresh P-256 private key in PKCS#8 DER. */
export function generateEs256(): Buffer {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'der', type: 'pkcs8' });
}

export function signJwt(key: Es256Key, claims: Record<string, unknown>): string {
  const input = `${key.header}.${b64url(claims)}`;
  // JWS wants the raw r||s signature, not DER.
  const signature = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
