// Network namespaces as region "hosts" for a test (root and iproute2): one namespace per region, each joined
// by a veth pair to a bridge in a switch namespace, and one veth from the test's own namespace to that bridge
// so the test reaches every region's address. Names are unique per run; remove() deletes all of it.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** Why namespaces cannot be used here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: creating network namespaces needs root';
  if (spawnSync('ip', ['-V']).status !== 0) return '`ip` (iproute2) is not on PATH';
  const probe = `idprobe-${process.pid}-${randomBytes(3).toString('hex')}`;
  const added = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (added.status !== 0) return `\`ip netns add\` failed: ${added.stderr.trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return undefined;
}

export interface RegionHosts {
  /** each region's namespace and its address on the bridge */
  hosts: Map<string, { netns: string; address: string; device: string }>;
  /** the prefix to run a command inside a region's namespace */
  exec(region: string): string[];
  /** takes the region's interface down (every connection to and from it sees silence) or up again */
  setLink(region: string, up: boolean): void;
  /** deletes every namespace and interface created; safe to call twice and after a partial setup */
  remove(): void;
}

const ip = (...args: string[]): void => {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
};

/**
 * A free /24 in 198.18.0.0/15 (RFC 2544, set aside for benchmarking), so nothing on the machine routes there;
 * one that an address or route of the host already uses (another run of this test, say) is skipped.
 */
function freeSubnet(): string {
  const taken = spawnSync('ip', ['-4', 'route', 'show', 'table', 'all'], { encoding: 'utf8' }).stdout ?? '';
  for (let i = 0; i < 64; i++) {
    const b = randomBytes(2);
    const net = `198.${18 + ((b[0] as number) & 1)}.${b[1]}`;
    if (!taken.includes(`${net}.`)) return net;
  }
  throw new Error('no free /24 in 198.18.0.0/15');
}

export function createRegionHosts(regions: readonly string[]): RegionHosts {
  const tag = `id${randomBytes(3).toString('hex')}`; // interface names are 15 characters at most
  const switchNs = `${tag}-switch`;
  const net = freeSubnet();
  const created: string[] = [];
  const hosts = new Map<string, { netns: string; address: string; device: string }>();
  const remove = () => {
    // Deleting a namespace deletes its ends of the veth pairs, and with them the other ends.
    for (const ns of created.splice(0).reverse()) spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', `${tag}h`], { stdio: 'ignore' });
  };
  // A runner that times the file out ends it with a signal, which skips 'exit' handlers unless one exits.
  const onSignal = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
  process.once('exit', remove);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    ip('netns', 'add', switchNs);
    created.push(switchNs);
    ip('-n', switchNs, 'link', 'set', 'lo', 'up');
    ip('-n', switchNs, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', switchNs, 'link', 'set', 'br0', 'up');
    regions.forEach((region, i) => {
      const ns = `${tag}-r${i}`;
      const device = `${tag}v${i}`;
      const port = `${tag}p${i}`;
      ip('netns', 'add', ns);
      created.push(ns);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('link', 'add', device, 'netns', ns, 'type', 'veth', 'peer', 'name', port, 'netns', switchNs);
      ip('-n', switchNs, 'link', 'set', port, 'master', 'br0');
      ip('-n', switchNs, 'link', 'set', port, 'up');
      const address = `${net}.${i + 1}`;
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', device);
      ip('-n', ns, 'link', 'set', device, 'up');
      hosts.set(region, { netns: ns, address, device });
    });
    // The test's own end: it reaches the services' and servers' HTTP ports as a client on the same bridge.
    ip('link', 'add', `${tag}h`, 'type', 'veth', 'peer', 'name', `${tag}q`, 'netns', switchNs);
    ip('-n', switchNs, 'link', 'set', `${tag}q`, 'master', 'br0');
    ip('-n', switchNs, 'link', 'set', `${tag}q`, 'up');
    ip('addr', 'add', `${net}.254/24`, 'dev', `${tag}h`);
    ip('link', 'set', `${tag}h`, 'up');
  } catch (error) {
    remove();
    throw error;
  }
  const host = (region: string) => {
    const h = hosts.get(region);
    if (!h) throw new Error(`no namespace for region ${region}`);
    return h;
  };
  return {
    hosts,
    exec: (region) => ['ip', 'netns', 'exec', host(region).netns],
    setLink(region, up) {
      const h = host(region);
      ip('-n', h.netns, 'link', 'set', h.device, up ? 'up' : 'down');
    },
    remove() {
      remove();
      process.removeListener('exit', remove);
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGINT', onSignal);
    },
  };
}
