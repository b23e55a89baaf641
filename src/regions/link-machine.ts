// A replication link's lifecycle. It starts catching up (resuming from what the replica acknowledged),
// streams once nothing is left to send, lags when acknowledgements stall, and is cut by fault injection.
import { createActor, setup } from 'xstate';

export type LinkState = 'catching_up' | 'streaming' | 'lagging' | 'cut';

export type LinkEvent =
  /** fault injection: the link is down; what is in flight is lost */
  | { type: 'cut' }
  /** fault injection: the link is back; shipping resumes from the replica's acknowledged offsets */
  | { type: 'up' }
  /** every organization's entries have been sent and none is stalled */
  | { type: 'caught_up' }
  /** some organization has had unacknowledged entries for longer than the link's delay explains */
  | { type: 'stalled' }
  /** acknowledgements flow again */
  | { type: 'flowing' };

export const linkMachine = setup({
  types: { events: {} as LinkEvent },
}).createMachine({
  id: 'replication-link',
  initial: 'catching_up',
  states: {
    catching_up: { on: { caught_up: 'streaming', cut: 'cut' } },
    streaming: { on: { stalled: 'lagging', cut: 'cut' } },
    lagging: { on: { flowing: 'streaming', caught_up: 'streaming', cut: 'cut' } },
    cut: { on: { up: 'catching_up' } },
  },
});

export function createLinkLifecycle() {
  return createActor(linkMachine).start();
}
