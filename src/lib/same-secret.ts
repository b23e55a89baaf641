// A constant-time comparison of a presented secret with the configured one (digests, so lengths do not leak).
import { createHash, timingSafeEqual } from 'node:crypto';

export function sameSecret(expected: string | undefined): (presented: string) => boolean {
  const want = expected === undefined ? undefined : createHash('sha256').update(expected).digest();
  return (presented) => want !== undefined && timingSafeEqual(createHash('sha256').update(presented).digest(), want);
}
