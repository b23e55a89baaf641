// A list of IP addresses and CIDR blocks (IPv4 and IPv6), as settings name them, parsed into node's BlockList.
import { BlockList, isIP } from 'node:net';

/** Addresses or CIDR blocks, IPv4 or IPv6: `127.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`. Throws on a bad entry. */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) throw new Error(`"${entry}" is not an IP address or CIDR block`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else {
      const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) throw new Error(`"${entry}": the prefix length must be 0-${family === 4 ? 32 : 128}`);
      list.addSubnet(address, prefix, type);
    }
  }
  return list;
}
