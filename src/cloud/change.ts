// The one path of a change made at a provider on an organization's behalf: alone in the organization's cloud
// queue, the provider call, then the commit of its event with the provider's answer. Each phase is timed, so
// /metrics (cloud_change_phase_seconds) shows where a change's time goes beside the provider's own.
import { performance } from 'node:perf_hooks';
import { requireCloudConnection, type CloudConnection } from '../domain/cloud.js';
import type { Outcome } from '../org/actor.js';
import type { EventBody } from './aws.js';
import type { OrgPort } from './connections.js';
import type { SerialQueue } from './serial.js';

export interface Change {
  outcome: Outcome;
  body: EventBody;
}

/** queue: waiting behind the organization's other cloud changes; provider: the provider's calls; commit: the actor and the WAL */
export type ChangePhase = 'queue' | 'provider' | 'commit';

export interface ChangeDeps {
  queue: SerialQueue;
  observe?(phase: ChangePhase, seconds: number): void;
}

export function runChange(deps: ChangeDeps, org: OrgPort, connectionId: string, event: string, provider: (connection: CloudConnection) => Promise<EventBody>): Promise<Change> {
  const queued = performance.now();
  return deps.queue.run(org.id, async () => {
    const started = performance.now();
    const body = await provider(requireCloudConnection(org.state, connectionId));
    const answered = performance.now();
    const outcome = await org.execute({ kind: 'RecordCloudChange', connection_id: connectionId, event: { name: event, body } });
    if (deps.observe) {
      deps.observe('queue', (started - queued) / 1000);
      deps.observe('provider', (answered - started) / 1000);
      deps.observe('commit', (performance.now() - answered) / 1000);
    }
    return { outcome, body };
  });
}
