// The caller's address: the connection's peer, or, when that peer is a trusted reverse proxy, the address
// the proxies recorded in X-Forwarded-For (SERVICE_TRUSTED_PROXIES names them).
import { BlockList, isIP } from 'node:net';

export interface ClientIp {
  /** the client's address for a request from `peer` carrying `forwarded` (X-Forwarded-For, repeats joined) */
  of(peer: string, forwarded: string | undefined): string;
}

/** uWS writes IPv6 peers in full (0000:...:0001): BlockList takes that form; IPv4-mapped peers become IPv4. */
function normal(address: string): string {
  const mapped = /^(?:0{1,4}:){5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address) ?? /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mapped) {
    const hi = parseInt(mapped[1] as string, 16);
    const lo = parseInt(mapped[2] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function trusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Without trusted proxies the peer is the client and X-Forwarded-For is ignored: anyone can write that header.
 * With them, X-Forwarded-For is read right to left, each proxy having appended the address it received
 * from, and the first address that is not a trusted proxy is the client (what nginx's real_ip_recursive
 * does): a client's own X-Forwarded-For entries sit to the left of it and are never believed. An entry
 * that is not an address stops the walk, and the last trusted hop before it is taken.
 */
export function createClientIp(list: BlockList | undefined): ClientIp {
  if (list === undefined) return { of: (peer) => normal(peer) };
  return {
    of(rawPeer, forwarded) {
      const peer = normal(rawPeer);
      if (forwarded === undefined || !trusted(list, peer)) return peer;
      let client = peer;
      const hops = forwarded.split(',');
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = normal((hops[i] as string).trim());
        if (isIP(hop) === 0) break;
        client = hop;
        if (!trusted(list, hop)) break;
      }
      return client;
    },
  };
}
