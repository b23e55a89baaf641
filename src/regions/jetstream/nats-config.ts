// nats-server configuration for one region: a JetStream domain of its own; the origin region's server is
// the leafnode hub, every replica region's server a leaf that dials it (through whatever sits between).
export interface NatsServerPlan {
  /** the region, also its JetStream domain and (unless `name` says otherwise) the server's name */
  region: string;
  /** the server's name when the region runs several (unique within the deployment) */
  name?: string;
  /**
   * one of the region's cluster of servers (SERVICE_NATS_REPLICAS=3): its route port and every route port of
   * the cluster (its own included: a server ignores the route to itself)
   */
  cluster?: { port: number; routes: number[] };
  /** client port, on host */
  port: number;
  /** monitoring port (/healthz, /jsz, /leafz) */
  httpPort: number;
  storeDir: string;
  host?: string;
  /** the hub: the port replica regions' leafnodes dial */
  leafPort?: number;
  /**
   * the hub: the leafnode address it tells leafs to redial after a disconnect (by default its own). Whatever
   * sits in front of the hub (a load balancer, a test's proxy) must be named here, or leafs go around it.
   */
  leafAdvertise?: string;
  /** a leaf: the hub's leafnode address as this region reaches it (a proxy in tests) */
  hubUrl?: string;
  /** a leaf of a hub that runs a cluster: every hub server's leafnode address, tried in turn */
  hubUrls?: string[];
  /** client users (SERVICE_NATS_CREDS user:password): a client without one of them is refused; absent: none needed */
  users?: Array<{ user: string; password: string }>;
  /** the server's certificate and key (PEM files): clients connect with TLS, and verify it against their CA */
  tls?: { certFile: string; keyFile: string };
}

/** Ping 2 s × 3 detects a black-holed link in about 6 s (the defaults take minutes, SCALE.md §5.6). */
export function natsServerConfig(plan: NatsServerPlan): string {
  const host = plan.host ?? '127.0.0.1';
  const lines = [
    `server_name: ${JSON.stringify(plan.name ?? plan.region)}`,
    `listen: "${host}:${plan.port}"`,
    `http: "${host}:${plan.httpPort}"`,
    'ping_interval: "2s"',
    'ping_max: 3',
    `jetstream { store_dir: ${JSON.stringify(plan.storeDir)}, domain: ${JSON.stringify(plan.region)} }`,
  ];
  if (plan.leafPort !== undefined) lines.push(`leafnodes { listen: "${host}:${plan.leafPort}"${plan.leafAdvertise ? `, advertise: ${JSON.stringify(plan.leafAdvertise)}` : ''} }`);
  if (plan.hubUrl !== undefined) lines.push(`leafnodes { remotes: [ { url: ${JSON.stringify(plan.hubUrl)} } ], reconnect: 1 }`);
  if (plan.hubUrls !== undefined) lines.push(`leafnodes { remotes: [ { urls: ${JSON.stringify(plan.hubUrls)} } ], reconnect: 1 }`);
  if (plan.cluster) {
    const routes = plan.cluster.routes.map((p) => `nats-route://${host}:${p}`);
    lines.push(`cluster { name: ${JSON.stringify(plan.region)}, listen: "${host}:${plan.cluster.port}", routes: ${JSON.stringify(routes)} }`);
  }
  if (plan.users) lines.push(`authorization { users: [ ${plan.users.map((u) => `{ user: ${JSON.stringify(u.user)}, password: ${JSON.stringify(u.password)} }`).join(', ')} ] }`);
  if (plan.tls) lines.push(`tls { cert_file: ${JSON.stringify(plan.tls.certFile)}, key_file: ${JSON.stringify(plan.tls.keyFile)} }`);
  return lines.join('\n') + '\n';
}
