// A passkey authenticator in software, for benchmarks: an ES256 key pair from node:crypto, a 'none' attestation
// (WebAuthn L3 6.5.4, CBOR as RFC 8949 deterministic encoding) at registration, and assertions signed over
// authenticatorData ‖ SHA-256(clientDataJSON) with a counter that grows, as a security key's does.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

const b64url = (b: Buffer) => b.toString('base64url');
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

type Cbor = number | string | Buffer | Map<number | string, Cbor> | { [k: string]: Cbor };

/** The few CBOR types an attestation object and a COSE key need: integers, byte and text strings, maps. */
function cbor(value: Cbor): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
    if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface RegistrationJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
}

export interface AssertionJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle: string };
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
}

/** One discoverable credential for one relying party (its origin's host is the RP ID). */
export class SoftwareAuthenticator {
  private readonly privateKey: KeyObject;
  private readonly credentialId = randomBytes(16);
  private counter = 0;
  private userHandle = '';

  constructor(private readonly origin: string) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.cose = (() => {
      const jwk = pair.publicKey.export({ format: 'jwk' });
      // COSE_Key (RFC 9053): kty EC2, alg ES256, crv P-256, x, y
      return cbor(new Map<number, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x as string, 'base64url')], [-3, Buffer.from(jwk.y as string, 'base64url')]]));
    })();
  }

  private readonly cose: Buffer;

  private rpIdHash(): Buffer {
    return sha256(new URL(this.origin).hostname);
  }

  private clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() for PublicKeyCredentialCreationOptionsJSON, as the browser's JSON. */
  create(options: { challenge: string; user: { id: string } }): RegistrationJSON {
    this.userHandle = options.user.id;
    const count = Buffer.alloc(4);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([this.rpIdHash(), Buffer.from([FLAG_UP | FLAG_UV | FLAG_AT]), count, Buffer.alloc(16), idLength, this.credentialId, this.cose]);
    const attestation = cbor({ fmt: 'none', attStmt: {}, authData });
    const id = b64url(this.credentialId);
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: { clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge)), attestationObject: b64url(attestation), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get() for PublicKeyCredentialRequestOptionsJSON: one assertion, the counter one higher. */
  get(options: { challenge: string }): AssertionJSON {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(++this.counter);
    const authenticatorData = Buffer.concat([this.rpIdHash(), Buffer.from([FLAG_UP | FLAG_UV]), count]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey);
    const id = b64url(this.credentialId);
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authenticatorData), signature: b64url(signature), userHandle: this.userHandle },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
