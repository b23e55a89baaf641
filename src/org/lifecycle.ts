// An organization actor's lifecycle: it accepts commands only while ready.
// A plain transition table rather than an xstate actor: a service holds one per organization, and at ten
// thousand organizations creating and stepping xstate actors was a sizeable share of start-up and of a clean stop.

export type OrgLifecycleState = 'loading' | 'ready' | 'stopping' | 'stopped';
export type OrgLifecycleEvent = { type: 'loaded' } | { type: 'stop' } | { type: 'drained' };

/** state → event → next state; an event a state does not list leaves it as it is (xstate's semantics). */
export const orgLifecycle: Readonly<Record<OrgLifecycleState, Partial<Record<OrgLifecycleEvent['type'], OrgLifecycleState>>>> = {
  loading: { loaded: 'ready', stop: 'stopped' },
  ready: { stop: 'stopping' },
  stopping: { drained: 'stopped' },
  stopped: {},
};

export interface OrgLifecycle {
  readonly value: OrgLifecycleState;
  send(event: OrgLifecycleEvent): void;
}

export function createLifecycle(): OrgLifecycle {
  let value: OrgLifecycleState = 'loading';
  return {
    get value() {
      return value;
    },
    send(event) {
      value = orgLifecycle[value][event.type] ?? value;
    },
  };
}
