// Which addresses the service's outbound connections made on a tenant's behalf (webhooks, cloud providers, SSO
// discovery) may go to. The check runs on the resolved address right before the connection is made, and the
// connection goes to exactly that address, so a name that resolves somewhere else later (DNS rebinding) or an
// IP literal cannot reach loopback, private or link-local networks.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** Thrown when every address of a target is forbidden; the call never connects. */
export class ForbiddenAddressError extends Error {
  override name = 'ForbiddenAddressError';
  constructor(hostname: string, addresses: readonly string[]) {
    super(`target ${hostname} has no public address (resolved: ${addresses.join(', ') || 'nothing'})`);
  }
}

const IPV4_FORBIDDEN: Array<[string, number]> = [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata endpoints live here)
  ['172.16.0.0', 12], // private
  ['192.168.0.0', 16], // private
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const IPV6_FORBIDDEN: Array<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
];

const hex4 = (ipv4: string) => {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

function forbiddenList(): BlockList {
  const list = new BlockList();
  // BlockList applies IPv4 rules to IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) itself.
  for (const [net, bits] of IPV4_FORBIDDEN) {
    list.addSubnet(net, bits, 'ipv4');
    // IPv6 forms that carry an IPv4 address a gateway would connect to: NAT64 and 6to4.
    list.addSubnet(`64:ff9b::${hex4(net)}`, 96 + bits, 'ipv6');
    list.addSubnet(`2002:${hex4(net)}::`, 16 + bits, 'ipv6');
  }
  for (const [net, bits] of IPV6_FORBIDDEN) list.addSubnet(net, bits, 'ipv6');
  return list;
}

export interface AddressGuard {
  /** The address to connect to for hostname: the first public one, or any when insecure targets are allowed. */
  resolve(hostname: string): Promise<string>;
  isForbidden(address: string): boolean;
  /** SERVICE_WEBHOOK_ALLOW_INSECURE: every address is allowed */
  readonly allowInsecure: boolean;
}

export function createAddressGuard(options: { allowInsecure: boolean; resolver?: Resolver }): AddressGuard {
  const list = forbiddenList();
  const resolver = options.resolver ?? systemResolver;
  const isForbidden = (address: string) => {
    const family = isIP(address);
    if (family === 0) return true;
    return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  return {
    isForbidden,
    allowInsecure: options.allowInsecure,
    async resolve(hostname) {
      const bare = hostname.replace(/^\[|\]$/g, '');
      const addresses = isIP(bare) !== 0 ? [bare] : (await resolver(bare)).map((a) => a.address);
      if (options.allowInsecure && addresses[0] !== undefined) return addresses[0];
      const allowed = addresses.find((a) => !isForbidden(a));
      if (allowed === undefined) throw new ForbiddenAddressError(bare, addresses);
      return allowed;
    },
  };
}
