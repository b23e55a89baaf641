// Consistency tokens: what a write answers in Service-Consistency-Token, naming its organization and WAL offset,
// authenticated by an HMAC with a key derived from the service's stored secret, so that a token is only ever one
// this service issued. Opaque to clients: they hand it back to GET /consistency/{token} or with a read.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const CONSISTENCY_TOKEN_HEADER = 'Service-Consistency-Token';

export interface ConsistencyMark {
  org: string;
  /** the WAL offset of the write */
  offset: number;
}

export interface ConsistencyTokens {
  mint(org: string, offset: number): string;
  /** The mark, or a message saying what is wrong with the token (malformed, or not issued by this service). */
  open(token: string): ConsistencyMark | string;
}

/** 128 bits of HMAC-SHA256: forging one is out of reach, and the token stays short. */
const MAC_BYTES = 16;

export function createConsistencyTokens(secret: Uint8Array): ConsistencyTokens {
  const key = createHmac('sha256', secret).update('consistency-token').digest();
  const mac = (body: string) => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
  return {
    mint(org, offset) {
      const body = Buffer.from(`${offset}:${org}`).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    open(token) {
      const dot = token.indexOf('.');
      if (token.length > 256 || dot <= 0) return 'malformed';
      const body = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(body))) return 'not issued by this service';
      const text = Buffer.from(body, 'base64url').toString('utf8');
      const m = /^(\d{1,16}):(.+)$/s.exec(text);
      const offset = Number(m?.[1]);
      if (!m || !Number.isSafeInteger(offset)) return 'malformed';
      return { org: m[2] as string, offset };
    },
  };
}
