// Signing keys of one purpose (identity tokens; the same code can hold another set under another name):
// generated at first start, kept durably in the WAL's meta store, rotated on request, and published as a
// JWK set for as long as any token they signed can still be valid.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import type { TokenAlg } from '../config.js';
import type { Clock } from '../lib/clock.js';
import type { MetaStore } from '../wal/sealed-meta.js';

/** A key as the meta store keeps it. The private key is PKCS8 DER. Times are ms since the epoch. */
export interface StoredKey {
  kid: string;
  alg: TokenAlg;
  pkcs8: Uint8Array;
  created: number;
  /** when the key stopped signing; absent on the current key */
  retired_at?: number;
  /** the longest token lifetime (s) the key has signed with: it stays published until retired_at + max_ttl */
  max_ttl: number;
}

export interface SigningKey {
  readonly kid: string;
  readonly alg: TokenAlg;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** the public key as published: kid, alg, use 'sig' */
  readonly jwk: JWK;
  readonly created: number;
  readonly retiredAt: number | undefined;
  /** ms since the epoch after which no token this key signed is valid; Infinity while it is current */
  readonly publishedUntil: number;
  /** the longest token lifetime (s) the key may have signed with: it stays published that long after it retires */
  readonly maxTtl: number;
}

export interface KeyRing {
  /** the key new tokens are signed with */
  current(): SigningKey;
  /** a published key by kid: the current one, or a retired one whose tokens may still be valid */
  find(kid: string): SigningKey | undefined;
  /** every published key, the current one first */
  published(): SigningKey[];
  /** the raw JWK set document */
  jwks(): { keys: JWK[] };
  /** makes a new current key; the previous one stays published until its tokens expire */
  rotate(): Promise<SigningKey>;
  /**
   * Raises how long `key` stays published after it retires to `ttl` seconds, durably: a token that lives
   * longer than key.maxTtl may leave only once this resolves. Concurrent calls for the same raise share one write.
   */
  retain(key: SigningKey, ttl: number): Promise<void>;
}

export interface KeyRingOptions {
  meta: MetaStore;
  /** meta key the set is stored under, e.g. token_keys */
  name: string;
  alg: TokenAlg;
  /** lifetime (s) of the tokens a new key signs; longer ones raise it (retain) */
  ttl: number;
  clock: Clock;
  log?(message: string): void;
}

function generate(alg: TokenAlg): KeyObject {
  switch (alg) {
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    case 'EdDSA':
      return generateKeyPairSync('ed25519').privateKey;
  }
}

async function newStoredKey(alg: TokenAlg, ttl: number, now: number): Promise<StoredKey> {
  const privateKey = generate(alg);
  const jwk = await exportJWK(createPublicKey(privateKey));
  return {
    // RFC 7638 thumbprint: derived from the public key, so it names exactly one key.
    kid: await calculateJwkThumbprint(jwk, 'sha256'),
    alg,
    pkcs8: privateKey.export({ type: 'pkcs8', format: 'der' }),
    created: now,
    max_ttl: ttl,
  };
}

async function load(stored: StoredKey): Promise<SigningKey> {
  const privateKey = createPrivateKey({ key: Buffer.from(stored.pkcs8), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: stored.kid, alg: stored.alg, use: 'sig' };
  return {
    kid: stored.kid,
    alg: stored.alg,
    privateKey,
    publicKey,
    jwk,
    created: stored.created,
    retiredAt: stored.retired_at,
    publishedUntil: stored.retired_at === undefined ? Infinity : stored.retired_at + stored.max_ttl * 1000,
    maxTtl: stored.max_ttl,
  };
}

/** Loads the key set, creating the first key, or a new one when the configured algorithm changed. */
export async function openKeyRing(options: KeyRingOptions): Promise<KeyRing> {
  const { meta, name, ttl, clock } = options;
  const log = options.log ?? (() => {});
  let stored = meta.getMeta<{ keys: StoredKey[] }>(name)?.keys ?? [];
  let keys: SigningKey[] = [];
  let document: { keys: JWK[] } | undefined;
  let documentUntil = 0;
  /** rotations and retentions run one at a time: each rewrites the whole set, so none may lose another's */
  let rotating: Promise<unknown> = Promise.resolve();
  let retaining: { kid: string; ttl: number; done: Promise<void> } | undefined;

  const live = (now: number) => (k: StoredKey) => k.retired_at === undefined || k.retired_at + k.max_ttl * 1000 > now;

  async function save(next: StoredKey[]): Promise<void> {
    await meta.putMeta(name, { keys: next });
    stored = next;
    keys = await Promise.all(stored.map(load));
    document = undefined;
  }

  async function addKey(alg: TokenAlg): Promise<SigningKey> {
    const now = clock.nowMs();
    const fresh = await newStoredKey(alg, ttl, now);
    const retired = stored.filter(live(now)).map((k) => (k.retired_at === undefined ? { ...k, retired_at: now } : k));
    await save([fresh, ...retired]);
    return keys[0] as SigningKey;
  }

  const current0 = stored.find((k) => k.retired_at === undefined);
  if (current0 === undefined) {
    await addKey(options.alg);
    log(`created ${options.alg} signing key ${stored[0]?.kid} (${name})`);
  } else if (current0.alg !== options.alg) {
    await addKey(options.alg);
    log(`the configured algorithm is ${options.alg}; rotated ${name} from ${current0.alg} key ${current0.kid} to ${stored[0]?.kid}`);
  } else {
    const now = clock.nowMs();
    // A longer lifetime than the current key signed with before extends how long it stays published.
    const next = stored.filter(live(now)).map((k) => (k === current0 && ttl > k.max_ttl ? { ...k, max_ttl: ttl } : k));
    next.sort((a, b) => (a.retired_at === undefined ? -1 : b.retired_at === undefined ? 1 : b.created - a.created));
    if (next.length !== stored.length || next.some((k, i) => k !== stored[i])) await save(next);
    else keys = await Promise.all(stored.map(load));
  }

  const ring: KeyRing = {
    current: () => keys[0] as SigningKey,
    find(kid) {
      const now = clock.nowMs();
      return keys.find((k) => k.kid === kid && k.publishedUntil > now);
    },
    published() {
      const now = clock.nowMs();
      return keys.filter((k) => k.publishedUntil > now);
    },
    jwks() {
      const now = clock.nowMs();
      if (document === undefined || now >= documentUntil) {
        const shown = ring.published();
        document = { keys: shown.map((k) => k.jwk) };
        documentUntil = Math.min(...shown.map((k) => k.publishedUntil));
      }
      return document;
    },
    rotate() {
      const next = rotating.then(() => addKey(options.alg));
      rotating = next.catch(() => undefined);
      return next;
    },
    retain(key, ttl) {
      if (retaining !== undefined && retaining.kid === key.kid && retaining.ttl >= ttl) return retaining.done;
      // The key may have retired meanwhile: it is found by kid, current or not.
      const done = rotating.then(async () => {
        const next = stored.map((k) => (k.kid === key.kid && ttl > k.max_ttl ? { ...k, max_ttl: ttl } : k));
        if (next.some((k, i) => k !== stored[i])) await save(next);
      });
      rotating = done.catch(() => undefined);
      const entry = { kid: key.kid, ttl, done };
      retaining = entry;
      done.catch(() => {
        if (retaining === entry) retaining = undefined;
      });
      return done;
    },
  };
  return ring;
}
