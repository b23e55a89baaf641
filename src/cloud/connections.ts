// Cloud connections as use cases: a connection is checked, tested with a harmless provider call and only then
// stored, its credentials sealed; the provider client of a stored connection is built here for the others.
import type { IAMClient } from '@aws-sdk/client-iam';
import { cloudConnectionView, requireCloudConnection, type CloudConnection, type CloudConnectionView, type CloudType } from '../domain/cloud.js';
import type { Command } from '../domain/commands.js';
import type { OrgState } from '../domain/state.js';
import { badRequest, ServiceError } from '../errors.js';
import type { Outcome } from '../org/actor.js';
import { awsClient, testAws, type AwsConfig, type AwsCredentials } from './aws.js';
import { testAd, type AdConfig, type AdCredentials } from './ad.js';
import { gcpClients, testGcp, type GcpConfig, type GcpKey } from './gcp.js';
import { checkConfig, checkCredentials, checkRegion, type ConnectionRules } from './connection-input.js';
import type { Outbound } from '../lib/guarded-connect.js';
import type { CredentialSealer } from './secrets.js';
import type { SerialQueue } from './serial.js';

/** The organization as the cloud use cases reach it: its state and its actor's execute. */
export interface OrgPort {
  readonly id: string;
  readonly state: OrgState;
  execute<R = unknown>(command: Command): Promise<Outcome<R>>;
}

export interface CreateConnectionBody {
  name: string;
  type: CloudType;
  region?: string;
  config: unknown;
  credentials: unknown;
}

export interface PatchConnectionBody {
  name?: string;
  config?: unknown;
  credentials?: unknown;
}

export interface CloudConnectionsDeps extends ConnectionRules {
  sealer: CredentialSealer;
  queue: SerialQueue;
  clients: Pick<Clients, 'forget'>;
  /** the address guard every provider call connects through */
  outbound: Outbound;
  /** fresh connection ids: UUIDv7, so key order is creation order */
  uuid(): string;
}

export interface Clients {
  /** the connection's IAM client, built once and reused by every change and snapshot through it */
  aws(org: string, c: CloudConnection): { client: IAMClient; account: string };
  ad(org: string, c: CloudConnection): { config: AdConfig; credentials: AdCredentials; outbound: Outbound };
  /** the connection's GCP clients, built once like the IAM client */
  gcp(org: string, c: CloudConnection): { clients: ReturnType<typeof gcpClients>; project: string };
  /** a deleted connection's clients are closed */
  forget(org: string, connectionId: string): void;
  /** closes every client, at the service's stop */
  close(): void;
}

interface Cached<T> {
  /** the type, config and (sealed) credentials the clients were built from */
  version: string;
  value: T;
  close(): void;
}

/**
 * A provider client holds the connection's keep-alive sockets and signing setup, so it is built once per
 * connection (not per change: that opened a new connection to the provider for each) and rebuilt when the
 * connection's config or credentials change: a PATCH reseals the credentials, so their sealed form is the version.
 */
export function createClients(sealer: CredentialSealer, outbound: Outbound): Clients {
  const cache = new Map<string, Cached<unknown>>();
  const keyOf = (org: string, id: string) => `${org}\u0000${id}`;
  const cached = <T>(org: string, c: CloudConnection, build: () => T, close: (value: T) => void): T => {
    const key = keyOf(org, c.connection_id);
    const version = JSON.stringify([c.type, c.config, c.credentials]);
    const hit = cache.get(key);
    if (hit?.version === version) return hit.value as T;
    hit?.close();
    const value = build();
    cache.set(key, { version, value, close: () => close(value) });
    return value;
  };
  return {
    aws(org, c) {
      if (c.type !== 'aws') throw badRequest(`cloud connection ${c.connection_id} is of type ${c.type}, not aws`);
      const config = c.config as unknown as AwsConfig;
      const client = cached(org, c, () => awsClient(config, sealer.open(org, c.connection_id, c.credentials) as unknown as AwsCredentials, outbound), (x) => x.destroy());
      return { client, account: config.account_id };
    },
    gcp(org, c) {
      if (c.type !== 'gcp') throw badRequest(`cloud connection ${c.connection_id} is of type ${c.type}, not gcp`);
      const config = c.config as unknown as GcpConfig;
      const clients = cached(org, c, () => gcpClients(config, sealer.open(org, c.connection_id, c.credentials) as unknown as GcpKey, outbound), () => undefined);
      return { clients, project: config.project_id };
    },
    ad(org, c) {
      if (c.type !== 'active_directory') throw badRequest(`cloud connection ${c.connection_id} is of type ${c.type}, not active_directory`);
      return { config: c.config as unknown as AdConfig, credentials: sealer.open(org, c.connection_id, c.credentials) as unknown as AdCredentials, outbound };
    },
    forget(org, connectionId) {
      const key = keyOf(org, connectionId);
      cache.get(key)?.close();
      cache.delete(key);
    },
    close() {
      for (const c of cache.values()) c.close();
      cache.clear();
    },
  };
}

/** A failed test names what failed with a 400: the connection as given does not work. */
async function testConnection(type: CloudType, config: Record<string, string>, credentials: Record<string, string>, outbound: Outbound): Promise<void> {
  try {
    if (type === 'aws') {
      const client = awsClient(config as unknown as AwsConfig, credentials as unknown as AwsCredentials, outbound);
      try {
        await testAws(client);
      } finally {
        client.destroy();
      }
    } else if (type === 'gcp') {
      const c = config as unknown as GcpConfig;
      await testGcp(gcpClients(c, credentials as unknown as GcpKey, outbound), c.project_id);
    } else if (type === 'active_directory') {
      await testAd(config as unknown as AdConfig, credentials as unknown as AdCredentials, outbound);
    }
  } catch (error) {
    const message = error instanceof ServiceError ? error.message : String(error);
    throw new ServiceError('ERR_BAD_REQUEST', `the connection test failed: ${message}`, { cause: error });
  }
}

export function createCloudConnections(deps: CloudConnectionsDeps) {
  return {
    async create(org: OrgPort, body: CreateConnectionBody): Promise<Outcome<CloudConnectionView>> {
      const region = body.region ?? (deps.regions[0] as string);
      checkRegion(region, deps);
      const config = checkConfig(body.type, body.config, deps);
      const credentials = checkCredentials(body.type, body.credentials);
      await testConnection(body.type, config, credentials, deps.outbound);
      const connection_id = deps.uuid();
      const sealed = deps.sealer.seal(org.id, connection_id, credentials);
      return deps.queue.run(org.id, () => org.execute<CloudConnectionView>({ kind: 'CreateCloudConnection', connection: { connection_id, name: body.name, type: body.type, region, config, credentials: sealed } }));
    },

    /** Config replaced whole when given, credentials too; either tests the connection again. */
    async update(org: OrgPort, id: string, patch: PatchConnectionBody): Promise<Outcome<CloudConnectionView>> {
      return deps.queue.run(org.id, async () => {
        const current = requireCloudConnection(org.state, id);
        if (patch.config === undefined && patch.credentials === undefined) {
          if (patch.name === undefined || patch.name === current.name) return { reply: cloudConnectionView(current), offset: org.state.offset, events: [] };
          return org.execute<CloudConnectionView>({ kind: 'UpdateCloudConnection', connection: { ...current, name: patch.name } });
        }
        const config = patch.config === undefined ? current.config : checkConfig(current.type, patch.config, deps);
        const credentials = patch.credentials === undefined ? (deps.sealer.open(org.id, id, current.credentials) as Record<string, string>) : checkCredentials(current.type, patch.credentials);
        await testConnection(current.type, config, credentials, deps.outbound);
        const next: CloudConnection = { ...current, name: patch.name ?? current.name, config, credentials: deps.sealer.seal(org.id, id, credentials) };
        return org.execute<CloudConnectionView>({ kind: 'UpdateCloudConnection', connection: next });
      });
    },

    async delete(org: OrgPort, id: string): Promise<Outcome<null>> {
      return deps.queue.run(org.id, async () => {
        const outcome = await org.execute<null>({ kind: 'DeleteCloudConnection', connection_id: id });
        deps.clients.forget(org.id, id);
        return outcome;
      });
    },
  };
}

export type CloudConnections = ReturnType<typeof createCloudConnections>;
